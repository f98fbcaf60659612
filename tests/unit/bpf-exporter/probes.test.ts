/** Probe modules on recorded bpftrace lines: parsing, and program text that names only what exists. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { Kit } from '../../../bpf-exporter/src/core/kit';
import { podLabelSet } from '../../../bpf-exporter/src/core/pod-labels';
import { unsafePathReason } from '../../../bpf-exporter/src/core/probe-path';
import type { ProbeModule, ProbeOptions } from '../../../bpf-exporter/src/core/probe';
import { ALL_PROBES, DEFAULT_PROBES } from '../../../bpf-exporter/src/probes';
import { gpuAllocFailProbe, isLibcuda } from '../../../bpf-exporter/src/probes/gpu-alloc-fail';
import { GPU_MEMORY_STEP_BYTES, gpuMemoryHeldProbe } from '../../../bpf-exporter/src/probes/gpu-memory-held';
import { httpTraceparentProbe } from '../../../bpf-exporter/src/probes/http-traceparent';
import { tcpConnectProbe } from '../../../bpf-exporter/src/probes/tcp-connect';
import { tcpRetransmitProbe } from '../../../bpf-exporter/src/probes/tcp-retransmit';
import { isLibssl3, isNodeBinary, tlsHandshakeProbe } from '../../../bpf-exporter/src/probes/tls-handshake';

const opts: ProbeOptions = { traceparentSampleEvery: 10, selfPid: 4242 };
const kit = (p: ProbeModule): Kit => new Kit(p.tallies ?? [], { budget: 200, flushMs: 1000 });

test('tcp_connect: established and failed connects', () => {
  const ok = tcpConnectProbe.parse(
    '{"ok":1,"t":123000000,"pid":9,"d":1002000000,"cg":55,"net":4026531833,"syn_rt":1,"sp":40000,"dp":8080,"sa":"10.0.0.1","da":"10.0.0.2"}'
  )!;
  assert.equal(ok.type, 'tcp_connect');
  assert.equal(ok.durationMs, 1002);
  assert.equal(ok.nsecs, 123000000n);
  assert.deepEqual(ok.detail, {
    saddr: '10.0.0.1',
    sport: 40000,
    daddr: '10.0.0.2',
    dport: 8080,
    netns: 4026531833,
    synRetransmits: 1,
    result: 'established',
  });
  assert.equal(
    tcpConnectProbe.parse('{"ok":0,"t":1,"pid":9,"d":5,"cg":1,"net":1,"syn_rt":0,"sp":1,"dp":2,"sa":"a","da":"b"}')!
      .type,
    'tcp_connect_fail'
  );
  assert.throws(() => tcpConnectProbe.parse('{not json'));
});

test('tcp_retransmit: SYN vs data, socket-owner pid vs cgroup only', () => {
  const syn = tcpRetransmitProbe.parse('{"t":1,"pid":0,"cg":77,"net":1,"st":2,"sa":"a","sp":1,"da":"b","dp":2}')!;
  assert.equal(syn.detail.segment, 'syn');
  assert.equal(syn.detail.owner, 'socket_cgroup');
  assert.equal(syn.cgroupId, 77);
  const data = tcpRetransmitProbe.parse('{"t":1,"pid":5,"cg":77,"net":1,"st":1,"sa":"a","sp":1,"da":"b","dp":2}')!;
  assert.equal(data.detail.segment, 'data');
  assert.equal(data.detail.state, 'ESTABLISHED');
});

test("tls_handshake: role, result, library; one section per file it is given, the exporter's own handshakes skipped", () => {
  const e = tlsHandshakeProbe.parse('{"lib":"node","t":1,"pid":3,"cg":1,"d":3700000,"role":2,"ok":1}')!;
  assert.deepEqual([e.durationMs, e.detail.role, e.detail.result, e.detail.library], [3.7, 'server', 'ok', 'node']);
  assert.equal(
    tlsHandshakeProbe.parse('{"lib":"libssl","t":1,"pid":3,"cg":1,"d":1,"role":1,"ok":0}')!.detail.result,
    'aborted'
  );
  const nodeOnly = tlsHandshakeProbe.program(
    opts,
    [{ file: 'node', path: '/proc/77/root/usr/local/bin/node', symbols: [] }],
    kit(tlsHandshakeProbe)
  );
  assert.match(
    nodeOnly,
    /uprobe:"\/proc\/77\/root\/usr\/local\/bin\/node":_ZN4node6crypto7TLSWrap15SSLInfoCallbackEPK6ssl_stii\n\/pid != 4242\//
  );
  assert.doesNotMatch(nodeOnly, /SSL_in_init/, 'no libssl section without a libssl file');
  const two = tlsHandshakeProbe.program(
    opts,
    [
      { file: 'libssl', path: '/usr/lib/a/libssl.so.3', symbols: [] },
      { file: 'libssl', path: '/proc/9/root/usr/lib/libssl.so.3', symbols: [] },
    ],
    kit(tlsHandshakeProbe)
  );
  assert.match(two, /uretprobe:"\/usr\/lib\/a\/libssl\.so\.3":SSL_in_init/);
  assert.match(two, /uretprobe:"\/proc\/9\/root\/usr\/lib\/libssl\.so\.3":SSL_in_init/);
  assert.match(two, /@lhs1\[/, 'per-file maps');
  assert.doesNotMatch(two, /TLSWrap/);
});

test('uprobe file kinds recognise the files the workloads map', () => {
  assert.deepEqual(['node', 'nodejs', 'node20', 'node-gyp', 'nodemon'].map(isNodeBinary), [
    true,
    true,
    true,
    false,
    false,
  ]);
  assert.deepEqual(['libssl.so.3', 'libssl.so.1.1', 'libssl.so'].map(isLibssl3), [true, false, false]);
  assert.deepEqual(['libcuda.so.1', 'libcuda.so.535.104.05', 'libcuda.so', 'libcudart.so.12'].map(isLibcuda), [
    true,
    true,
    true,
    false,
  ]);
});

test('gpu_alloc_fail: attaches each library with only the symbols it exports; CUresult named', () => {
  const prog = gpuAllocFailProbe.program(
    opts,
    [
      { file: 'libcuda', path: '/opt/cuda/libcuda.so.1', symbols: ['cuMemAlloc_v2', 'cuMemAllocManaged'] },
      {
        file: 'libcuda',
        path: '/proc/12/root/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05',
        symbols: ['cuMemAlloc_v2'],
      },
    ],
    kit(gpuAllocFailProbe)
  );
  assert.match(prog, /uretprobe:"\/opt\/cuda\/libcuda\.so\.1":cuMemAlloc_v2/);
  assert.match(
    prog,
    /uretprobe:"\/proc\/12\/root\/usr\/lib\/x86_64-linux-gnu\/libcuda\.so\.535\.104\.05":cuMemAlloc_v2/
  );
  assert.doesNotMatch(prog, /libcuda\.so\.535\.104\.05":cuMemAllocManaged/);
  assert.doesNotMatch(prog, /cuMemCreate/);
  const e = gpuAllocFailProbe.parse(
    '{"t":1,"pid":8,"cg":1,"ret":2,"size":1099511627776,"fn":"uretprobe:/opt/cuda/libcuda.so.1:cuMemAlloc_v2"}'
  )!;
  assert.deepEqual(e.detail, {
    function: 'cuMemAlloc_v2',
    result: 2,
    error: 'CUDA_ERROR_OUT_OF_MEMORY',
    bytes: 1099511627776,
  });
});

test('gpu_memory_held: allocations (uprobe + uretprobe) and frees (uprobe) of what each library exports; a record per step moved', async () => {
  const prog = gpuMemoryHeldProbe.program(
    opts,
    [
      {
        file: 'libcuda',
        path: '/opt/cuda/libcuda.so.1',
        symbols: ['cuMemAlloc_v2', 'cuMemAllocAsync', 'cuMemFree_v2'],
      },
      { file: 'libcuda', path: '/proc/12/root/lib/libcuda.so.1', symbols: ['cuMemAlloc_v2', 'cuMemFree_v2'] },
    ],
    kit(gpuMemoryHeldProbe)
  );
  for (const p of ['uprobe', 'uretprobe'])
    assert.match(prog, new RegExp(`${p}:"/opt/cuda/libcuda\\.so\\.1":cuMemAllocAsync`));
  assert.match(prog, /uprobe:"\/proc\/12\/root\/lib\/libcuda\.so\.1":cuMemFree_v2/);
  assert.doesNotMatch(prog, /uretprobe:[^\n]*cuMemFree/, 'a free needs no return probe');
  assert.doesNotMatch(prog, /root\/lib\/libcuda\.so\.1":cuMemAllocAsync/);
  assert.match(prog, /\*\(uint64 \*\)uptr\(\$p\)/, "the pointer is read from the caller's memory");
  assert.match(prog, new RegExp(`\\$held >= \\$mark \\+ ${GPU_MEMORY_STEP_BYTES}`));
  assert.match(prog, /if \(\$moved\) \{\n/, 'records only when held moved a step');
  // Only frees exported (odd, but anyOf allows it): no allocation section, still a valid shape.
  const freesOnly = gpuMemoryHeldProbe.program(
    opts,
    [{ file: 'libcuda', path: '/l/libcuda.so.1', symbols: ['cuMemFree_v2'] }],
    kit(gpuMemoryHeldProbe)
  );
  assert.doesNotMatch(freesOnly, /uretprobe/);

  // Recorded from bpftrace 0.17 on the stand-in library (leak of 16 MiB allocations).
  const e = gpuMemoryHeldProbe.parse(
    '{"t":55,"pid":6289,"cg":1,"op":0,"size":16777216,"held":6979321856,"from":0,"over_ns":90250000000,"allocs":417,"frees":0,"fn":"uretprobe:/w/libcuda.so.1:cuMemAlloc_v2"}'
  )!;
  assert.equal(e.type, 'gpu_memory_held');
  assert.equal(e.nsecs, 55n);
  assert.deepEqual(e.detail, {
    function: 'cuMemAlloc_v2',
    op: 'alloc',
    bytes: 16777216,
    heldBytes: 6979321856,
    grewBytes: 6979321856,
    overMs: 90250,
    allocs: 417,
    frees: 0,
  });
  assert.deepEqual(e.tally, { name: 'mem', dims: [0], valueNs: 16777216 });
  const f = gpuMemoryHeldProbe.parse(
    '{"t":56,"pid":6289,"cg":1,"op":1,"size":16777216,"held":100,"from":100,"over_ns":1000,"allocs":0,"frees":3,"fn":"uprobe:/w/libcuda.so.1:cuMemFree_v2"}'
  )!;
  assert.deepEqual([f.detail.op, f.detail.grewBytes, f.tally?.dims], ['free', 0, [1]]);
  assert.throws(() => gpuMemoryHeldProbe.parse('{"t":'));

  // Metrics: held = allocated − freed per pod, from the kernel's exact sums.
  const reg = new Registry();
  const pod = podLabelSet([]);
  const m = gpuMemoryHeldProbe.metrics(reg, pod);
  const labels = pod.values('llm-vllm-1', 'chain', 'n1', {});
  m.add!('mem', [0, 0], 40, 40 * 2 ** 24, labels);
  m.add!('mem', [1, 0], 10, 10 * 2 ** 24, labels);
  const text = await reg.metrics();
  assert.match(text, /hopscope_gpu_memory_held_bytes\{pod="llm-vllm-1",namespace="chain",node="n1"\} 503316480\n/);
  assert.match(
    text,
    /hopscope_gpu_memory_calls_total\{pod="llm-vllm-1",namespace="chain",node="n1",call="free"\} 10\n/
  );
  assert.match(
    text,
    /hopscope_gpu_memory_bytes_total\{pod="llm-vllm-1",namespace="chain",node="n1",call="alloc"\} 671088640\n/
  );
});

test('http_traceparent: trace id from request headers, no event without one, duplicates folded', () => {
  const tp = '0af7651916cd43dd8448eb211c80319c';
  const line = `out|writev|99|12|1|POST /v1/chat HTTP/1.1\r\nhost: x\r\ntraceparent: 00-${tp}-b7ad6b7169203331-01\r\n\r\n`;
  const e = httpTraceparentProbe.parse(line)!;
  assert.equal(e.traceId, tp);
  assert.deepEqual(
    [e.detail.direction, e.detail.method, e.detail.path, e.detail.spanId, e.detail.sampled],
    ['outgoing', 'POST', '/v1/chat', 'b7ad6b7169203331', true]
  );
  assert.equal(httpTraceparentProbe.parse(line), null, 'same request seen twice (write + SSL_write) → one event');
  assert.equal(httpTraceparentProbe.parse('in|read|1|12|1|GET / HTTP/1.1\r\nhost: x\r\n\r\n'), null);
  assert.equal(
    httpTraceparentProbe.parse(
      `in|read|1|12|1|GET / HTTP/1.1\r\ntraceparent: 00-${'0'.repeat(32)}-b7ad6b7169203331-01\r\n`
    ),
    null
  );
  const prog = httpTraceparentProbe.program(opts, [], kit(httpTraceparentProbe));
  assert.match(prog, /rand % 10 == 0/);
  assert.match(prog, /pid != 4242/);
  assert.doesNotMatch(prog, /SSL_write/, 'no node file: plaintext syscalls only');
  assert.match(
    httpTraceparentProbe.program(
      opts,
      [{ file: 'node', path: '/usr/bin/node', symbols: ['SSL_write'] }],
      kit(httpTraceparentProbe)
    ),
    /uprobe:"\/usr\/bin\/node":SSL_write/
  );
});

test('every probe: unique name, metrics register with the pod and workload labels, opt-in ones not default', async () => {
  assert.equal(new Set(ALL_PROBES.map((p) => p.name)).size, ALL_PROBES.length);
  assert.ok(!DEFAULT_PROBES.includes('http_traceparent'));
  const reg = new Registry();
  const pod = podLabelSet(['app.kubernetes.io/name']);
  const m = ALL_PROBES.map((p) => p.metrics(reg, pod));
  m[1].add!('rt', [1], 3, 0, pod.values('rag-0', 'chain', 'n1', { 'app.kubernetes.io/name': 'rag' }));
  assert.match(
    await reg.metrics(),
    /hopscope_tcp_retransmits_total\{pod="rag-0",namespace="chain",node="n1",label_app_kubernetes_io_name="rag",segment="syn"\} 3/
  );
  const names = reg.getMetricsAsArray().map((m) => m.name);
  for (const n of [
    'hopscope_tcp_retransmits_total',
    'hopscope_tcp_connect_seconds',
    'hopscope_tcp_connect_failures_total',
    'hopscope_tls_handshake_seconds',
    'hopscope_gpu_alloc_failures_total',
  ]) {
    assert.ok(names.includes(n), n);
  }
});

test('paths go into programs quoted, and a path outside the allowed characters is refused (never written into one)', () => {
  for (const evil of [
    '/tmp/x:SSL_free { system("id") } uprobe:/usr/lib/libssl.so.3',
    '/tmp/a"b/libssl.so.3',
    '/tmp/a b/libssl.so.3',
    '/tmp/*/libssl.so.3',
    '/tmp/a\nb/libssl.so.3',
    'relative/libssl.so.3',
  ]) {
    assert.ok(unsafePathReason(evil), evil);
    assert.throws(
      () => tlsHandshakeProbe.program(opts, [{ file: 'libssl', path: evil, symbols: [] }], kit(tlsHandshakeProbe)),
      /refusing to put/
    );
  }
  assert.equal(unsafePathReason('/proc/12/root/usr/lib/x86_64-linux-gnu/libssl.so.3'), undefined);
  assert.equal(unsafePathReason('/opt/app+1/node_modules/@scope/lib~2/node20'), undefined);
});
