/**
 * A small real HTTP server speaking the proxy's run API as `contract/runs.ts` fixes it, for the load generator's
 * tests until they run against the real proxy: it validates every body with the contract's schemas (what does not
 * validate is answered 400 and kept in `invalid`, so tests can assert there is none), refuses a reused run id with
 * 409 unless joining (an identical registration again is a retry, as on the proxy: 200), asks for the bearer token
 * when given one, serves Prometheus HTTP SD of running workers' metrics URLs, and can be told to answer 503
 * (database down), to drop connections (proxy down) or to drop the answer to a registration it kept.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunFinish, RunHeartbeat, RunRecord, RunRegistration } from '../../../contract/runs';
import { formatZodError } from '../../../contract/zod-error';

export interface StoredRun {
  registrations: RunRegistration[];
  heartbeats: Array<RunHeartbeat & { atMs: number }>;
  finishes: Array<RunFinish & { atMs: number }>;
}

export interface ContractProxy {
  url: string;
  runs: Map<string, StoredRun>;
  /** Bodies that failed the contract: route and zod message. */
  invalid: string[];
  /** Authorization headers seen. */
  auth: string[];
  /** Records served by GET /api/runs/:runId (baselines). */
  records: Map<string, RunRecord>;
  /** The next `n` calls to routes matching `route` (e.g. 'finish') answer `status` (with Retry-After when given). */
  fail(route: 'register' | 'heartbeat' | 'finish', n: number, status: number, retryAfter?: string): void;
  /** While down, every connection is dropped without an answer. */
  setDown(down: boolean): void;
  /** The next `n` registrations are kept, but their answers are lost (the connection drops). */
  loseRegistrationAnswers(n: number): void;
  close(): Promise<void>;
}

export async function startContractProxy(opts: { token?: string; port?: number } = {}): Promise<ContractProxy> {
  const runs = new Map<string, StoredRun>();
  const records = new Map<string, RunRecord>();
  const invalid: string[] = [];
  const auth: string[] = [];
  const failures: Record<string, { n: number; status: number; retryAfter?: string }> = {};
  let down = false;
  let loseAnswers = 0;

  const send = (
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {}
  ): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (
    res: http.ServerResponse,
    status: number,
    code: string,
    message: string,
    headers?: Record<string, string>
  ) => send(res, status, { error: { code, message } }, headers);

  const server = http.createServer((req, res) => {
    if (down) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/api/runs/targets') {
        const groups = [];
        for (const [runId, r] of runs) {
          const finished = new Set(r.finishes.map((f) => f.workerId));
          for (const reg of r.registrations) {
            if (!reg.metricsUrl || finished.has(reg.workerId)) continue;
            const m = new URL(reg.metricsUrl);
            groups.push({
              targets: [m.host],
              labels: { __metrics_path__: m.pathname, hopscope_run_id: runId, hopscope_worker: reg.workerId },
            });
          }
        }
        send(res, 200, groups);
        return;
      }
      auth.push(String(req.headers.authorization ?? ''));
      if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
        error(res, 401, 'unauthorized', 'a bearer token is required');
        return;
      }
      let body: unknown = null;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : null;
      } catch {
        error(res, 400, 'validation', 'not JSON');
        return;
      }
      const m = /^\/api\/runs(?:\/([^/]+)(?:\/(heartbeat|finish))?)?$/.exec(url.pathname);
      if (!m) {
        error(res, 404, 'not_found', `no route ${req.method} ${url.pathname}`);
        return;
      }
      const runId = m[1] ? decodeURIComponent(m[1]) : undefined;
      const route = req.method === 'POST' && !runId ? 'register' : req.method === 'POST' ? m[2] : 'get';
      const f = route ? failures[route] : undefined;
      if (f && f.n > 0) {
        f.n--;
        error(
          res,
          f.status,
          'unavailable',
          'the database is unavailable',
          f.retryAfter ? { 'retry-after': f.retryAfter } : {}
        );
        return;
      }
      if (route === 'register') {
        const r = RunRegistration.safeParse(body);
        if (!r.success) {
          invalid.push(`register: ${formatZodError(r.error)}`);
          error(res, 400, 'validation', formatZodError(r.error));
          return;
        }
        const existing = runs.get(r.data.runId);
        // As the proxy does: the same worker sending the same registration again is a retry.
        if (existing?.registrations.some((x) => JSON.stringify(x) === JSON.stringify(r.data))) {
          send(res, 200, { runId: r.data.runId });
          return;
        }
        if (existing && !r.data.join) {
          error(res, 409, 'run_exists', `run ${r.data.runId} exists`);
          return;
        }
        const run = existing ?? { registrations: [], heartbeats: [], finishes: [] };
        run.registrations.push(r.data);
        runs.set(r.data.runId, run);
        if (loseAnswers > 0) {
          loseAnswers--;
          req.socket.destroy();
          return;
        }
        send(res, existing ? 200 : 201, { runId: r.data.runId });
        return;
      }
      if (route === 'get') {
        const rec = records.get(runId!);
        if (!rec) {
          error(res, 404, 'not_found', `no run ${runId}`);
          return;
        }
        send(res, 200, rec);
        return;
      }
      const run = runs.get(runId!);
      if (!run) {
        error(res, 404, 'not_found', `no run ${runId}`);
        return;
      }
      if (route === 'heartbeat') {
        const r = RunHeartbeat.safeParse(body);
        if (!r.success) {
          invalid.push(`heartbeat: ${formatZodError(r.error)}`);
          error(res, 400, 'validation', formatZodError(r.error));
          return;
        }
        run.heartbeats.push({ ...r.data, atMs: Date.now() });
        send(res, 200, { ok: true });
        return;
      }
      const r = RunFinish.safeParse(body);
      if (!r.success) {
        invalid.push(`finish: ${formatZodError(r.error)}`);
        error(res, 400, 'validation', formatZodError(r.error));
        return;
      }
      run.finishes.push({ ...r.data, atMs: Date.now() });
      send(res, 200, { ok: true });
    });
  });
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runs,
    invalid,
    auth,
    records,
    fail: (route, n, status, retryAfter) => {
      failures[route] = { n, status, retryAfter };
    },
    setDown: (d) => {
      down = d;
    },
    loseRegistrationAnswers: (n) => {
      loseAnswers = n;
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A RunRecord around a client summary (a finished baseline run). */
export function recordOf(
  runId: string,
  scenario: string,
  summary: RunRecord['summary'],
  status: RunRecord['status'] = 'passed'
): RunRecord {
  return RunRecord.parse({
    runId,
    scenario,
    status,
    startMs: Date.now() - 120_000,
    endMs: Date.now() - 60_000,
    durationS: 60,
    targetRps: 5,
    achievedRps: 5,
    ttftP99Ms: summary?.ttftMs.p99 ?? null,
    e2eP99Ms: summary?.latencyMs.p99 ?? null,
    goodputRatio: 1,
    errors: 0,
    errorRate: 0,
    workers: 1,
    live: null,
    target: 'http://x/v1/chat/completions',
    options: {},
    baselineRunId: null,
    thresholds: [],
    regressions: [],
    summary,
    merge: null,
    faults: [],
    slowest: [],
    failed: [],
    abortReason: null,
  });
}
