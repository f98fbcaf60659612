/**
 * Real probes on the real kernel (root): every test causes the kernel event it then expects from the exporter.
 * One exporter (all probes, http_traceparent sampling every request, GPU probe on a stand-in libcuda.so.1 built here)
 * is started once for the file: bpftrace takes seconds to attach.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import type { KernelEvent } from '../../../contract';
import { KernelEventList } from '../../../contract';
import { child, has, probeSkipReason, sh, waitForEvents } from './helpers';
import { getJson, waitFor } from './http';

const skip = probeSkipReason();
const here = import.meta.dirname;
const NS = `bx-bpf-${process.pid}`;
const TRACE_ID = randomBytes(16).toString('hex');
const TLS_TRACE_ID = randomBytes(16).toString('hex');
const SPAN_ID = randomBytes(8).toString('hex');

describe('bpf-exporter probes on the real kernel', { skip }, () => {
  let dir = '';
  let exp: Exporter;
  let base = '';
  let gpuSkip: string | undefined;
  let nsSkip: string | undefined;
  const children: Array<{ kill(): boolean }> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-'));
    // The stand-in CUDA driver and a program allocating through it.
    if (has('gcc')) {
      sh('gcc', ['-shared', '-fPIC', '-O1', '-o', join(dir, 'libcuda.so.1'), join(here, 'fake-libcuda.c')]);
      sh('gcc', [
        '-O1',
        '-o',
        join(dir, 'cuda-alloc'),
        join(here, 'cuda-alloc.c'),
        `-L${dir}`,
        '-l:libcuda.so.1',
        `-Wl,-rpath,${dir}`,
      ]);
    } else gpuSkip = 'gcc missing: cannot build the stand-in libcuda.so.1';
    if (!has('ip') || !has('nft') || !has('python3')) nsSkip = 'ip, nft or python3 missing';
    const cfg = loadConfig({
      HOPSCOPE_BPF_PORT: '0',
      HOPSCOPE_BPF_NODE: 'bx-node',
      HOPSCOPE_BPF_PROBES: 'tcp_connect,tcp_retransmit,tls_handshake,gpu_alloc_fail,http_traceparent',
      HOPSCOPE_BPF_TRACEPARENT_SAMPLE: '1',
      HOPSCOPE_BPF_LIBCUDA: join(dir, 'libcuda.so.1'),
      // The test's own processes are not pods: name the files (discovery has its own tests, discovery.test.ts).
      HOPSCOPE_BPF_NODE_BINARY: process.execPath,
      HOPSCOPE_BPF_LIBSSL: '/usr/lib/x86_64-linux-gnu/libssl.so.3',
      // This file checks each probe's per-event evidence; the budget has its own tests (budget.test.ts). With every
      // request sampled, the rest of this shared machine's HTTP traffic can use up the default 200 records/s.
      HOPSCOPE_BPF_EVENT_BUDGET: '100000',
    });
    exp = await startExporter(cfg, pino({ level: 'warn' }));
    base = exp.url;
    await exp.pipeline.settled(60_000);
  });

  after(async () => {
    for (const c of children) c.kill();
    await exp?.stop();
    try {
      sh('ip', ['netns', 'del', NS]);
    } catch {
      /* not created */
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('/health shows every probe attached (GPU on the stand-in library)', async () => {
    const { body } = await getJson<{
      ok: boolean;
      mode: string;
      probes: Array<{ name: string; attached: boolean; reason?: string }>;
    }>(`${base}/health`);
    assert.equal(body.mode, 'live');
    for (const p of body.probes) {
      if (p.name === 'gpu_alloc_fail' && gpuSkip) continue;
      assert.equal(p.attached, true, `${p.name} not attached: ${p.reason}`);
    }
    assert.deepEqual(body.probes.map((p) => p.name).sort(), [
      'gpu_alloc_fail',
      'http_traceparent',
      'tcp_connect',
      'tcp_retransmit',
      'tls_handshake',
    ]);
  });

  test('SYN and data retransmits and connect latency in a namespace with an nftables drop rule, joined to the registered pod', async (t) => {
    if (nsSkip) return t.skip(nsSkip);
    sh('ip', ['netns', 'add', NS]);
    sh('ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
    // Every second SYN to :8080 is dropped (the first one: numgen starts at 0) → exactly one SYN retransmit, ~1 s
    // connect. Every second data segment to :8081 is dropped on input → one data retransmit by the sender.
    sh(
      'ip',
      ['netns', 'exec', NS, 'nft', '-f', '-'],
      `table inet bx-drop {
  chain input { type filter hook input priority 0; policy accept;
    tcp dport 8080 tcp flags & (syn | ack) == syn numgen inc mod 2 == 0 drop
    tcp dport 8081 tcp flags & psh == psh numgen inc mod 2 == 0 drop
  }
}`
    );
    const script = `
import socket, sys, time
a = socket.socket(); a.bind(('127.0.0.1', 8080)); a.listen()
b = socket.socket(); b.bind(('127.0.0.1', 8081)); b.listen()
print('ready', flush=True); sys.stdin.readline()
t = time.time(); c = socket.create_connection(('127.0.0.1', 8080), timeout=5); print('connect %.3f' % (time.time() - t), flush=True)
try:
    socket.create_connection(('127.0.0.1', 8089), timeout=5)
except OSError:
    print('refused', flush=True)
d = socket.create_connection(('127.0.0.1', 8081), timeout=5); s, _ = b.accept(); d.sendall(b'hello'); s.settimeout(5)
print('got', s.recv(10), flush=True)
`;
    const py = child('ip', ['netns', 'exec', NS, 'python3', '-c', script]);
    children.push(py);
    await py.waitLine(/^ready/);
    const pid = py.pid!; // ip netns exec execs: same pid
    const reg = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pid, pod: 'bx-client-0', namespace: 'bx-ns', service: 'bx-client' }),
    });
    assert.equal(reg.status, 201);
    py.stdin!.write('go\n');
    const line = await py.waitLine(/^connect /);
    assert.ok(Number(line.split(' ')[1]) >= 0.9, `connect should take ~1 s with the first SYN dropped: ${line}`);
    await py.waitLine(/^refused/);
    await py.waitLine(/^got/);

    const [connect] = await waitForEvents(base, `pid=${pid}&type=tcp_connect`, (e) => e.detail.dport === 8080);
    assert.equal(connect.pod, 'bx-client-0');
    assert.equal(connect.namespace, 'bx-ns');
    assert.equal(connect.node, 'bx-node');
    assert.equal(connect.mode, 'live');
    assert.equal(connect.comm, 'python3');
    assert.ok(connect.durationMs! >= 900 && connect.durationMs! < 5000, `connect latency ${connect.durationMs} ms`);
    assert.equal(connect.detail.synRetransmits, 1);

    const [fail] = await waitForEvents(base, `pid=${pid}&type=tcp_connect_fail`, (e) => e.detail.dport === 8089);
    assert.equal(fail.detail.result, 'failed');

    // Retransmits fire in softirq/timer context: the pid must come from the socket, not the CPU.
    const rts = await waitForEvents(base, 'type=tcp_retransmit&pod=bx-client-0', () => true, 15_000, 2);
    const syn = rts.find((e) => e.detail.segment === 'syn' && e.detail.dport === 8080);
    const data = rts.find((e) => e.detail.segment === 'data' && e.detail.dport === 8081);
    assert.ok(syn, `SYN retransmit to :8080 expected: ${JSON.stringify(rts)}`);
    assert.ok(data, `data retransmit to :8081 expected: ${JSON.stringify(rts)}`);
    assert.equal(syn.pid, pid);
    assert.equal(data.pid, pid);
    assert.equal(rts.filter((e) => e.detail.segment === 'syn').length, 1, 'exactly one SYN retransmit');
    assert.ok(KernelEventList.safeParse({ events: rts }).success);

    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(
      metrics,
      /hopscope_tcp_retransmits_total\{pod="bx-client-0",namespace="bx-ns",node="bx-node",label_app_kubernetes_io_name="",segment="syn"\} 1/
    );
    assert.match(
      metrics,
      /hopscope_tcp_retransmits_total\{pod="bx-client-0",namespace="bx-ns",node="bx-node",label_app_kubernetes_io_name="",segment="data"\} [1-9]/
    );
    assert.match(
      metrics,
      /hopscope_tcp_connect_seconds_bucket\{le="2",pod="bx-client-0",namespace="bx-ns",node="bx-node",label_app_kubernetes_io_name=""\} 2/
    );
    assert.match(
      metrics,
      /hopscope_tcp_connect_seconds_bucket\{le="0.5",pod="bx-client-0",namespace="bx-ns",node="bx-node",label_app_kubernetes_io_name=""\} 1/
    );
    assert.match(
      metrics,
      /hopscope_tcp_connect_failures_total\{pod="bx-client-0",namespace="bx-ns",node="bx-node",label_app_kubernetes_io_name=""\} 1/
    );

    const del = await fetch(`${base}/register/${pid}`, { method: 'DELETE' });
    assert.equal(del.status, 204);
  });

  test('TLS handshakes of openssl s_server/s_client (libssl.so.3) with role and duration', async (t) => {
    if (!has('openssl')) return t.skip('openssl missing');
    sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ]);
    const port = 20000 + (process.pid % 20000);
    const srv = child('openssl', [
      's_server',
      '-accept',
      `127.0.0.1:${port}`,
      '-cert',
      join(dir, 'cert.pem'),
      '-key',
      join(dir, 'key.pem'),
      '-quiet',
    ]);
    children.push(srv);
    await waitFor('s_server listening', () => sh('ss', ['-ltn']).includes(`127.0.0.1:${port}`) || undefined);
    const cli = child('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-quiet']);
    children.push(cli);
    cli.stdin!.end('hello\n');
    const [client] = await waitForEvents(base, `pid=${cli.pid}&type=tls_handshake`, () => true);
    assert.equal(client.comm, 'openssl');
    assert.equal(client.detail.role, 'client');
    assert.equal(client.detail.result, 'ok');
    assert.equal(client.detail.library, 'libssl.so.3');
    assert.ok(client.durationMs! > 0 && client.durationMs! < 5000, `duration ${client.durationMs}`);
    const [server] = await waitForEvents(base, `pid=${srv.pid}&type=tls_handshake`, () => true);
    assert.equal(server.detail.role, 'server');
  });

  test('TLS handshakes of Node https (TLSWrap info callback), client and server, and the HTTPS traceparent', async (t) => {
    if (!has('openssl')) return t.skip('openssl missing (certificate)');
    const script = `
const https = require('node:https'); const fs = require('node:fs');
const srv = https.createServer({ key: fs.readFileSync(${JSON.stringify(join(dir, 'key.pem'))}), cert: fs.readFileSync(${JSON.stringify(join(dir, 'cert.pem'))}) }, (q, r) => r.end('ok'));
srv.listen(0, '127.0.0.1', () => https.get({ host: '127.0.0.1', port: srv.address().port, rejectUnauthorized: false, agent: false, headers: { traceparent: '00-${TLS_TRACE_ID}-${SPAN_ID}-01' } }, (r) => { r.resume(); r.on('end', () => { console.log('done'); srv.close(); }); }));
`;
    const node = child(process.execPath, ['-e', script]);
    children.push(node);
    await node.waitLine(/^done/);
    const events = await waitForEvents(base, `pid=${node.pid}&type=tls_handshake`, () => true, 15_000, 2);
    assert.deepEqual(events.map((e) => e.detail.role).sort(), ['client', 'server']);
    for (const e of events) {
      assert.equal(e.detail.library, 'node');
      assert.equal(e.detail.result, 'ok');
      assert.ok(e.durationMs! > 0 && e.durationMs! < 5000);
    }
    // The HTTPS request's traceparent, read before encryption from Node's SSL_write, deduplicated to one event.
    const tps = await waitForEvents(
      base,
      `traceId=${TLS_TRACE_ID}&type=http_traceparent&pid=${node.pid}`,
      (e) => e.detail.direction === 'outgoing'
    );
    assert.equal(tps.length, 1);
    assert.equal(tps[0].detail.syscall, 'ssl_write');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /hopscope_tls_handshake_seconds_count\{[^}]*role="client",result="ok"\} [1-9]/);
  });

  test("a slow TLS handshake (delayed SNICallback, the mechanism of the chain's tls_slow_handshake fault) is measured as slow", async (t) => {
    if (!has('openssl')) return t.skip('openssl missing (certificate)');
    const script = `
const https = require('node:https'); const tls = require('node:tls'); const fs = require('node:fs');
const secure = tls.createSecureContext({ key: fs.readFileSync(${JSON.stringify(join(dir, 'key.pem'))}), cert: fs.readFileSync(${JSON.stringify(join(dir, 'cert.pem'))}) });
const srv = https.createServer({ SNICallback: (name, cb) => setTimeout(() => cb(null, secure), 400) }, (q, r) => r.end('ok'));
srv.listen(0, '127.0.0.1', () => https.get({ host: '127.0.0.1', port: srv.address().port, servername: 'rag.hopscope.local', rejectUnauthorized: false, agent: false }, (r) => { r.resume(); r.on('end', () => { console.log('done'); srv.close(); }); }));
`;
    const node = child(process.execPath, ['-e', script]);
    children.push(node);
    await node.waitLine(/^done/);
    const events = await waitForEvents(base, `pid=${node.pid}&type=tls_handshake`, () => true, 15_000, 2);
    for (const e of events)
      assert.ok(
        e.durationMs! >= 390 && e.durationMs! < 5000,
        `${e.detail.role} handshake ${e.durationMs} ms, expected ≥ 400`
      );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /hopscope_tls_handshake_seconds_bucket\{le="0.25"[^}]*role="server",result="ok"\} (\d+)/);
  });

  test('a failed CUDA allocation through the stand-in libcuda.so.1, also streamed over SSE', async (t) => {
    if (gpuSkip) return t.skip(gpuSkip);
    const ac = new AbortController();
    const stream = await fetch(`${base}/events/stream?type=gpu_alloc_fail`, { signal: ac.signal });
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    const reader = stream.body!.getReader();
    let sse = '';
    const gotSse = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        sse += Buffer.from(value).toString();
        if (sse.includes('event: kernel')) return;
      }
    })();
    const prog = child(join(dir, 'cuda-alloc'), [String(1 << 20), String(2 ** 40)]);
    children.push(prog);
    await prog.waitLine(/^ready/);
    prog.stdin!.write('go\n');
    await prog.waitLine(/^alloc 1099511627776 -> 2/);
    const events = await waitForEvents(base, `pid=${prog.pid}&type=gpu_alloc_fail`, () => true);
    assert.equal(events.length, 1, 'only the failing allocation is an event');
    assert.equal(events[0].detail.function, 'cuMemAlloc_v2');
    assert.equal(events[0].detail.error, 'CUDA_ERROR_OUT_OF_MEMORY');
    assert.equal(events[0].detail.bytes, 2 ** 40);
    await Promise.race([
      gotSse,
      new Promise((_, rej) => setTimeout(() => rej(new Error(`no SSE event: ${sse}`)), 10_000)),
    ]);
    ac.abort();
    const streamed = JSON.parse(/event: kernel\ndata: (.*)\n/.exec(sse)![1]) as KernelEvent;
    assert.equal(streamed.pid, prog.pid);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /hopscope_gpu_alloc_failures_total\{[^}]*error="CUDA_ERROR_OUT_OF_MEMORY"\} 1/);
  });

  test("traceparent of an HTTP request, outgoing and incoming, and the join of that pid's connect to the trace", async () => {
    const tp = `00-${TRACE_ID}-${SPAN_ID}-01`;
    const script = `
const http = require('node:http');
const srv = http.createServer((q, r) => { q.resume(); q.on('end', () => r.end('ok')); });
srv.listen(0, '127.0.0.1', () => {
  const q = http.request({ host: '127.0.0.1', port: srv.address().port, method: 'POST', path: '/v1/bx', headers: { traceparent: '${tp}' } },
    (r) => { r.resume(); r.on('end', () => { console.log('done'); srv.close(); }); });
  q.end('{}');
});`;
    const node = child(process.execPath, ['-e', script]);
    children.push(node);
    await node.waitLine(/^done/);
    const events = await waitForEvents(base, `traceId=${TRACE_ID}&type=http_traceparent`, () => true, 15_000, 2);
    assert.deepEqual(events.map((e) => e.detail.direction).sort(), ['incoming', 'outgoing']);
    for (const e of events) {
      assert.equal(e.pid, node.pid);
      assert.equal(e.detail.spanId, SPAN_ID);
      assert.equal(e.detail.path, '/v1/bx');
    }
    const [connect] = await waitForEvents(base, `pid=${node.pid}&type=tcp_connect`, () => true);
    assert.equal(connect.traceId, TRACE_ID, 'the connect just before the request joins its trace');
  });

  test('a process that names itself like a record field (quotes, backslash, newline) gets its real pid and exact name', async (t) => {
    if (!has('python3')) return t.skip('python3 missing');
    // The spoof from issue 13: a JSON record built in printf would read this name as a second "pid" field.
    const names = ['","pid":1,"":"', 'x\\"}\n{"pid":1,'];
    const script = `
import ctypes, json, socket, sys
names = json.loads(sys.argv[1])
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(8)
print('ready', srv.getsockname()[1], flush=True); sys.stdin.readline()
for n in names:
    ctypes.CDLL(None).prctl(15, n.encode(), 0, 0, 0)
    socket.create_connection(srv.getsockname()).close()
print('done', flush=True)
`;
    const py = child('python3', ['-c', script, JSON.stringify(names)]);
    children.push(py);
    const port = Number((await py.waitLine(/^ready/)).split(' ')[1]);
    py.stdin!.write('go\n');
    await py.waitLine(/^done/);
    const events = await waitForEvents(base, `type=tcp_connect`, (e) => e.detail.dport === port, 15_000, 2);
    assert.deepEqual(
      events.map((e) => e.pid),
      [py.pid, py.pid],
      'the real pid, not 1'
    );
    assert.deepEqual(
      events.map((e) => e.comm),
      names,
      'the exact name, byte for byte (15 bytes kept: TASK_COMM_LEN)'
    );
    const { body } = await getJson<{ events: KernelEvent[] }>(`${base}/events?pid=1&type=tcp_connect`);
    assert.equal(body.events.filter((e) => e.detail.dport === port).length, 0, 'nothing attributed to pid 1');
  });

  test('a bpftrace child that dies is restarted with backoff and shows in /health', async () => {
    const runner = exp.pipeline.runners.find((r) => r.probe.name === 'tcp_connect')!;
    const before = runner.status.restarts;
    assert.ok(runner.killChild('SIGKILL'));
    const restarting = await waitFor('restart recorded', async () => {
      const { body } = await getJson<{
        probes: Array<{ name: string; state: string; restarts: number; reason?: string }>;
      }>(`${base}/health`);
      const p = body.probes.find((x) => x.name === 'tcp_connect')!;
      return p.restarts > before ? p : undefined;
    });
    assert.match(restarting.reason ?? '', /bpftrace exited \(SIGKILL\)/);
    await waitFor(
      're-attached',
      async () => {
        const { body } = await getJson<{ probes: Array<{ name: string; attached: boolean }> }>(`${base}/health`);
        return body.probes.find((x) => x.name === 'tcp_connect')!.attached || undefined;
      },
      30_000
    );
  });

  test('a library without the symbols, or missing, is refused with why; the rest still run', async () => {
    const { body } = await getJson<{
      probes: Array<{
        name: string;
        uprobes?: { attached: Array<{ path: string; source: string; symbols: string[] }> };
      }>;
    }>(`${base}/health`);
    assert.ok(body.probes.length === 5);
    const gpu = body.probes.find((p) => p.name === 'gpu_alloc_fail')!;
    if (!gpuSkip)
      assert.deepEqual(
        gpu.uprobes?.attached.map((f) => [f.path, f.source, f.symbols.sort()]),
        [[join(dir, 'libcuda.so.1'), 'explicit', ['cuMemAllocHost_v2', 'cuMemAllocManaged', 'cuMemAlloc_v2']]]
      );
    // Checked without a second exporter: the symbol listing the runner uses.
    const { exportedSymbols } = await import('../../../bpf-exporter/src/core/preflight');
    assert.equal((await exportedSymbols('bpftrace', join(dir, 'nope.so'), ['cuMemAlloc_v2'])).size, 0);
    assert.equal(
      (await exportedSymbols('bpftrace', process.execPath, ['cuMemAlloc_v2', 'SSL_write'])).has('SSL_write'),
      true
    );
  });
});
