/**
 * Run compare in Tempo mode. Tempo cannot run here, so the fake is `tempoReplay` below: a tiny HTTP server answering
 * in the exact formats of Tempo's recorded answers (../shared/fixtures/tempo): the TraceQL search as
 * docs_search_traceql_compact.json (hex ids with leading zeros stripped, `spanSets`, `metrics`), trace by id as
 * derived_v2_trace_by_id_from_vulture.json (`{trace: {resourceSpans}}`, base64 ids, enum names, 64-bit ints as
 * strings, zero values omitted). Its content is two seeded synthetic runs of our chain; it answers a search only
 * for the query `{ span.hopscope.run_id = "<id>" }` (optionally `&& status = error`) inside the asked time range, at
 * most `limit` traces, as Tempo does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RunCompareAnswer, type RunRecord, type Span } from '../../../contract';
import { DomainError } from '../../../backend-proxy/src/domain/errors';
import { RunCompareService, TempoRunTraces } from '../../../backend-proxy/src/services/run-compare';
import { buildTraceQL, TempoSource } from '../../../backend-proxy/src/sources/tempo';
import { fixture } from '../../support/fixtures';
import { syntheticTrace, type SyntheticFault } from '../../support/rca/synthetic';
import { tinyServer } from '../../support/otlp-spans';
import { searchHit, tempoTrace } from '../../support/tempo-replay';

const FX = fixture('tempo');
const searchTemplate = JSON.parse(readFileSync(`${FX}/docs_search_traceql_compact.json`, 'utf8'));
const T0 = 1_767_225_600_000;

function runTraces(
  runId: string,
  seed: number,
  n: number,
  startMs: number,
  fault?: SyntheticFault,
  everyMs = 100
): Span[][] {
  return Array.from({ length: n }, (_, i) =>
    syntheticTrace({
      seed: seed * 100_003 + i,
      startMs: startMs + i * everyMs,
      fault,
      kernelNoise: 0,
      strayRetransmits: 0,
    }).spans.map((s) => ({ ...s, attributes: { ...s.attributes, 'hopscope.run_id': runId } }))
  );
}

const runs: Record<string, Span[][]> = {
  'base-t': runTraces('base-t', 21, 60, T0),
  'slow-t': runTraces('slow-t', 22, 60, T0 + 60_000, { hop: 'embedding', kind: 'latency', magnitude: 200 }),
  // 200 requests in 2 s: more per second than one search slice returns.
  dense: runTraces('dense', 23, 200, T0 + 120_000, { hop: 'embedding', kind: 'latency', magnitude: 200 }, 10),
};
const queries: string[] = [];
let tempo: Awaited<ReturnType<typeof tinyServer>>;

before(async () => {
  const byId = new Map<string, Span[]>();
  for (const list of Object.values(runs)) for (const t of list) byId.set(t[0].traceId, t);
  tempo = await tinyServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const json = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (u.pathname === '/api/search') {
      const q = u.searchParams.get('q') ?? '';
      queries.push(q);
      const m = /^\{ span\.hopscope\.run_id = "([^"]+)"( && status = error)? \}$/.exec(q);
      if (!m) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        return void res.end(`unexpected query ${q}`);
      }
      const from = Number(u.searchParams.get('start')) * 1000;
      const to = Number(u.searchParams.get('end')) * 1000;
      const limit = Number(u.searchParams.get('limit') ?? 20);
      const hits = (runs[m[1]] ?? [])
        .filter((t) => !m[2] || t.some((s) => s.status === 'error' || s.status === 'timeout'))
        .filter((t) => {
          const st = Math.min(...t.map((s) => s.startMs));
          return st >= from && st < to;
        })
        .slice(0, limit);
      return json({ traces: hits.map(searchHit), metrics: searchTemplate.metrics });
    }
    const tr = /^\/api\/v2\/traces\/([0-9a-f]{32})$/.exec(u.pathname);
    if (tr) {
      const spans = byId.get(tr[1]);
      if (!spans) {
        res.writeHead(404);
        return void res.end();
      }
      return json(tempoTrace(spans));
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found\n');
  });
});
after(async () => {
  await tempo?.close();
});

function record(runId: string, startMs: number, endMs: number): RunRecord {
  return {
    runId,
    scenario: 's',
    status: 'passed',
    startMs,
    endMs,
    durationS: (endMs - startMs) / 1000,
    targetRps: 10,
    achievedRps: 10,
    ttftP99Ms: null,
    e2eP99Ms: null,
    goodputRatio: null,
    errors: 0,
    errorRate: 0,
    workers: 1,
    live: null,
    target: 't',
    options: {},
    baselineRunId: null,
    thresholds: [],
    regressions: [],
    summary: null,
    merge: null,
    faults: [],
    slowest: [],
    failed: [],
    abortReason: null,
  };
}

test('TraceQL for a run: the span attribute, as an escaped string literal', () => {
  assert.equal(buildTraceQL({ runId: 'ci-1' }), '{ span.hopscope.run_id = "ci-1" }');
  assert.equal(buildTraceQL({ runId: 'x"y', status: 'error' }), '{ span.hopscope.run_id = "x\\"y" && status = error }');
});

test("Tempo mode: the run's traces by TraceQL, sampled over its window; the changed hop ranks first", async () => {
  const records = new Map([
    ['base-t', record('base-t', T0, T0 + 6000)],
    ['slow-t', record('slow-t', T0 + 60_000, T0 + 66_000)],
  ]);
  const service = new RunCompareService(
    { get: async (id) => records.get(id) },
    new TempoRunTraces(new TempoSource(tempo.url, 30_000)) // a deadline, not a figure: a slice that misses it is a trace not counted
  );
  const a = RunCompareAnswer.parse(await service.compare('slow-t', 'base-t'));
  assert.ok(
    queries.includes('{ span.hopscope.run_id = "slow-t" }') &&
      queries.includes('{ span.hopscope.run_id = "base-t" && status = error }'),
    queries.join(' | ')
  );
  assert.equal(a.traces.source, 'tempo');
  // 6 s of run in 1-second slices of at most 20: 60 traces are all found, and no slice was full.
  assert.equal(a.traces.run, 60);
  assert.equal(a.traces.baseline, 60);
  assert.equal(a.traces.sampled, false);
  assert.equal(a.candidates[0]?.service, 'embedding', a.candidates.map((c) => c.service).join(', '));
  assert.equal(a.hops[0].service, 'embedding');
  assert.ok(a.hops[0].deltaP50Ms! > 150, String(a.hops[0].deltaP50Ms));
});

test('Tempo mode: a run longer than the sample says sampled, and unknown run ids find nothing', async () => {
  const records = new Map([
    ['base-t', record('base-t', T0, T0 + 6000)],
    ['dense', record('dense', T0 + 120_000, T0 + 122_000)],
    ['other', record('other', T0, T0 + 5000)],
  ]);
  const service = new RunCompareService(
    { get: async (id) => records.get(id) },
    new TempoRunTraces(new TempoSource(tempo.url, 3000))
  );
  const a = await service.compare('dense', 'base-t');
  assert.equal(a.traces.sampled, true);
  // Its 2 s fall in 2–3 one-second slices (the window has 5 s of slack on each side), at most 20 traces each.
  assert.ok(a.traces.run < 200 && a.traces.run >= 40, String(a.traces.run));
  assert.equal(a.candidates[0]?.service, 'embedding');
  assert.ok(
    a.missing.some((m) => m.includes('a sample of')),
    a.missing.join(' | ')
  );
  const none = await service.compare('other', 'base-t');
  assert.equal(none.traces.run, 0);
  assert.ok(
    none.missing.some((m) => m.startsWith('run other: Tempo found no traces with span.hopscope.run_id="other"')),
    none.missing.join(' | ')
  );
});

test('Tempo down: a 502 naming Tempo, not a crash', async () => {
  const records = new Map([
    ['base-t', record('base-t', T0, T0 + 6000)],
    ['slow-t', record('slow-t', T0 + 60_000, T0 + 66_000)],
  ]);
  const service = new RunCompareService(
    { get: async (id) => records.get(id) },
    new TempoRunTraces(new TempoSource('http://127.0.0.1:1', 500))
  );
  await assert.rejects(
    service.compare('slow-t', 'base-t'),
    (e: unknown) => e instanceof DomainError && e.kind === 'upstream' && /tempo/.test(e.message)
  );
});
