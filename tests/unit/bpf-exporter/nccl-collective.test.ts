/** nccl_collective on recorded bpftrace lines (from the stand-in libnccl.so.2: a stalled rank aborted by the
 *  watchdog after 414 ms, ncclTimeout): parsing, the histogram per pod and result, and the program's text. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { Kit } from '../../../bpf-exporter/src/core/kit';
import { podLabelSet } from '../../../bpf-exporter/src/core/pod-labels';
import type { ProbeOptions } from '../../../bpf-exporter/src/core/probe';
import { DEFAULT_PROBES } from '../../../bpf-exporter/src/probes';
import {
  SLOW_NCCL_NS,
  isLibnccl,
  ncclCollectiveProbe as probe,
} from '../../../bpf-exporter/src/probes/nccl-collective';

const opts: ProbeOptions = { traceparentSampleEvery: 10, selfPid: 4242 };
// A record bpftrace printed (after the kit's prefix) for the stand-in's stalled ncclAllReduce.
const RECORDED =
  '{"t":14501776186233,"pid":2426,"cg":1,"d":414629366,"ret":8,"n":8192,"dt":9,"fn":"uretprobe:/work/wt/nccl/.cache/native/libnccl.so.2:ncclAllReduce"}';

test('nccl_collective: a slow ncclAllReduce with its result, element count, data type and bytes', () => {
  const e = probe.parse(RECORDED)!;
  assert.equal(e.type, 'nccl_slow_collective');
  assert.equal(e.pid, 2426);
  assert.equal(e.nsecs, 14501776186233n);
  assert.equal(e.durationMs, 414.629366);
  assert.deepEqual(e.detail, {
    function: 'ncclAllReduce',
    result: 8,
    resultName: 'ncclTimeout',
    count: 8192,
    datatype: 'ncclBfloat16',
    bytes: 16384,
    thresholdMs: 100,
  });
  assert.deepEqual(e.tally, { name: 'nccl', dims: [8], valueNs: 414629366 });
  const unknown = probe.parse('{"t":1,"pid":1,"cg":1,"d":200000000,"ret":42,"n":3,"dt":77,"fn":"x:ncclAllReduce"}')!;
  assert.equal(unknown.detail.resultName, 'ncclResult_t 42');
  assert.equal(unknown.detail.datatype, 'ncclDataType_t 77');
  assert.equal(unknown.detail.bytes, undefined, 'no size for an unknown type');
  assert.throws(() => probe.parse('{not json'));
});

test('nccl_collective: libnccl files, the uprobe/uretprobe pair and the threshold in the program, on by default', () => {
  assert.ok(isLibnccl('libnccl.so.2') && isLibnccl('libnccl.so.2.21.5') && isLibnccl('libnccl.so'));
  assert.ok(!isLibnccl('libnccl-net.so') && !isLibnccl('libcuda.so.1'));
  const prog = probe.program(
    opts,
    [{ file: 'libnccl', path: '/opt/nccl/lib/libnccl.so.2', symbols: ['ncclAllReduce'] }],
    new Kit(probe.tallies ?? [], { budget: 200, flushMs: 1000 })
  );
  assert.match(
    prog,
    /uprobe:"\/opt\/nccl\/lib\/libnccl\.so\.2":ncclAllReduce \{ @ncs\[tid\] = nsecs; @ncn\[tid\] = arg2;/
  );
  assert.match(prog, /uretprobe:"\/opt\/nccl\/lib\/libnccl\.so\.2":ncclAllReduce/);
  assert.ok(prog.includes(`if ($d >= ${SLOW_NCCL_NS})`));
  assert.ok(DEFAULT_PROBES.includes('nccl_collective'));
});

test('nccl_collective: hopscope_nccl_slow_collective_duration_seconds per pod, collective and result', async () => {
  const reg = new Registry();
  const pod = podLabelSet([]);
  const m = probe.metrics(reg, pod);
  // Two slow calls in bucket 1 (0.25–0.5 s] totalling 0.8 s on rank 1's pod.
  m.add!('nccl', [8, 1], 2, 800_000_000, pod.values('llm-vllm-0-1', 'chain', 'gpu-node-0', {}));
  const text = await reg.metrics();
  assert.match(
    text,
    /hopscope_nccl_slow_collective_duration_seconds_count\{pod="llm-vllm-0-1",namespace="chain",node="gpu-node-0",collective="ncclAllReduce",result="ncclTimeout"\} 2/
  );
  assert.match(text, /hopscope_nccl_slow_collective_duration_seconds_bucket\{[^}]*le="0.25"[^}]*\} 0/);
  assert.match(text, /hopscope_nccl_slow_collective_duration_seconds_bucket\{[^}]*le="0.5"[^}]*\} 2/);
  assert.match(text, /hopscope_nccl_slow_collective_duration_seconds_sum\{[^}]*\} 0.8/);
});
