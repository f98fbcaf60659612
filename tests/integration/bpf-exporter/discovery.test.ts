/**
 * Uprobes on the files the workloads run, found with no configuration (root, real kernel): a process the test starts
 * loads the stand-in libcuda.so.1 (fake-libcuda.c, through cuda-alloc.c), registers its pid, and the exporter finds the
 * library in /proc/<pid>/maps, attaches to it and reports the failed allocation; a second copy of the library visible
 * only inside a private mount namespace (as a container's is) is reached through /proc/<pid>/root; two processes
 * mapping one file make one attach; a registered Node process brings its node binary to the TLS probe. Until then
 * the probes wait and say why.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { child, has, probeSkipReason, sh, waitForEvents } from './helpers';
import { getJson, waitFor } from './http';

const skip = probeSkipReason() ?? (has('gcc') ? undefined : 'gcc missing: cannot build the stand-in libcuda.so.1');
const here = import.meta.dirname;

interface Health {
  probes: Array<{
    name: string;
    state: string;
    attached: boolean;
    code?: string;
    reason?: string;
    reloads: number;
    uprobes?: {
      attached: Array<{
        file: string;
        path: string;
        mappedPath: string;
        source: string;
        pids: number[];
        processes: number;
      }>;
      refused: Array<{ path: string; reason: string }>;
    };
  }>;
}

describe('bpf-exporter: uprobes on the files the workloads run', { skip }, () => {
  let dir = '';
  let exp: Exporter;
  const children: Array<{ kill(): boolean }> = [];
  const probe = async (name: string): Promise<Health['probes'][number]> =>
    (await getJson<Health>(`${exp.url}/health`)).body.probes.find((p) => p.name === name)!;
  const register = async (pid: number, pod: string): Promise<void> => {
    const r = await fetch(`${exp.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pid, pod, namespace: 'bx-ns' }),
    });
    assert.equal(r.status, 201);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-disc-'));
    const lib = join(dir, 'lib');
    const nsLib = join(dir, 'ns-lib');
    mkdirSync(lib);
    mkdirSync(nsLib);
    sh('gcc', ['-shared', '-fPIC', '-O1', '-o', join(lib, 'libcuda.so.1'), join(here, 'fake-libcuda.c')]);
    sh('gcc', [
      '-O1',
      '-o',
      join(dir, 'cuda-alloc'),
      join(here, 'cuda-alloc.c'),
      `-L${lib}`,
      '-l:libcuda.so.1',
      `-Wl,-rpath,${lib}`,
    ]);
    // A second program that looks for libcuda in a directory empty here: only a mount namespace fills it.
    sh('gcc', [
      '-O1',
      '-o',
      join(dir, 'cuda-alloc-ns'),
      join(here, 'cuda-alloc.c'),
      `-L${lib}`,
      '-l:libcuda.so.1',
      `-Wl,-rpath,${nsLib}`,
    ]);
    mkdirSync(join(dir, 'container-root'));
    copyFileSync(join(lib, 'libcuda.so.1'), join(dir, 'container-root', 'libcuda.so.1'));
    exp = await startExporter(
      loadConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_NODE: 'bx-node',
        HOPSCOPE_BPF_PROBES: 'gpu_alloc_fail,tls_handshake',
        HOPSCOPE_BPF_SCAN_MS: '1000',
        HOPSCOPE_BPF_EVENT_BUDGET: '100000',
      }),
      pino({ level: 'warn' })
    );
    await exp.pipeline.settled(60_000);
  });

  after(async () => {
    for (const c of children) c.kill();
    await exp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('with no workload mapping a libcuda, the GPU probe waits and says why (and /health stays ok)', async () => {
    const gpu = await probe('gpu_alloc_fail');
    assert.equal(gpu.state, 'waiting');
    assert.equal(gpu.code, 'no_targets');
    assert.match(gpu.reason ?? '', /no libcuda file to attach to yet/);
    const { body } = await getJson<{ ok: boolean }>(`${exp.url}/health`);
    assert.equal(body.ok, true, 'waiting for a workload is not a fault');
  });

  test('a registered process that loads the stand-in libcuda.so.1: found in its maps, attached, its failure reported', async () => {
    const prog = child(join(dir, 'cuda-alloc'), [String(2 ** 40)]);
    children.push(prog);
    await prog.waitLine(/^ready/);
    await register(prog.pid!, 'llm-vllm-0');
    const gpu = await waitFor(
      'gpu_alloc_fail attached to the discovered library',
      async () => {
        const p = await probe('gpu_alloc_fail');
        return p.attached ? p : undefined;
      },
      30_000
    );
    const [file] = gpu.uprobes!.attached;
    assert.deepEqual(
      [file.path, file.source, file.pids],
      [join(dir, 'lib', 'libcuda.so.1'), 'discovered', [prog.pid!]],
      'the host path: the same file'
    );
    prog.stdin!.write('go\n');
    await prog.waitLine(/-> 2$/);
    const [e] = await waitForEvents(exp.url, `pid=${prog.pid}&type=gpu_alloc_fail`, () => true, 15_000);
    assert.equal(e.pod, 'llm-vllm-0');
    assert.equal(e.detail.error, 'CUDA_ERROR_OUT_OF_MEMORY');
    assert.equal(e.comm, 'cuda-alloc');
  });

  test("a second process mapping the same file: the same attach, counted; a container's copy through /proc/<pid>/root", async (t) => {
    if (!has('unshare')) return t.skip('unshare missing');
    const twin = child(join(dir, 'cuda-alloc'), [String(2 ** 40)]);
    children.push(twin);
    await twin.waitLine(/^ready/);
    // A private mount namespace where ns-lib holds another copy of the library (another inode), as a container would.
    const script = `mount --bind ${join(dir, 'container-root')} ${join(dir, 'ns-lib')} && exec ${join(dir, 'cuda-alloc-ns')} ${2 ** 40}`;
    const boxed = child('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script]);
    children.push(boxed);
    await boxed.waitLine(/^ready/);
    const reloadsBefore = (await probe('gpu_alloc_fail')).reloads;
    await register(twin.pid!, 'llm-vllm-1');
    await register(boxed.pid!, 'llm-tgi-0');
    const gpu = await waitFor(
      'two libcuda files attached',
      async () => {
        const p = await probe('gpu_alloc_fail');
        return p.attached && p.uprobes!.attached.length === 2 ? p : undefined;
      },
      30_000
    );
    assert.ok(gpu.reloads > reloadsBefore, 'the new file reloaded the program');
    const host = gpu.uprobes!.attached.find((f) => f.path === join(dir, 'lib', 'libcuda.so.1'))!;
    assert.equal(host.processes, 2, 'one file, two processes: one attach');
    const boxedFile = gpu.uprobes!.attached.find((f) => f !== host)!;
    assert.equal(boxedFile.mappedPath, join(dir, 'ns-lib', 'libcuda.so.1'));
    assert.equal(
      boxedFile.path,
      `/proc/${boxed.pid}/root${join(dir, 'ns-lib', 'libcuda.so.1')}`,
      "reached through the process's root"
    );
    boxed.stdin!.write('go\n');
    await boxed.waitLine(/-> 2$/);
    const [e] = await waitForEvents(exp.url, `pid=${boxed.pid}&type=gpu_alloc_fail`, () => true, 15_000);
    assert.equal(e.pod, 'llm-tgi-0');
  });

  test('a registered Node process brings its node binary to the TLS probe, and its handshakes are seen', async (t) => {
    if (!has('openssl')) return t.skip('openssl missing (certificate)');
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
    const script = `
const https = require('node:https'); const fs = require('node:fs');
const srv = https.createServer({ key: fs.readFileSync(${JSON.stringify(join(dir, 'key.pem'))}), cert: fs.readFileSync(${JSON.stringify(join(dir, 'cert.pem'))}) }, (q, r) => r.end('ok'));
srv.listen(0, '127.0.0.1', () => {
  console.log('ready');
  process.stdin.once('data', () => https.get({ host: '127.0.0.1', port: srv.address().port, rejectUnauthorized: false, agent: false }, (r) => { r.resume(); r.on('end', () => { console.log('done'); srv.close(); process.stdin.destroy(); }); }));
});`;
    const node = child(process.execPath, ['-e', script]);
    children.push(node);
    await node.waitLine(/^ready/);
    await register(node.pid!, 'gateway-0');
    const tls = await waitFor(
      'tls_handshake attached to the node binary',
      async () => {
        const p = await probe('tls_handshake');
        return p.attached && p.uprobes!.attached.some((f) => f.file === 'node') ? p : undefined;
      },
      30_000
    );
    const nodeFile = tls.uprobes!.attached.find((f) => f.file === 'node')!;
    assert.equal(nodeFile.source, 'discovered');
    assert.ok(nodeFile.pids.includes(node.pid!));
    node.stdin!.write('go\n');
    await node.waitLine(/^done/);
    const events = await waitForEvents(exp.url, `pid=${node.pid}&type=tls_handshake`, () => true, 15_000, 2);
    const after = await probe('tls_handshake');
    assert.deepEqual(
      events.map((e) => e.detail.role).sort(),
      ['client', 'server'],
      `reloads ${tls.reloads} → ${after.reloads}: ${JSON.stringify(events)}`
    );
    assert.ok(events.every((e) => e.pod === 'gateway-0'));
  });
});
