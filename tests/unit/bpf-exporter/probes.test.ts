/** Probe modules on recorded bpftrace lines: parsing, and program text that names only what exists. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { Kit } from '../../../bpf-exporter/src/core/kit';
import type { ProbeModule, ProbeOptions } from '../../../bpf-exporter/src/core/probe';
import { ALL_PROBES, DEFAULT_PROBES } from '../../../bpf-exporter/src/probes';
import { gpuAllocFailProbe } from '../../../bpf-exporter/src/probes/gpu-alloc-fail';
import { httpTraceparentProbe } from '../../../bpf-exporter/src/probes/http-traceparent';
import { tcpConnectProbe } from '../../../bpf-exporter/src/probes/tcp-connect';
import { tcpRetransmitProbe } from '../../../bpf-exporter/src/probes/tcp-retransmit';
import { tlsHandshakeProbe } from '../../../bpf-exporter/src/probes/tls-handshake';

const opts: ProbeOptions = { nodeBinary: '/usr/bin/node', libssl: ['/nonexistent/libssl.so.3'], libcuda: '/opt/cuda/libcuda.so.1', traceparentSampleEvery: 10, selfPid: 4242 };
const kit = (p: ProbeModule): Kit => new Kit(p.tallies ?? [], { budget: 200, flushMs: 1000 });

test('tcp_connect: established and failed connects', () => {
  const ok = tcpConnectProbe.parse('{"ok":1,"t":123000000,"pid":9,"comm":"curl","d":1002000000,"cg":55,"net":4026531833,"syn_rt":1,"sp":40000,"dp":8080,"sa":"10.0.0.1","da":"10.0.0.2"}')!;
  assert.equal(ok.type, 'tcp_connect');
  assert.equal(ok.durationMs, 1002);
  assert.equal(ok.nsecs, 123000000n);
  assert.deepEqual(ok.detail, { saddr: '10.0.0.1', sport: 40000, daddr: '10.0.0.2', dport: 8080, netns: 4026531833, synRetransmits: 1, result: 'established' });
  assert.equal(tcpConnectProbe.parse('{"ok":0,"t":1,"pid":9,"comm":"curl","d":5,"cg":1,"net":1,"syn_rt":0,"sp":1,"dp":2,"sa":"a","da":"b"}')!.type, 'tcp_connect_fail');
  assert.throws(() => tcpConnectProbe.parse('{not json'));
});

test('tcp_retransmit: SYN vs data, socket-owner pid vs cgroup only', () => {
  const syn = tcpRetransmitProbe.parse('{"t":1,"pid":0,"comm":"","cg":77,"net":1,"st":2,"sa":"a","sp":1,"da":"b","dp":2}')!;
  assert.equal(syn.detail.segment, 'syn');
  assert.equal(syn.detail.owner, 'socket_cgroup');
  assert.equal(syn.cgroupId, 77);
  const data = tcpRetransmitProbe.parse('{"t":1,"pid":5,"comm":"node","cg":77,"net":1,"st":1,"sa":"a","sp":1,"da":"b","dp":2}')!;
  assert.equal(data.detail.segment, 'data');
  assert.equal(data.detail.state, 'ESTABLISHED');
});

test('tls_handshake: role, result, library; libssl sections only for libraries that exist', () => {
  const e = tlsHandshakeProbe.parse('{"lib":"node","t":1,"pid":3,"comm":"node","cg":1,"d":3700000,"role":2,"ok":1}')!;
  assert.deepEqual([e.durationMs, e.detail.role, e.detail.result, e.detail.library], [3.7, 'server', 'ok', 'node']);
  assert.equal(tlsHandshakeProbe.parse('{"lib":"libssl","t":1,"pid":3,"comm":"curl","cg":1,"d":1,"role":1,"ok":0}')!.detail.result, 'aborted');
  const prog = tlsHandshakeProbe.program(opts, {}, kit(tlsHandshakeProbe));
  assert.match(prog, /_ZN4node6crypto7TLSWrap15SSLInfoCallbackEPK6ssl_stii/);
  assert.doesNotMatch(prog, /nonexistent/);
});

test('gpu_alloc_fail: attaches only the symbols the library exports; CUresult named', () => {
  const prog = gpuAllocFailProbe.program(opts, { '/opt/cuda/libcuda.so.1': ['cuMemAlloc_v2', 'cuMemAllocManaged'] }, kit(gpuAllocFailProbe));
  assert.match(prog, /uretprobe:\/opt\/cuda\/libcuda\.so\.1:cuMemAlloc_v2/);
  assert.doesNotMatch(prog, /cuMemCreate/);
  const e = gpuAllocFailProbe.parse('{"t":1,"pid":8,"comm":"vllm","cg":1,"ret":2,"size":1099511627776,"fn":"uretprobe:/opt/cuda/libcuda.so.1:cuMemAlloc_v2"}')!;
  assert.deepEqual(e.detail, { function: 'cuMemAlloc_v2', result: 2, error: 'CUDA_ERROR_OUT_OF_MEMORY', bytes: 1099511627776 });
});

test('http_traceparent: trace id from request headers, no event without one, duplicates folded', () => {
  const tp = '0af7651916cd43dd8448eb211c80319c';
  const line = `out|writev|99|12|1|node|POST /v1/chat HTTP/1.1\r\nhost: x\r\ntraceparent: 00-${tp}-b7ad6b7169203331-01\r\n\r\n`;
  const e = httpTraceparentProbe.parse(line)!;
  assert.equal(e.traceId, tp);
  assert.deepEqual([e.detail.direction, e.detail.method, e.detail.path, e.detail.spanId, e.detail.sampled], ['outgoing', 'POST', '/v1/chat', 'b7ad6b7169203331', true]);
  assert.equal(httpTraceparentProbe.parse(line), null, 'same request seen twice (write + SSL_write) → one event');
  assert.equal(httpTraceparentProbe.parse('in|read|1|12|1|node|GET / HTTP/1.1\r\nhost: x\r\n\r\n'), null);
  assert.equal(httpTraceparentProbe.parse(`in|read|1|12|1|node|GET / HTTP/1.1\r\ntraceparent: 00-${'0'.repeat(32)}-b7ad6b7169203331-01\r\n`), null);
  const prog = httpTraceparentProbe.program(opts, {}, kit(httpTraceparentProbe));
  assert.match(prog, /rand % 10 == 0/);
  assert.match(prog, /pid != 4242/);
});

test('every probe: unique name, metrics register, opt-in ones not default', () => {
  assert.equal(new Set(ALL_PROBES.map((p) => p.name)).size, ALL_PROBES.length);
  assert.ok(!DEFAULT_PROBES.includes('http_traceparent'));
  const reg = new Registry();
  for (const p of ALL_PROBES) p.metrics(reg);
  const names = reg.getMetricsAsArray().map((m) => m.name);
  for (const n of ['hopscope_tcp_retransmits_total', 'hopscope_tcp_connect_seconds', 'hopscope_tcp_connect_failures_total', 'hopscope_tls_handshake_seconds', 'hopscope_gpu_alloc_failures_total']) {
    assert.ok(names.includes(n), n);
  }
});
