/**
 * Comparing two 5-minute load-test runs at 20 req/s (6,000 requests each) through the HTTP API,
 * GET /api/runs/:runId/compare/:baselineRunId, target ≤ 2 s. The traces are seeded synthetic traces shaped like the
 * chain's (tests/support/rca/synthetic.ts: ~21 spans each, the chain's services, pods and GenAI attributes), every
 * span carrying its run's `hopscope.run_id`, 50 ms apart over each run's 5 minutes; the second run has a 150 ms
 * latency fault on rag. They reach the proxy as the chain sends them (OTLP/HTTP JSON to /v1/traces, batches of 100
 * traces), the runs are registered and finished through the run API (in-memory PGlite), all untimed.
 * - cold: the first compare of a fresh proxy (a new proxy per round): the runs' traces out of the store, the baseline
 *   built from the baseline run, the window root cause of 6,000 traces, per-hop statistics of both;
 * - warm: the same compare again on that proxy (a settled pair of runs is answered from the cache).
 * Each round checks that rag ranks first. Usage: tsx bench/run-compare.bench.ts (HOPSCOPE_BENCH_ROUNDS=5,
 * HOPSCOPE_BENCH_REQUESTS=6000).
 */
import { request } from 'undici';
import type { RunCompareAnswer, RunFinish, RunRegistration, Span } from '../contract';
import { median, report, smoke } from './lib/ab';
import { startProxy, type RunningProxy } from '../backend-proxy/src/server';
import { syntheticTrace } from '../tests/support/rca/synthetic';
import { spansToOtlp } from '../tests/support/otlp-encode';

const ROUNDS = Number(process.env.HOPSCOPE_BENCH_ROUNDS ?? smoke(5, 1));
const REQUESTS = Number(process.env.HOPSCOPE_BENCH_REQUESTS ?? smoke(6000, 200));
const EVERY_MS = 50; // 20 req/s
const RUN_MS = REQUESTS * EVERY_MS;
const TARGET_MS = 2000;

const now = Date.now();
// Both runs ended over a minute ago (settled: no late spans expected).
const baseStart = now - 2 * RUN_MS - 180_000;
const runStart = now - RUN_MS - 90_000;

function runBodies(runId: string, seed: number, startMs: number, faulty: boolean): { bodies: string[]; spans: number } {
  const bodies: string[] = [];
  let batch: Span[] = [];
  let spans = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const t = syntheticTrace({
      seed: seed * 1_000_003 + i,
      startMs: startMs + i * EVERY_MS,
      kernelNoise: 0,
      strayRetransmits: 0,
      ...(faulty ? { fault: { hop: 'rag', kind: 'latency', magnitude: 150 } } : {}),
    });
    for (const s of t.spans)
      batch.push({
        ...s,
        attributes: { ...s.attributes, 'hopscope.run_id': runId, 'hopscope.scenario': 'bench-steady' },
      });
    spans += t.spans.length;
    if ((i + 1) % 100 === 0 || i === REQUESTS - 1) {
      bodies.push(JSON.stringify(spansToOtlp(batch)));
      batch = [];
    }
  }
  return { bodies, spans };
}

const t0 = performance.now();
const base = runBodies('bench-base', 1, baseStart, false);
const slow = runBodies('bench-slow', 2, runStart, true);
console.log(
  `generated 2 × ${REQUESTS} traces (${base.spans + slow.spans} spans) in ${((performance.now() - t0) / 1000).toFixed(1)} s`
);

async function call(url: string, method: 'GET' | 'POST', path: string, body?: unknown, raw?: string): Promise<unknown> {
  const r = await request(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

function finish(startMs: number): RunFinish {
  const lat = { count: REQUESTS, mean: 500, p50: 480, p90: 600, p95: 650, p99: 800, max: 900 };
  const none = { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null };
  return {
    workerId: 'bench-worker',
    endMs: startMs + RUN_MS,
    status: 'passed',
    summary: {
      durationS: RUN_MS / 1000,
      sent: REQUESTS,
      completed: REQUESTS,
      succeeded: REQUESTS,
      degraded: 0,
      errors: { total: 0, byKind: {} },
      timeouts: 0,
      droppedClientSide: 0,
      rps: { targetMean: 20, sent: 20, completed: 20 },
      latencyMs: lat,
      ttftMs: lat,
      itlMs: none,
      tpotMs: none,
      outputTokens: REQUESTS * 40,
      outputTokensPerS: 800,
      goodput: { good: REQUESTS, rps: 20, ratio: 1 },
      schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 2 },
      untraced: 0,
      notes: [],
    },
    thresholds: [],
    regressions: [],
    faults: [],
    slowest: [],
    failed: [],
  };
}

/** A proxy holding both runs, set up untimed. */
async function loaded(): Promise<RunningProxy> {
  const proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    chainControlUrl: undefined,
    exporterUrls: [],
    logLevel: 'silent',
    alertIntervalMs: 0,
    storeMaxSpans: 2 * (base.spans + slow.spans),
    storeMaxBytes: 8 * 1024 ** 3,
    storeMaxAgeMs: 24 * 3600_000,
    bodyLimitBytes: 64 * 1024 * 1024,
  });
  for (const [id, startMs, data] of [
    ['bench-base', baseStart, base],
    ['bench-slow', runStart, slow],
  ] as const) {
    const reg: RunRegistration = {
      runId: id,
      scenario: 'bench-steady',
      workerId: 'bench-worker',
      startMs,
      target: 'http://127.0.0.1:3310/v1/chat/completions',
      options: {},
      thresholds: [],
      faults: [],
    };
    await call(proxy.url, 'POST', '/api/runs', reg);
    for (const b of data.bodies) await call(proxy.url, 'POST', '/v1/traces', undefined, b);
    await call(proxy.url, 'POST', `/api/runs/${id}/finish`, finish(startMs));
  }
  return proxy;
}

async function compare(url: string): Promise<number> {
  const t = performance.now();
  const a = (await call(url, 'GET', '/api/runs/bench-slow/compare/bench-base')) as RunCompareAnswer;
  const ms = performance.now() - t;
  if (a.traces.run !== REQUESTS || a.traces.baseline !== REQUESTS)
    throw new Error(`traces read: ${JSON.stringify(a.traces)}`);
  if (a.candidates[0]?.service !== 'rag' || a.hops[0]?.service !== 'rag')
    throw new Error(
      `rag not first: ${a.candidates
        .slice(0, 3)
        .map((c) => c.service)
        .join(', ')} / ${a.hops[0]?.service}`
    );
  return ms;
}

const cold: number[] = [];
const warm: number[] = [];
let ragDelta = 0;
for (let i = 0; i < ROUNDS; i++) {
  const proxy = await loaded();
  try {
    cold.push(await compare(proxy.url));
    for (let k = 0; k < smoke(3, 1); k++) warm.push(await compare(proxy.url));
    const a = (await call(proxy.url, 'GET', '/api/runs/bench-slow/compare/bench-base')) as RunCompareAnswer;
    ragDelta = a.hops[0].deltaP50Ms ?? 0;
  } finally {
    await proxy.close();
  }
  console.log(
    `round ${i + 1}: cold ${cold.at(-1)!.toFixed(0)} ms, warm ${warm
      .slice(-3)
      .map((x) => x.toFixed(1))
      .join(' / ')} ms`
  );
}

const row = (name: string, xs: number[]): Record<string, string | number> => ({
  what: name,
  median_ms: median(xs),
  min_ms: Math.min(...xs),
  max_ms: Math.max(...xs),
  n: xs.length,
  target_ms: TARGET_MS,
  met: median(xs) <= TARGET_MS ? 'yes' : 'NO',
});
report(
  `Run compare through the HTTP API: 2 runs × ${REQUESTS} requests (${RUN_MS / 60_000} min at 20 req/s), rag +150 ms in the second (measured P50 delta ${ragDelta.toFixed(0)} ms)`,
  [row('cold: first compare of a fresh proxy', cold), row('warm: the same compare again', warm)],
  { requests: REQUESTS, spans: base.spans + slow.spans, coldMs: cold, warmMs: warm, targetMs: TARGET_MS }
);
