import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../bpf-exporter/src/config';
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
});
