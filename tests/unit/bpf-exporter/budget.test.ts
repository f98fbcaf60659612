/**
 * Kernel counting and the per-event budget without a kernel: the bpftrace the kit generates, the reconciliation of
 * flushed counts with records already counted (never twice, never lost), the suppressed log's windows, and exact
 * histogram bulk observations.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { KERNEL_EVENT_TYPES } from '../../../contract';
import { bucketOf, commFromHex, Kit, RECORD_PREFIX, secondsToNs, typeCode } from '../../../bpf-exporter/src/core/kit';
import type { UprobeTarget } from '../../../bpf-exporter/src/core/probe';
import { observeMany } from '../../../bpf-exporter/src/core/probe';
import { SuppressedLog } from '../../../bpf-exporter/src/core/suppressed';
import { TallyReconciler } from '../../../bpf-exporter/src/core/tally';
import { ALL_PROBES } from '../../../bpf-exporter/src/probes';

const opts = { traceparentSampleEvery: 1, selfPid: 1 };
const targets: UprobeTarget[] = [
  { file: 'node', path: '/usr/bin/node', symbols: ['SSL_write'] },
  { file: 'libssl', path: '/usr/lib/libssl.so.3', symbols: [] },
  { file: 'libcuda', path: '/opt/cuda/libcuda.so.1', symbols: ['cuMemAlloc_v2'] },
];

test('kit: every probe counts in double-buffered maps, prints within the budget, flushes on an interval and at END', () => {
  for (const p of ALL_PROBES) {
    const kit = new Kit(p.tallies ?? [], { budget: 123, flushMs: 700 });
    const prog = p.program(opts, targets, kit);
    assert.ok(kit.complete, `${p.name}: footer`);
    assert.match(
      prog,
      /if \(\$bx_c\) \{ if \(@bx_nn < 123\) \{ @bx_nn = @bx_nn \+ 1; \$bx_ok = 1; \} \} else \{ if \(@bx_n < 123\) \{ @bx_n = @bx_n \+ 1; \$bx_ok = 1; \} \}/,
      p.name
    );
    // The process name goes in the prefix, hex-escaped; never in the probe's own text.
    assert.match(prog, /if \(\$bx_ok\) \{ printf\("%llu %llu %d %rx /, p.name);
    assert.match(prog, /\$bx_c, buf\([^)]*, 16\)/, p.name);
    assert.doesNotMatch(prog, /\\"comm\\"/, `${p.name}: no comm inside the record text`);
    assert.match(prog, /@bx_sup_0\[\$bx_w, \d+, \$bx_c, \$bx_pid, \$bx_cg\] = count\(\)/, p.name);
    assert.match(prog, /interval:ms:700/, p.name);
    assert.equal((prog.match(/^END$/gm) ?? []).length, 1, `${p.name}: one END`);
    assert.match(
      prog,
      /^BEGIN \{ printf\("\{\\"bx\\":\\"begin\\"\}\\n"\); \}$/m,
      `${p.name}: BEGIN says when every probe is attached`
    );
    for (const t of p.tallies ?? []) {
      for (const g of [0, 1]) {
        assert.match(prog, new RegExp(`@t_${t.name}_${g}\\[`), `${p.name}: ${t.name} gen ${g}`);
        assert.match(prog, new RegExp(`print\\(@t_${t.name}_${g}\\); clear\\(@t_${t.name}_${g}\\);`));
        if (t.bucketsNs) assert.match(prog, new RegExp(`@ts_${t.name}_${g}\\[[^\\]]*\\] = sum\\(\\$bx_v\\)`));
      }
    }
  }
  assert.throws(
    () =>
      new Kit([], { budget: 1, flushMs: 1000 }).event({
        type: 'tcp_retransmit',
        pid: 'pid',
        cg: 'cgroup',
        comm: 'comm',
        tally: { name: 'nope', dims: [] },
        printf: { fmt: 'x\\n', args: [] },
      }),
    /not declared/
  );
});

test("kit: the record class of each type comes from the contract catalogue (always, never, or the probe's condition when slow)", () => {
  const ev = (type: keyof typeof KERNEL_EVENT_TYPES, notableWhen?: string): string =>
    new Kit([], { budget: 5, flushMs: 1000 }).event({
      type,
      pid: 'pid',
      cg: 'cgroup',
      comm: 'comm',
      printf: { fmt: 'x\\n', args: [] },
      notableWhen,
    });
  for (const [type, info] of Object.entries(KERNEL_EVENT_TYPES) as Array<
    [keyof typeof KERNEL_EVENT_TYPES, (typeof KERNEL_EVENT_TYPES)[keyof typeof KERNEL_EVENT_TYPES]]
  >) {
    if (info.notable === 'always') assert.match(ev(type), /\$bx_c = 1;/, type);
    if (info.notable === 'never') assert.match(ev(type), /\$bx_c = 0;(?! if)/, type);
    if (info.notable === 'slow') {
      assert.throws(() => ev(type), /notableWhen needed/, type);
      assert.match(ev(type, '$d > 5'), /\$bx_c = 0; if \(\$d > 5\) \{ \$bx_c = 1; \}/, type);
    } else assert.throws(() => ev(type, '$d > 5'), /no notableWhen/, type);
  }
});

test('record prefix: the process name arrives as 16 escaped bytes and decodes exactly, quotes and all', () => {
  // What bpftrace 0.17 printed (-f json, then decoded once) for a process named `","pid":1,"\":"`.
  const hex = '\\x22\\x2c\\x22\\x70\\x69\\x64\\x22\\x3a\\x31\\x2c\\x22\\x5c\\x22\\x3a\\x22\\x00';
  const line = `7 1234 1 ${hex} {"t":1,"pid":4242,"cg":1}`;
  const m = RECORD_PREFIX.exec(line)!;
  assert.ok(m, 'the prefix matches');
  assert.deepEqual([m[1], m[2], m[3]], ['7', '1234', '1']);
  assert.equal(commFromHex(m[4]), '","pid":1,"\\":"');
  assert.equal(JSON.parse(line.slice(m[0].length)).pid, 4242);
  const full = '\\x6b\\x77\\x6f\\x72\\x6b\\x65\\x72\\x2f\\x31\\x3a\\x32\\x2d\\x65\\x76\\x65\\x6e';
  assert.equal(commFromHex(full), 'kworker/1:2-even', 'a 16-byte name without NUL is kept whole');
  assert.equal(RECORD_PREFIX.exec('7 1234 1 {"t":1}'), null, 'a record without the name is not a record');
});

test("kit buckets: the kernel's index and the histogram's bounds agree (value = bound goes in that bucket)", () => {
  const b = secondsToNs([0.001, 0.01, 1]);
  assert.deepEqual(b, [1_000_000, 10_000_000, 1_000_000_000]);
  assert.deepEqual(
    [0, 1_000_000, 1_000_001, 10_000_000, 999_999_999_999].map((v) => bucketOf(b, v)),
    [0, 0, 1, 1, 3]
  );
});

const flush = (r: TallyReconciler, epoch: number, maps: Record<string, unknown>) => {
  const prev = r.begin(epoch);
  assert.equal(prev, undefined);
  for (const [k, v] of Object.entries(maps)) assert.ok(r.map(k, v));
  return r.end(epoch)!;
};

test('reconciler: records counted at once, the flush adds only the suppressed rest, late records are not counted twice', () => {
  const r = new TallyReconciler([{ name: 'fail', type: 'gpu_alloc_fail', dims: ['result'] }]);
  // Epoch 0: 3 records arrive, the kernel counted 10 (7 over the budget).
  for (let i = 0; i < 3; i++) assert.equal(r.record(0, 42, 7, { name: 'fail', dims: [2] }), true);
  const f0 = flush(r, 0, {
    '@t_fail_0': { '42,7,2': 10, '43,7,2': 4 },
    '@bx_sup_0': { [`100,${typeCode('gpu_alloc_fail')},1,42,7`]: 7 },
  });
  assert.deepEqual(
    f0.deltas.map((d) => [d.pid, d.cgroupId, d.dims, d.count, d.type]),
    [
      [42, 7, [2], 7, 'gpu_alloc_fail'],
      [43, 7, [2], 4, 'gpu_alloc_fail'],
    ]
  );
  assert.deepEqual(f0.suppressed, [
    { second: 100, type: 'gpu_alloc_fail', notable: true, pid: 42, cgroupId: 7, count: 7 },
  ]);
  // A record of epoch 0 read after its flush (another CPU's buffer): the flush had it already.
  assert.equal(r.record(0, 42, 7, { name: 'fail', dims: [2] }), false);
  // A record of epoch 2 read before the flush of epoch 1: counted now, and not again by epoch 2's flush.
  assert.equal(r.record(2, 42, 7, { name: 'fail', dims: [2] }), true);
  assert.deepEqual(
    flush(r, 1, { '@t_fail_1': { '42,7,2': 1 } }).deltas.map((d) => d.count),
    [1]
  );
  assert.deepEqual(flush(r, 2, { '@t_fail_0': { '42,7,2': 1 } }).deltas, []);
  assert.equal(r.pendingEpochs, 0);
});

test('reconciler: histogram remainders carry the right sum; a flush without markers is still applied', () => {
  const bucketsNs = secondsToNs([0.001, 0.01]);
  const r = new TallyReconciler([{ name: 'hs', type: 'tls_handshake', dims: ['role', 'ok'], bucketsNs }]);
  assert.equal(r.record(5, 9, 1, { name: 'hs', dims: [1, 1], valueNs: 4_000_000 }), true);
  const f = flush(r, 5, { '@t_hs_1': { '9,1,1,1,1': 3 }, '@ts_hs_1': { '9,1,1,1,1': 15_000_000 } });
  assert.deepEqual(
    f.deltas.map((d) => [d.dims, d.count, d.sumNs]),
    [[[1, 1, 1], 2, 11_000_000]]
  );
  // Begin marker lost: the map is taken as the next epoch of its generation, closed by the next marker.
  assert.ok(r.map('@t_hs_0', { '9,1,1,1,2': 2 }));
  assert.ok(r.map('@ts_hs_0', { '9,1,1,1,2': 40_000_000 }));
  const lost = r.begin(7)!;
  assert.equal(lost.inferred, true);
  assert.equal(lost.epoch, 6);
  assert.deepEqual(
    lost.deltas.map((d) => [d.dims, d.count, d.sumNs]),
    [[[1, 1, 2], 2, 40_000_000]]
  );
  assert.equal(r.map('@pid', { 1: 2 }), false, "a probe's own maps are not counts");
  assert.equal(r.close()?.epoch, 7, 'a flush cut short by exit is still applied');
});

test('observeMany: bucket counts and sum exact, the mean kept inside its bucket', async () => {
  const reg = new Registry();
  const h = new Histogram({ name: 'x_seconds', help: 'x', buckets: [0.001, 0.01, 1], registers: [reg] });
  observeMany(h, 4, 4 * 5_000_000, [0.001, 0.01, 1], 1); // 4 × 5 ms
  observeMany(h, 2, 2 * 10_000_000, [0.001, 0.01, 1], 1); // exactly on the bound: stays in bucket 1
  observeMany(h, 1, 3_000_000_000, [0.001, 0.01, 1], 3); // +Inf
  const v = (await h.get()).values;
  const at = (le: number | string): number =>
    v.find((x) => x.metricName === 'x_seconds_bucket' && x.labels.le === le)!.value;
  assert.deepEqual([at(0.001), at(0.01), at(1), at('+Inf')], [0, 6, 6, 7]);
  const sum = v.find((x) => x.metricName === 'x_seconds_sum')!.value;
  assert.ok(Math.abs(sum - 3.04) < 1e-9, `sum ${sum}`);
});

test('suppressed log: counts by window, type, pid, pod; bounded', () => {
  const log = new SuppressedLog(3);
  log.add({ ts: 10_000, type: 'gpu_alloc_fail', notable: true, pid: 1, pod: 'a', count: 5 });
  log.add({ ts: 11_000, type: 'gpu_alloc_fail', notable: true, pid: 2, pod: 'b', count: 7 });
  log.add({ ts: 12_000, type: 'tcp_connect', notable: false, pid: 1, pod: 'a', count: 1 });
  assert.equal(log.count({}), 13);
  assert.equal(log.count({ pod: 'a' }), 6);
  assert.equal(log.count({ pid: 2 }), 7);
  assert.equal(log.count({ types: ['tcp_connect'] }), 1);
  assert.equal(log.count({ notable: true }), 12, 'class=notable counts only the notable class');
  assert.equal(log.count({ from: 10_500, to: 11_200 }), 12, 'a second overlapping the window counts whole');
  assert.equal(log.count({ from: 13_000 }), 0);
  log.add({ ts: 13_000, type: 'gpu_alloc_fail', notable: true, pid: 1, pod: 'a', count: 2 });
  assert.equal(log.size, 3);
  assert.equal(log.total, 15);
  assert.equal(log.knownSince, 11_000);
});
