import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Recorder, Replayer, readRecording } from '../../../bpf-exporter/src/core/replay';
import { EventRing } from '../../../bpf-exporter/src/core/ring';
import { parseEventQuery, parseTime } from '../../../bpf-exporter/src/http/params';
import type { KernelEvent } from '../../../contract';

const ev = (i: number, extra: Partial<KernelEvent> = {}): KernelEvent => ({
  ts: i,
  type: 'tcp_connect',
  pid: i % 2,
  comm: 'x',
  detail: { i },
  mode: 'live',
  ...extra,
});

test('ring: bounded, oldest evicted and counted, newest kept under a limit', () => {
  const r = new EventRing(3, 100);
  for (let i = 0; i < 5; i++) r.push(ev(i));
  assert.equal(r.size, 3);
  assert.equal(r.evicted, 2);
  assert.deepEqual(
    r.query({}, 10).events.map((e) => e.ts),
    [2, 3, 4]
  );
  assert.deepEqual(r.query({}, 2), {
    events: [
      { ...ev(3), seq: 103 },
      { ...ev(4), seq: 104 },
    ],
    truncated: true,
  });
  assert.deepEqual(
    r.query({ pid: 0 }, 10).events.map((e) => e.ts),
    [2, 4]
  );
  assert.deepEqual(
    r.query({ from: 3, to: 3 }, 10).events.map((e) => e.ts),
    [3]
  );
  assert.throws(() => new EventRing(0));
});

test('ring sequence: consecutive seqs, resume right after a position, and the gap said when it is gone', () => {
  const r = new EventRing(4, 1000);
  assert.deepEqual([r.firstSeq, r.lastSeq], [1000, 999], 'empty');
  for (let i = 0; i < 6; i++) r.push(ev(i, { notable: i % 2 === 0 }));
  assert.deepEqual([r.firstSeq, r.lastSeq], [1002, 1005]);
  assert.equal(r.bySeq(1003)!.ts, 3);
  assert.equal(r.bySeq(1001), undefined, 'evicted');
  assert.equal(r.bySeq(1006), undefined, 'not yet');
  assert.deepEqual(r.resume(1003), { cursor: 1003 });
  assert.deepEqual(r.resume(1001), { cursor: 1001 }, 'the next one (1002) is still held: no gap');
  assert.deepEqual(r.resume(1000), {
    cursor: 1001,
    gap: { after: 1000, resumedAt: 1002, reason: 'evicted', missed: 1 },
  });
  assert.deepEqual(r.resume(500), {
    cursor: 1001,
    gap: { after: 500, resumedAt: 1002, reason: 'exporter_restarted', missed: null },
  });
  assert.deepEqual(r.resume(5000), {
    cursor: 1001,
    gap: { after: 5000, resumedAt: 1002, reason: 'ahead', missed: null },
  });
  // Paging forward: oldest first, the next position given, filters applied.
  const p1 = r.since(1001, {}, 2);
  assert.deepEqual(
    [p1.events.map((e) => e.seq), p1.truncated, p1.resumeAfter, p1.gap],
    [[1002, 1003], true, 1003, undefined]
  );
  const p2 = r.since(p1.resumeAfter, {}, 2);
  assert.deepEqual([p2.events.map((e) => e.seq), p2.truncated, p2.resumeAfter], [[1004, 1005], false, 1005]);
  const notable = r.since(999, { notable: true }, 10);
  assert.deepEqual(
    notable.events.map((e) => e.ts),
    [2, 4]
  );
  assert.equal(notable.gap?.reason, 'evicted');
  const none = r.since(1004, { pid: 99 }, 10);
  assert.deepEqual([none.events.length, none.resumeAfter], [0, 1005], 'nothing matched: the position still moves on');
});

test('time parameters: epoch ms and now-relative', () => {
  assert.equal(parseTime('1700000000000'), 1_700_000_000_000);
  assert.equal(parseTime('now', 1000), 1000);
  assert.equal(parseTime('now-15m', 1_000_000), 100_000);
  assert.equal(parseTime('now-2h', 10_000_000), 2_800_000);
  assert.equal(parseTime('yesterday'), undefined);
});

test('event query: types, limit default, errors with reasons', () => {
  const o = { maxRangeMs: 1000, maxLimit: 50 };
  const ok = parseEventQuery({ type: 'tcp_connect,tls_handshake', pid: '7' }, o);
  assert.ok(!('error' in ok));
  assert.deepEqual(ok.filter.types, ['tcp_connect', 'tls_handshake']);
  assert.equal(ok.filter.pid, 7);
  assert.equal(ok.limit, 50);
  const bad = parseEventQuery({ from: '0', to: '5000' }, o);
  assert.ok('error' in bad && /range too wide/.test(bad.error));
  const resume = parseEventQuery({ class: 'notable', after: '1796117611174067' }, o, true);
  assert.ok(!('error' in resume));
  assert.deepEqual([resume.filter.notable, resume.after], [true, 1796117611174067]);
  for (const q of [{ class: 'loud' }, { after: '-1' }, { after: 'x' }])
    assert.ok('error' in parseEventQuery(q, o), JSON.stringify(q));
});

test('config: defaults, env overrides, clear errors', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3302);
  assert.equal(c.host, '127.0.0.1');
  assert.deepEqual(c.probes, [
    'tcp_connect',
    'tcp_retransmit',
    'tls_handshake',
    'gpu_alloc_fail',
    'gpu_memory_held',
    'nccl_collective',
  ]);
  assert.equal(loadConfig({ HOPSCOPE_BPF_PORT: '0' }).port, 0);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_PORT: '70000' }), /HOPSCOPE_BPF_PORT must be an integer/);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_PROBES: 'tcp_connect,nope' }), /unknown probe\(s\) nope/);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_REPLAY_TIMING: 'slow' }), /original" or "fast/);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_TRACEPARENT_SAMPLE: '0' }), /SAMPLE/);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_PERF_PAGES: '100' }), /power of two/);
  assert.deepEqual([c.eventBudget, c.flushMs], [200, 1000]);
  assert.equal(loadConfig({ HOPSCOPE_BPF_EVENT_BUDGET: '0' }).eventBudget, 0, '0 = counts only');
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_EVENT_BUDGET: '-1' }), /HOPSCOPE_BPF_EVENT_BUDGET/);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_FLUSH_MS: '10' }), /HOPSCOPE_BPF_FLUSH_MS/);
});

test('config: no token, loopback only; files for the uprobes named explicitly or not at all; pod labels; kubernetes mode', () => {
  for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost'])
    assert.equal(loadConfig({ HOPSCOPE_BPF_HOST: host }).host, host);
  for (const host of ['0.0.0.0', '::', '10.1.2.3']) {
    assert.throws(
      () => loadConfig({ HOPSCOPE_BPF_HOST: host }),
      /not a loopback address and HOPSCOPE_BPF_TOKEN is not set/,
      host
    );
    assert.equal(loadConfig({ HOPSCOPE_BPF_HOST: host, HOPSCOPE_BPF_TOKEN: 'a'.repeat(24) }).token, 'a'.repeat(24));
  }
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_TOKEN: 'short' }), /at least 16 characters/);
  const c = loadConfig({});
  assert.deepEqual(
    c.uprobeFiles,
    { node: [], libssl: [], libcuda: [] },
    "not the exporter's own node and libssl by default"
  );
  assert.deepEqual(loadConfig({ HOPSCOPE_BPF_LIBCUDA: '/a/libcuda.so.1, /b/libcuda.so.1' }).uprobeFiles.libcuda, [
    '/a/libcuda.so.1',
    '/b/libcuda.so.1',
  ]);
  assert.equal(c.scanMs, 15_000);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_SCAN_MS: '10' }), /0 or at least 500/);
  assert.deepEqual(c.podLabels, ['app.kubernetes.io/name']);
  assert.deepEqual(loadConfig({ HOPSCOPE_BPF_POD_LABELS: '' }).podLabels, []);
  assert.throws(() => loadConfig({ HOPSCOPE_BPF_POD_LABELS: 'app name' }), /not a Kubernetes label key/);
  assert.deepEqual(c.kubernetes, { mode: 'off' });
  assert.deepEqual(loadConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }).kubernetes, { mode: 'in-cluster' });
  assert.deepEqual(loadConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1', HOPSCOPE_BPF_KUBECONFIG: '/k' }).kubernetes, {
    mode: 'kubeconfig',
    kubeconfig: '/k',
  });
  assert.equal(c.sseMaxClients, 16);
  assert.throws(
    () => loadConfig({ HOPSCOPE_BPF_HEADERS_TIMEOUT_MS: '5000', HOPSCOPE_BPF_REQUEST_TIMEOUT_MS: '1000' }),
    /REQUEST_TIMEOUT_MS/
  );
});

test('record → replay round trip: same events, mode "replay", recorded time kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bx-rec-'));
  try {
    const rec = new Recorder(join(dir, 'r.jsonl'));
    rec.write(ev(2000, { durationMs: 3.5 }));
    rec.write(ev(1000));
    await rec.close();
    const events = readRecording(join(dir, 'r.jsonl'));
    assert.deepEqual(
      events.map((e) => e.ts),
      [1000, 2000],
      'sorted by time'
    );
    const out: KernelEvent[] = [];
    new Replayer(events, 'fast').start((e) => out.push(e));
    assert.deepEqual(
      out.map((e) => [e.ts, e.mode, e.detail.recordedTs]),
      [
        [1000, 'replay', 1000],
        [2000, 'replay', 2000],
      ]
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
