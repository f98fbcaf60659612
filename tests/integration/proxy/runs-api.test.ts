/**
 * The proxy's run API over HTTP, on both databases it runs on: embedded PGlite in a data dir and a real PostgreSQL
 * (tests/support/postgres.ts). Register → heartbeat → finish → list/get; a reused run id is a 409; a second worker
 * joins and its figures add up; a silent run is marked aborted; bad input answers 400/404 with a clear message; the
 * database is in /api/health. PGlite: runs survive a restart, a second proxy on the same dir is refused at start.
 * PostgreSQL: an unreachable server at start is a clear startup error.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  emptySketch,
  HealthAnswer,
  RunList,
  RunRecord,
  sketchAdd,
  type ClientSummary,
  type RunFinish,
  type RunRegistration,
} from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import type { ProxyConfig } from '../../../backend-proxy/src/config';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';
import { freePort } from '../../support/real-servers';

const QUIET: Partial<ProxyConfig> = {
  port: 0,
  prometheusUrl: undefined,
  exporterUrls: [],
  chainControlUrl: undefined,
  alertIntervalMs: 0,
};

/** A worker's client summary of `sent` requests with e2e latencies spread over [base, base + 100) ms. */
function summary(sent: number, base: number, errors = 0): ClientSummary {
  const e2e = emptySketch();
  const ttft = emptySketch();
  const lat: number[] = [];
  for (let i = 0; i < sent - errors; i++) {
    const v = base + (i * 100) / sent;
    lat.push(v);
    sketchAdd(e2e, v);
    sketchAdd(ttft, v / 4);
  }
  const pct = (q: number): number | null =>
    lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] : null;
  const ls = {
    count: lat.length,
    mean: lat.length ? lat.reduce((a, b) => a + b, 0) / lat.length : null,
    p50: pct(0.5),
    p90: pct(0.9),
    p95: pct(0.95),
    p99: pct(0.99),
    max: lat.at(-1) ?? null,
  };
  const none = { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null };
  return {
    durationS: 10,
    sent,
    completed: sent,
    succeeded: sent - errors,
    degraded: 0,
    errors: { total: errors, byKind: errors ? { http_503: errors } : {} },
    timeouts: 0,
    droppedClientSide: 0,
    rps: { targetMean: sent / 10, sent: sent / 10, completed: sent / 10 },
    latencyMs: ls,
    ttftMs: {
      ...ls,
      mean: ls.mean === null ? null : ls.mean / 4,
      p50: ls.p50 && ls.p50 / 4,
      p90: ls.p90 && ls.p90 / 4,
      p95: ls.p95 && ls.p95 / 4,
      p99: ls.p99 && ls.p99 / 4,
      max: ls.max && ls.max / 4,
    },
    itlMs: none,
    tpotMs: none,
    outputTokens: sent * 10,
    outputTokensPerS: sent,
    goodput: { good: sent - errors, rps: (sent - errors) / 10, ratio: (sent - errors) / sent },
    schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 2 },
    untraced: 0,
    sketches: { e2e, ttft },
    notes: [],
  };
}

const registration = (runId: string, workerId = 'w1', extra: Partial<RunRegistration> = {}): RunRegistration => ({
  runId,
  scenario: 'single-turn-short',
  workerId,
  startMs: Date.now(),
  target: 'http://127.0.0.1:3310/v1/chat/completions',
  options: { rps: 10 },
  thresholds: ['p99_ms<5000'],
  faults: [],
  metricsUrl: 'http://127.0.0.1:9464/metrics',
  ...extra,
});

const finish = (workerId: string, s: ClientSummary, status: RunFinish['status'] = 'passed'): RunFinish => ({
  workerId,
  endMs: Date.now(),
  status,
  summary: s,
  thresholds: [{ threshold: 'p99_ms<5000', metric: 'p99_ms', actual: s.latencyMs.p99, pass: true }],
  regressions: [],
  faults: [
    {
      atS: 2,
      target: 'rag',
      kind: 'latency',
      magnitude: 100,
      forS: 3,
      id: 'f1',
      startMs: Date.now() - 5000,
      endMs: Date.now() - 2000,
    },
  ],
  slowest: [
    {
      traceId: 'a'.repeat(32),
      traceIdSource: 'traceresponse',
      startMs: Date.now() - 3000,
      e2eMs: 190,
      ttftMs: 40,
      outcome: 'ok',
    },
  ],
  failed: [],
});

async function call(
  proxy: RunningProxy,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; body: any; headers: Headers }> {
  const r = await fetch(`${proxy.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null, headers: r.headers };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The same behaviour on each database: `open` gives the proxy settings of a fresh, empty database. */
function apiSuite(name: string, open: () => Promise<Partial<ProxyConfig>>, skip?: string): void {
  describe(`run API on ${name}`, { skip }, () => {
    let proxy: RunningProxy;
    let db: Partial<ProxyConfig>;
    before(async () => {
      db = await open();
      proxy = await startProxy({ ...QUIET, ...db });
    });
    after(async () => {
      await proxy?.close();
    });

    test('register → heartbeat → finish, then the list and the record', async () => {
      const reg = await call(proxy, 'POST', '/api/runs', registration('life-1'));
      assert.equal(reg.status, 201, JSON.stringify(reg.body));
      assert.equal(RunRecord.parse(reg.body).status, 'running');
      const hb = await call(proxy, 'POST', '/api/runs/life-1/heartbeat', {
        workerId: 'w1',
        sent: 40,
        completed: 38,
        errors: 1,
        inFlight: 2,
      });
      assert.equal(hb.status, 200, JSON.stringify(hb.body));
      const live = RunList.parse((await call(proxy, 'GET', '/api/runs')).body).runs.find((r) => r.runId === 'life-1')!;
      assert.deepEqual(
        { ...live.live, lastHeartbeatMs: 0 },
        { sent: 40, completed: 38, errors: 1, inFlight: 2, lastHeartbeatMs: 0 }
      );
      const report = finish('w1', summary(100, 50, 2));
      const fin = await call(proxy, 'POST', '/api/runs/life-1/finish', report);
      assert.equal(fin.status, 200, JSON.stringify(fin.body));
      const rec = RunRecord.parse((await call(proxy, 'GET', '/api/runs/life-1')).body);
      assert.equal(rec.status, 'passed');
      assert.equal(rec.summary!.sent, 100);
      assert.equal(rec.errors, 2);
      assert.equal(rec.errorRate, 0.02);
      assert.equal(rec.e2eP99Ms, rec.summary!.latencyMs.p99);
      assert.deepEqual(
        rec.thresholds.map((t) => [t.threshold, t.pass]),
        [['p99_ms<5000', true]]
      );
      assert.equal(rec.faults[0].target, 'rag');
      assert.equal(rec.slowest[0].traceId, 'a'.repeat(32));
      assert.deepEqual(rec.options, { rps: 10 });
      const list = RunList.parse((await call(proxy, 'GET', `/api/runs?from=${rec.startMs - 1000}&to=now`)).body);
      const row = list.runs.find((r) => r.runId === 'life-1')!;
      assert.equal(row.status, 'passed');
      assert.equal(row.endMs, rec.endMs);
      // A retried finish (its answer lost) is the same finish, not a conflict; another report is.
      assert.equal((await call(proxy, 'POST', '/api/runs/life-1/finish', report)).status, 200);
      const other = await call(proxy, 'POST', '/api/runs/life-1/finish', finish('w1', summary(90, 50)));
      assert.equal(other.status, 409);
      assert.match(other.body.error.message, /already finished/);
    });

    test('a reused run id is a 409 that says what to do; the same registration sent again is not', async () => {
      const first = registration('reuse-1');
      assert.equal((await call(proxy, 'POST', '/api/runs', first)).status, 201);
      assert.equal((await call(proxy, 'POST', '/api/runs', first)).status, 201, 'a retried registration');
      const again = await call(proxy, 'POST', '/api/runs', registration('reuse-1', 'other-worker'));
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'conflict');
      assert.match(again.body.error.message, /run id "reuse-1" is already used .*choose a new run id/);
      const otherScenario = await call(
        proxy,
        'POST',
        '/api/runs',
        registration('reuse-1', 'w9', { join: true, scenario: 'chaos-gpu-oom' })
      );
      assert.equal(otherScenario.status, 409);
      assert.match(otherScenario.body.error.message, /scenario/);
    });

    test('a second worker joins: live totals and the final summary add up', async () => {
      assert.equal((await call(proxy, 'POST', '/api/runs', registration('dist-1', 'w1'))).status, 201);
      assert.equal(
        (
          await call(
            proxy,
            'POST',
            '/api/runs',
            registration('dist-1', 'w2', { join: true, metricsUrl: 'http://127.0.0.1:9465/custom' })
          )
        ).status,
        201
      );
      await call(proxy, 'POST', '/api/runs/dist-1/heartbeat', {
        workerId: 'w1',
        sent: 10,
        completed: 9,
        errors: 0,
        inFlight: 1,
      });
      await call(proxy, 'POST', '/api/runs/dist-1/heartbeat', {
        workerId: 'w2',
        sent: 7,
        completed: 5,
        errors: 1,
        inFlight: 2,
      });
      const running = RunRecord.parse((await call(proxy, 'GET', '/api/runs/dist-1')).body);
      assert.equal(running.workers, 2);
      assert.deepEqual(
        { ...running.live, lastHeartbeatMs: 0 },
        { sent: 17, completed: 14, errors: 1, inFlight: 3, lastHeartbeatMs: 0 }
      );
      // Both workers are scrape targets while they run; the second one's path is not /metrics.
      const sd = (await call(proxy, 'GET', '/api/runs/targets')).body as Array<{
        targets: string[];
        labels: Record<string, string>;
      }>;
      const mine = sd.filter((g) => g.labels.run_id === 'dist-1');
      assert.deepEqual(mine.map((g) => g.targets[0]).sort(), ['127.0.0.1:9464', '127.0.0.1:9465']);
      assert.equal(mine.find((g) => g.targets[0] === '127.0.0.1:9465')!.labels.__metrics_path__, '/custom');
      assert.ok(mine.every((g) => g.labels.scenario === 'single-turn-short'));
      await call(proxy, 'POST', '/api/runs/dist-1/finish', finish('w1', summary(60, 40)));
      assert.equal(
        RunRecord.parse((await call(proxy, 'GET', '/api/runs/dist-1')).body).status,
        'running',
        'one worker still runs'
      );
      await call(proxy, 'POST', '/api/runs/dist-1/finish', finish('w2', summary(40, 200, 4)));
      const done = RunRecord.parse((await call(proxy, 'GET', '/api/runs/dist-1')).body);
      assert.equal(done.status, 'passed');
      assert.equal(done.summary!.sent, 100);
      assert.equal(done.summary!.errors.total, 4);
      assert.equal(done.merge?.workers, 2);
      assert.equal(done.merge?.percentiles, 'bucketed');
      // The merged P99 is the second worker's tail (200–300 ms), within the sketch's 1 %.
      assert.ok(done.e2eP99Ms! > 280 && done.e2eP99Ms! < 305, String(done.e2eP99Ms));
      const sdAfter = (await call(proxy, 'GET', '/api/runs/targets')).body as Array<{ labels: Record<string, string> }>;
      assert.ok(!sdAfter.some((g) => g.labels.run_id === 'dist-1'), 'finished workers are no longer scraped');
      const late = await call(proxy, 'POST', '/api/runs', registration('dist-1', 'w3', { join: true }));
      assert.equal(late.status, 409);
      assert.match(late.body.error.message, /has ended/);
    });

    test('list filters: time range, scenario, status, paging; bad parameters are 400s naming them', async () => {
      const t = Date.now();
      for (const [id, sc] of [
        ['f-a', 'alpha'],
        ['f-b', 'beta'],
        ['f-c', 'alpha'],
      ] as const) {
        await call(proxy, 'POST', '/api/runs', registration(id, 'w1', { scenario: sc, startMs: t }));
      }
      await call(proxy, 'POST', '/api/runs/f-c/finish', finish('w1', summary(10, 10), 'failed'));
      const alpha = RunList.parse((await call(proxy, 'GET', `/api/runs?scenario=alpha&from=${t - 1}`)).body);
      assert.deepEqual(alpha.runs.map((r) => r.runId).sort(), ['f-a', 'f-c']);
      const failed = RunList.parse((await call(proxy, 'GET', '/api/runs?status=failed')).body);
      assert.deepEqual(
        failed.runs.map((r) => r.runId),
        ['f-c']
      );
      const page = RunList.parse((await call(proxy, 'GET', `/api/runs?from=${t - 1}&limit=2&offset=1`)).body);
      assert.equal(page.runs.length, 2);
      assert.ok(page.total >= 3);
      assert.equal(
        RunList.parse((await call(proxy, 'GET', `/api/runs?to=${t - 60_000}`)).body).runs.filter((r) =>
          r.runId.startsWith('f-')
        ).length,
        0
      );
      for (const [q, name] of [
        ['status=done', 'status'],
        ['limit=0', 'limit'],
        ['from=yesterday', 'from'],
        ['from=now&to=now-1h', 'from'],
      ]) {
        const r = await call(proxy, 'GET', `/api/runs?${q}`);
        assert.equal(r.status, 400, q);
        assert.ok(r.body.error.message.startsWith(name), `${q}: ${r.body.error.message}`);
      }
    });

    test('unknown run, unknown baseline, malformed ids and bodies: clear 404s and 400s', async () => {
      await call(proxy, 'POST', '/api/runs', registration('known-1'));
      const unknown = await call(proxy, 'GET', '/api/runs/nope-1');
      assert.equal(unknown.status, 404);
      assert.match(unknown.body.error.message, /nope-1/);
      const base = await call(proxy, 'GET', '/api/runs/known-1/compare/nope-2');
      assert.equal(base.status, 404);
      assert.match(base.body.error.message, /unknown baseline run nope-2/);
      assert.equal((await call(proxy, 'GET', '/api/runs/nope-3/compare/known-1')).status, 404);
      assert.equal((await call(proxy, 'GET', `/api/runs/${encodeURIComponent('bad id!')}`)).status, 400);
      const bad = await call(proxy, 'POST', '/api/runs', { ...registration('bad-1'), startMs: 'yesterday' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /startMs/);
      // An absurd clock (9e15 ms, or seconds sent as ms) would bound every query of the run page: refused, not stored.
      for (const startMs of [9e15, Math.floor(Date.now() / 1000)]) {
        const absurd = await call(proxy, 'POST', '/api/runs', { ...registration('absurd-1'), startMs });
        assert.equal(absurd.status, 400, String(startMs));
        assert.match(absurd.body.error.message, /startMs.*epoch time in ms/);
      }
      assert.equal((await call(proxy, 'GET', '/api/runs/absurd-1')).status, 404, 'nothing stored');
      const hb = await call(proxy, 'POST', '/api/runs/nope-4/heartbeat', {
        workerId: 'w1',
        sent: 1,
        completed: 1,
        errors: 0,
        inFlight: 0,
      });
      assert.equal(hb.status, 404);
      assert.match(hb.body.error.message, /register it first/);
    });

    test('the database is a source in /api/health', async () => {
      const h = HealthAnswer.parse((await call(proxy, 'GET', '/api/health')).body);
      const d = h.sources.find((s) => s.source === 'database');
      assert.ok(d?.ok, JSON.stringify(h.sources));
    });

    test('a run without heartbeats is marked aborted, with the reason', async () => {
      const short = await startProxy({ ...QUIET, ...(await open()), runHeartbeatTimeoutMs: 1000 });
      try {
        assert.equal((await call(short, 'POST', '/api/runs', registration('silent-1'))).status, 201);
        const rec = await waitFor(
          'the run aborted',
          async () => {
            const r = RunRecord.parse((await call(short, 'GET', '/api/runs/silent-1')).body);
            return r.status === 'aborted' ? r : undefined;
          },
          10_000
        );
        assert.match(rec.abortReason ?? '', /no heartbeat from worker w1/);
        assert.ok(rec.endMs !== null);
        // A late finish of that worker is still kept: nothing it measured is lost.
        const late = await call(short, 'POST', '/api/runs/silent-1/finish', finish('w1', summary(20, 30)));
        assert.equal(late.status, 200, JSON.stringify(late.body));
        assert.equal(RunRecord.parse((await call(short, 'GET', '/api/runs/silent-1')).body).summary?.sent, 20);
      } finally {
        await short.close();
      }
    });
  });
}

let pgServer: PostgresServer | undefined;
const pgSkip = postgresSkipReason();
const dirs: string[] = [];
after(async () => {
  await pgServer?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

apiSuite('PGlite (HOPSCOPE_DATA_DIR)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'runs-api-pglite-'));
  dirs.push(dataDir);
  return { dataDir };
});

apiSuite(
  'PostgreSQL (HOPSCOPE_DATABASE_URL)',
  async () => {
    pgServer ??= await startPostgres();
    return { databaseUrl: await pgServer.createDatabase('runs_api') };
  },
  pgSkip
);

describe('databases at start', () => {
  test('PGlite: runs survive a restart on the same data dir; a second proxy on it is refused at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runs-api-restart-'));
    dirs.push(dataDir);
    const a = await startProxy({ ...QUIET, dataDir });
    await call(a, 'POST', '/api/runs', registration('kept-1'));
    await call(a, 'POST', '/api/runs/kept-1/finish', finish('w1', summary(30, 20)));
    await assert.rejects(
      startProxy({ ...QUIET, dataDir }),
      (e: Error) =>
        e.name === 'DatabaseStartError' && /in use by another proxy/.test(e.message) && e.message.includes(dataDir)
    );
    await a.close();
    const b = await startProxy({ ...QUIET, dataDir });
    try {
      const rec = RunRecord.parse((await call(b, 'GET', '/api/runs/kept-1')).body);
      assert.equal(rec.status, 'passed');
      assert.equal(rec.summary?.sent, 30);
    } finally {
      await b.close();
    }
  });

  test(
    'PostgreSQL that cannot be reached at start: a startup error naming it, not a hang',
    { skip: pgSkip },
    async () => {
      const port = await freePort();
      const t0 = Date.now();
      await assert.rejects(
        startProxy({
          ...QUIET,
          databaseUrl: `postgres://hopscope:secret@127.0.0.1:${port}/hopscope`,
          databaseConnectTimeoutMs: 1500,
        }),
        (e: Error) =>
          e.name === 'DatabaseStartError' &&
          e.message.includes(`127.0.0.1:${port}`) &&
          !e.message.includes('secret') &&
          /could not be reached/.test(e.message)
      );
      assert.ok(Date.now() - t0 < 15_000);
    }
  );
});
