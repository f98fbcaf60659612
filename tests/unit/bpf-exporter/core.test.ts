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

const ev = (i: number, extra: Partial<KernelEvent> = {}): KernelEvent => ({ ts: i, type: 'tcp_connect', pid: i % 2, comm: 'x', detail: { i }, mode: 'live', ...extra });

test('ring: bounded, oldest evicted and counted, newest kept under a limit', () => {
  const r = new EventRing(3);
  for (let i = 0; i < 5; i++) r.push(ev(i));
  assert.equal(r.size, 3);
  assert.equal(r.evicted, 2);
  assert.deepEqual(r.query({}, 10).events.map((e) => e.ts), [2, 3, 4]);
  assert.deepEqual(r.query({}, 2), { events: [ev(3), ev(4)], truncated: true });
  assert.deepEqual(r.query({ pid: 0 }, 10).events.map((e) => e.ts), [2, 4]);
  assert.deepEqual(r.query({ from: 3, to: 3 }, 10).events.map((e) => e.ts), [3]);
  assert.throws(() => new EventRing(0));
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
});

test('config: defaults, env overrides, clear errors', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3302);
  assert.equal(c.host, '127.0.0.1');
  assert.deepEqual(c.probes, ['tcp_connect', 'tcp_retransmit', 'tls_handshake', 'gpu_alloc_fail']);
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

test('record → replay round trip: same events, mode "replay", recorded time kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bx-rec-'));
  try {
    const rec = new Recorder(join(dir, 'r.jsonl'));
    rec.write(ev(2000, { durationMs: 3.5 }));
    rec.write(ev(1000));
    await rec.close();
    const events = readRecording(join(dir, 'r.jsonl'));
    assert.deepEqual(events.map((e) => e.ts), [1000, 2000], 'sorted by time');
    const out: KernelEvent[] = [];
    new Replayer(events, 'fast').start((e) => out.push(e));
    assert.deepEqual(out.map((e) => [e.ts, e.mode, e.detail.recordedTs]), [[1000, 'replay', 1000], [2000, 'replay', 2000]]);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
