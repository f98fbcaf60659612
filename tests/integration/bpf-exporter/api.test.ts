/**
 * The exporter's HTTP API without eBPF (runs anywhere): replay mode from a recorded JSONL file (original timing and
 * fast), `mode: "replay"` on /health and every event, query validation (400 with the reason, capped ranges), the
 * bounded ring under a storm, and the pid → pod registration API.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { KernelEventList, type KernelEvent } from '../../../contract';
import { getJson, waitFor } from './http';

const log = pino({ level: 'silent' });
const T0 = 1_700_000_000_000;

function recording(n: number, gapMs: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const e: KernelEvent = {
      ts: T0 + i * gapMs,
      type: i % 2 ? 'tcp_retransmit' : 'tls_handshake',
      pid: 100 + (i % 3),
      comm: 'rag',
      pod: `rag-${i % 3}`,
      namespace: 'bx',
      node: 'bx-node',
      durationMs: i % 2 ? undefined : 600,
      detail: { i },
      mode: 'live',
      ...(i === 3 ? { traceId: 'a'.repeat(32) } : {}),
    };
    lines.push(JSON.stringify(e));
  }
  return `${lines.join('\n')}\n`;
}

describe('bpf-exporter API (replay mode, no eBPF needed)', () => {
  let dir = '';
  const exporters: Exporter[] = [];
  const start = async (env: Record<string, string>): Promise<Exporter> => {
    const e = await startExporter(loadConfig({ HOPSCOPE_BPF_PORT: '0', HOPSCOPE_BPF_NODE: 'bx-node', ...env }), log);
    exporters.push(e);
    return e;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-api-'));
    writeFileSync(join(dir, 'small.jsonl'), recording(6, 300));
    writeFileSync(join(dir, 'storm.jsonl'), recording(5000, 1));
    writeFileSync(join(dir, 'bad.jsonl'), '{"ts": 1}\n');
  });
  after(async () => {
    await Promise.all(exporters.map((e) => e.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('fast replay: recorded timestamps, every event and /health say replay, probes reported not attached', async () => {
    const e = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'small.jsonl'), HOPSCOPE_BPF_REPLAY_TIMING: 'fast' });
    const { body: health } = await getJson<{
      mode: string;
      ok: boolean;
      probes: Array<{ attached: boolean; code: string }>;
      replay: { events: number; done: boolean };
    }>(`${e.url}/health`);
    assert.equal(health.mode, 'replay');
    assert.equal(health.replay.events, 6);
    assert.ok(health.probes.length > 0 && health.probes.every((p) => !p.attached && p.code === 'replay_mode'));
    const { status, body } = await getJson<{ events: KernelEvent[] }>(`${e.url}/events?from=${T0}&to=${T0 + 10_000}`);
    assert.equal(status, 200);
    assert.ok(KernelEventList.safeParse(body).success);
    assert.equal(body.events.length, 6);
    assert.ok(body.events.every((x) => x.mode === 'replay'));
    assert.equal(body.events[0].ts, T0);
    const { body: filtered } = await getJson<{ events: KernelEvent[] }>(
      `${e.url}/events?pod=rag-1&type=tcp_retransmit`
    );
    assert.deepEqual(
      filtered.events.map((x) => x.detail.i),
      [1]
    );
    const { body: byTrace } = await getJson<{ events: KernelEvent[] }>(`${e.url}/events?traceId=${'a'.repeat(32)}`);
    assert.deepEqual(
      byTrace.events.map((x) => x.detail.i),
      [3]
    );
    const { body: byPid } = await getJson<{ events: KernelEvent[] }>(
      `${e.url}/events?pid=102&from=${T0}&to=${T0 + 10_000}`
    );
    assert.deepEqual(
      byPid.events.map((x) => x.detail.i),
      [2, 5]
    );
    const { body: limited } = await getJson<{ events: KernelEvent[]; truncated: boolean }>(`${e.url}/events?limit=2`);
    assert.deepEqual(
      limited.events.map((x) => x.detail.i),
      [4, 5],
      'the limit keeps the newest'
    );
    assert.equal(limited.truncated, true);
  });

  test('original-timing replay: spacing kept, re-based to now, recorded time in detail', async () => {
    const e = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'small.jsonl'), HOPSCOPE_BPF_REPLAY_TIMING: 'original' });
    const startedAt = Date.now();
    const { body: early } = await getJson<{ events: KernelEvent[] }>(`${e.url}/events`);
    assert.ok(early.events.length < 6, 'not everything at once');
    const all = await waitFor(
      'all replayed',
      async () => {
        const { body } = await getJson<{ events: KernelEvent[] }>(`${e.url}/events`);
        return body.events.length === 6 ? body.events : undefined;
      },
      10_000
    );
    assert.ok(all[0].ts >= startedAt - 1000);
    assert.equal(all[0].detail.recordedTs, T0);
    const gap = all[5].ts - all[0].ts;
    assert.ok(gap >= 1400 && gap < 4000, `5 gaps of 300 ms ≈ 1500 ms, got ${gap}`);
    assert.ok(all.every((x) => x.mode === 'replay'));
  });

  test('an event storm never grows the ring: the oldest are evicted and counted', async () => {
    const e = await start({
      HOPSCOPE_BPF_REPLAY: join(dir, 'storm.jsonl'),
      HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
      HOPSCOPE_BPF_RING_SIZE: '1000',
    });
    const { body } = await getJson<{ events: KernelEvent[]; dropped: number }>(`${e.url}/events?limit=10000`);
    assert.equal(body.events.length, 1000);
    assert.equal(body.dropped, 4000);
    assert.equal(body.events[0].detail.i, 4000);
    const metrics = await (await fetch(`${e.url}/metrics`)).text();
    assert.match(metrics, /hopscope_bpf_ring_evicted_total 4000/);
  });

  test('a bad recording is reported on /health, not replayed as anything', async () => {
    const e = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'bad.jsonl') });
    const { body } = await getJson<{ ok: boolean; replay: { error: string } }>(`${e.url}/health`);
    assert.equal(body.ok, false);
    assert.match(body.replay.error, /bad\.jsonl:1: not a kernel event/);
  });

  test('without bpftrace it still serves /health saying why, and empty /events (never fake data)', async () => {
    const e = await start({ HOPSCOPE_BPFTRACE: '/nonexistent/bpftrace' });
    const { body } = await getJson<{
      ok: boolean;
      mode: string;
      probes: Array<{ attached: boolean; code: string; reason: string }>;
    }>(`${e.url}/health`);
    assert.equal(body.ok, false);
    assert.equal(body.mode, 'live');
    for (const p of body.probes) {
      assert.equal(p.attached, false);
      assert.ok(['bpftrace_missing', 'not_root'].includes(p.code), p.code);
      assert.match(p.reason, /bpftrace not found|not root/);
    }
    const { body: ev } = await getJson<{ events: unknown[] }>(`${e.url}/events`);
    assert.deepEqual(ev.events, []);
  });

  test('bad query parameters → 400 with the reason; ranges are capped', async () => {
    const e = exporters[0];
    const cases: Array<[string, RegExp]> = [
      ['from=yesterday', /not a time/],
      ['type=tcp_bogus', /unknown type "tcp_bogus"/],
      ['pid=-1', /pid/],
      ['traceId=XYZ', /traceId/],
      [`from=0&to=${40 * 86_400_000}`, /range too wide/],
      ['from=2000&to=1000', /after/],
      ['limit=0', /limit/],
      ['colour=red', /colour|unrecognized/i],
    ];
    for (const [q, re] of cases) {
      const res = await fetch(`${e.url}/events?${q}`);
      assert.equal(res.status, 400, q);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'bad_request');
      assert.match(body.error.message, re, q);
    }
    const ok = await fetch(`${e.url}/events?from=now-15m&to=now`);
    assert.equal(ok.status, 200);
    const live = await fetch(`${e.url}/events/stream?from=1`);
    assert.equal(live.status, 400);
  });

  test('POST /register validates, GET lists, DELETE removes', async () => {
    const e = exporters[0];
    const post = (body: unknown): Promise<Response> =>
      fetch(`${e.url}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post({ pod: 'x' })).status, 400);
    assert.equal((await post({ pid: 1.5, pod: 'x' })).status, 400);
    assert.equal((await post({ pid: 42, pod: 'x', extra: 1 })).status, 400);
    const ok = await post({ pid: 42, pod: 'gateway-0', namespace: 'chain', service: 'gateway' });
    assert.equal(ok.status, 201);
    const { body } = await getJson<{ registrations: Array<{ pid: number; pod: string }> }>(`${e.url}/register`);
    assert.deepEqual(
      body.registrations.map((r) => [r.pid, r.pod]),
      [[42, 'gateway-0']]
    );
    assert.equal((await fetch(`${e.url}/register/42`, { method: 'DELETE' })).status, 204);
    assert.equal((await fetch(`${e.url}/register/42`, { method: 'DELETE' })).status, 404);
    assert.equal((await fetch(`${e.url}/register/abc`, { method: 'DELETE' })).status, 400);
    const nf = await fetch(`${e.url}/nope`);
    assert.equal(nf.status, 404);
    assert.equal(((await nf.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});
