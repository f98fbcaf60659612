/**
 * Tempo mode: service and pod figures from Tempo's span metrics in a real Prometheus (Debian 2.42), backfilled with
 * `promtool tsdb create-blocks-from openmetrics` with series of known rates (`traces_spanmetrics_calls_total`,
 * `traces_spanmetrics_latency_bucket`, labels service, span_kind, status_code, k8s_pod_name, source="tempo"), behind
 * a fake Tempo that replays Tempo's own recorded answers (../shared/fixtures/tempo). The fake checks the tenant and
 * basic auth the proxy must send; an auth gate in front of Prometheus checks its bearer token and tenant.
 * Expected percentiles are computed from the backfilled buckets with histogram_quantile's own interpolation.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodsAnswer, ServicesAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { fixture } from '../../support/fixtures';
import { tinyServer } from '../../support/otlp-spans';
import { freePort } from '../../support/real-servers';

const PROMTOOL = '/usr/bin/promtool';
const PROMETHEUS = '/usr/bin/prometheus';
const have = spawnSync(PROMTOOL, ['--version']).status === 0 && spawnSync(PROMETHEUS, ['--version']).status === 0;
const skip = have ? false : 'the Debian prometheus and promtool binaries are not installed';

const STEP_S = 15;
const HOUR_S = 3600;
/** The backfill ends 10 minutes ago, on a 15 s boundary. */
const END_S = Math.floor((Date.now() / 1000 - 600) / STEP_S) * STEP_S;
const START_S = END_S - HOUR_S;
const RANGE = { from: (END_S - 1800) * 1000, to: END_S * 1000 };

/** Series of known rates (per second), with a latency distribution as shares per bucket bound (seconds). */
interface Known {
  service: string;
  pod?: string;
  kind: string;
  status: string;
  rate: number;
  buckets: Array<[number, number]>;
}
const KNOWN: Known[] = [
  {
    service: 'gateway',
    pod: 'gateway-0',
    kind: 'SPAN_KIND_SERVER',
    status: 'STATUS_CODE_UNSET',
    rate: 4,
    buckets: [
      [0.1, 0.5],
      [0.5, 1],
    ],
  },
  {
    service: 'gateway',
    pod: 'gateway-0',
    kind: 'SPAN_KIND_SERVER',
    status: 'STATUS_CODE_ERROR',
    rate: 0.2,
    buckets: [
      [0.1, 0.5],
      [0.5, 1],
    ],
  },
  {
    service: 'gateway',
    pod: 'gateway-1',
    kind: 'SPAN_KIND_SERVER',
    status: 'STATUS_CODE_UNSET',
    rate: 1,
    buckets: [
      [0.1, 0.5],
      [0.5, 1],
    ],
  },
  // The gateway's client spans to its callees: spans, not requests of the gateway.
  {
    service: 'gateway',
    pod: 'gateway-0',
    kind: 'SPAN_KIND_CLIENT',
    status: 'STATUS_CODE_UNSET',
    rate: 8,
    buckets: [[1, 1]],
  },
  {
    service: 'rag',
    pod: 'rag-0',
    kind: 'SPAN_KIND_SERVER',
    status: 'STATUS_CODE_UNSET',
    rate: 2,
    buckets: [
      [0.05, 0.9],
      [0.25, 1],
    ],
  },
  {
    service: 'rag',
    pod: 'rag-1',
    kind: 'SPAN_KIND_SERVER',
    status: 'STATUS_CODE_UNSET',
    rate: 2,
    buckets: [
      [0.05, 0.9],
      [0.25, 1],
    ],
  },
  // A service with internal spans only, and no pod dimension: booked on its name.
  { service: 'batcher', kind: 'SPAN_KIND_INTERNAL', status: 'STATUS_CODE_UNSET', rate: 3, buckets: [[0.01, 1]] },
];
const LE = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const labels = (k: Known, extra = ''): string =>
  `{service="${k.service}",span_kind="${k.kind}",status_code="${k.status}"${k.pod ? `,k8s_pod_name="${k.pod}"` : ''},source="tempo"${extra}}`;
/** The share of a series' calls at or under `le`. */
const share = (k: Known, le: number): number => [...k.buckets].reverse().find(([b]) => b <= le)?.[1] ?? 0;

function openMetrics(): string {
  const out: string[] = ['# TYPE traces_spanmetrics_calls counter'];
  for (const k of KNOWN)
    for (let t = START_S; t <= END_S; t += STEP_S)
      out.push(`traces_spanmetrics_calls_total${labels(k)} ${k.rate * (t - START_S)} ${t}`);
  out.push('# TYPE traces_spanmetrics_latency histogram');
  for (const k of KNOWN) {
    for (const le of [...LE, Infinity]) {
      const f = le === Infinity ? 1 : share(k, le);
      for (let t = START_S; t <= END_S; t += STEP_S)
        out.push(
          `traces_spanmetrics_latency_bucket${labels(k, `,le="${le === Infinity ? '+Inf' : le}"`)} ${f * k.rate * (t - START_S)} ${t}`
        );
    }
    for (let t = START_S; t <= END_S; t += STEP_S)
      out.push(`traces_spanmetrics_latency_count${labels(k)} ${k.rate * (t - START_S)} ${t}`);
    for (let t = START_S; t <= END_S; t += STEP_S)
      out.push(`traces_spanmetrics_latency_sum${labels(k)} ${0.1 * k.rate * (t - START_S)} ${t}`);
  }
  out.push('# EOF');
  return `${out.join('\n')}\n`;
}

/** histogram_quantile's linear interpolation inside the bucket where the rank falls (first bucket from 0). */
function quantileOf(parts: Known[], q: number): number {
  const cum = LE.map((le) => parts.reduce((n, k) => n + k.rate * share(k, le), 0));
  const total = parts.reduce((n, k) => n + k.rate, 0);
  const rank = q * total;
  const i = cum.findIndex((c) => c >= rank);
  const lo = i === 0 ? 0 : LE[i - 1];
  const below = i === 0 ? 0 : cum[i - 1];
  return (lo + (LE[i] - lo) * ((rank - below) / (cum[i] - below))) * 1000;
}

const BEARER = 'prom-s3cret-token';
const TEMPO_USER = 'tempo-reader';
const TEMPO_PASS = 'tempo-s3cret';

describe('Tempo mode: span metrics of known rates in a real Prometheus, a recorded Tempo', { skip }, () => {
  let dir: string;
  let prom: ChildProcess;
  let promUrl: string;
  let gate: Awaited<ReturnType<typeof tinyServer>>;
  let tempo: Awaited<ReturnType<typeof tinyServer>>;
  let proxy: RunningProxy;
  const tempoCalls: string[] = [];
  const gateSeen: Array<{ auth?: string; org?: string }> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'proxy-spanmetrics-'));
    writeFileSync(join(dir, 'in.om'), openMetrics());
    const made = spawnSync(
      PROMTOOL,
      ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'in.om'), join(dir, 'data')],
      { encoding: 'utf8' }
    );
    assert.equal(made.status, 0, made.stderr);
    writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\nscrape_configs: []\n');
    const port = await freePort();
    prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: 'ignore' }
    );
    promUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${promUrl}/-/ready`)).ok) break;
      } catch {
        /* starting */
      }
      assert.ok(i < 150 && prom.exitCode === null, 'prometheus started');
      await new Promise((r) => setTimeout(r, 200));
    }
    // Mimir-style gate: a bearer token and a tenant, else 401 (it forwards to the real Prometheus).
    gate = await tinyServer((req, res, body) => {
      gateSeen.push({ auth: req.headers.authorization, org: req.headers['x-scope-orgid'] as string | undefined });
      if (req.headers.authorization !== `Bearer ${BEARER}` || req.headers['x-scope-orgid'] !== 'tenant-a') {
        res.writeHead(401, { 'content-type': 'text/plain' });
        return void res.end('no org id or bad token');
      }
      const up = httpRequest(
        `${promUrl}${req.url}`,
        { method: req.method, headers: { ...req.headers, host: `127.0.0.1:${port}` } },
        (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        }
      );
      up.end(body);
    });
    // Tempo, replayed from its recorded answers; multi-tenant with basic auth.
    const fx = (name: string): string => readFileSync(fixture('tempo', name), 'utf8');
    tempo = await tinyServer((req, res) => {
      const u = new URL(req.url!, 'http://x');
      tempoCalls.push(u.pathname);
      const want = `Basic ${Buffer.from(`${TEMPO_USER}:${TEMPO_PASS}`).toString('base64')}`;
      if (req.headers.authorization !== want || req.headers['x-scope-orgid'] !== 'tenant-a') {
        res.writeHead(401, { 'content-type': 'text/plain' });
        return void res.end('unauthorized');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (u.pathname === '/ready') return void res.end('ready');
      if (u.pathname === '/api/search') return void res.end(fx('docs_search_traceql_compact.json'));
      if (u.pathname.startsWith('/api/v2/traces/')) return void res.end(fx('derived_v2_trace_by_id_from_vulture.json'));
      res.writeHead(404);
      res.end();
    });
    proxy = await startProxy({
      port: 0,
      prometheusUrl: gate.url,
      tempoUrl: tempo.url,
      exporterUrls: [],
      chainControlUrl: undefined,
      scrapeIntervalMs: 15_000,
      sourceAuth: {
        prometheus: { bearerToken: BEARER, orgId: 'tenant-a' },
        tempo: { basic: { user: TEMPO_USER, password: TEMPO_PASS }, orgId: 'tenant-a' },
      },
    });
  });

  after(async () => {
    await proxy?.close();
    await gate?.close();
    await tempo?.close();
    if (prom && prom.exitCode === null) {
      prom.kill('SIGTERM');
      await new Promise((r) => prom.once('exit', r));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const close = (got: number | null, want: number, tol: number, what: string): void => {
    assert.ok(got !== null && Math.abs(got - want) <= tol * Math.abs(want), `${what}: ${got} vs ${want}`);
  };

  it('services: request rates, errors and percentiles of the known series; client spans are not requests', async () => {
    tempoCalls.length = 0;
    const s = ServicesAnswer.parse(
      await (await fetch(`${proxy.url}/api/services?from=${RANGE.from}&to=${RANGE.to}`)).json()
    );
    assert.deepEqual(
      s.services.map((x) => x.service),
      ['batcher', 'gateway', 'rag']
    );
    const secs = (RANGE.to - RANGE.from) / 1000;
    const of = (svc: string): Known[] => KNOWN.filter((k) => k.service === svc);
    const requests = (ks: Known[]): Known[] =>
      ks.some((k) => /SERVER|CONSUMER/.test(k.kind)) ? ks.filter((k) => /SERVER|CONSUMER/.test(k.kind)) : ks;
    for (const row of s.services) {
      const req = requests(of(row.service));
      const rate = req.reduce((n, k) => n + k.rate, 0);
      const errRate = req.filter((k) => k.status === 'STATUS_CODE_ERROR').reduce((n, k) => n + k.rate, 0);
      close(row.rps, rate, 0.01, `${row.service} rps`);
      close(row.requests, rate * secs, 0.01, `${row.service} requests`);
      assert.equal(row.errors, Math.round(errRate * secs), `${row.service} errors`);
      close(row.spans, of(row.service).reduce((n, k) => n + k.rate, 0) * secs, 0.01, `${row.service} spans`);
      close(row.p50Ms, quantileOf(req, 0.5), 0.01, `${row.service} p50`);
      close(row.p99Ms, quantileOf(req, 0.99), 0.01, `${row.service} p99`);
      assert.deepEqual(row.pods, [...new Set(req.map((k) => k.pod ?? k.service))].sort());
      assert.deepEqual(
        [row.figures.rate.origin, row.figures.rate.exact, row.figures.errors.exact, row.figures.latency.origin],
        ['spanmetrics', false, true, 'spanmetrics']
      );
      assert.match(row.figures.rate.note!, /estimated from its probabilistic share/);
    }
    console.log(`# gateway: ${JSON.stringify(s.services.find((x) => x.service === 'gateway'))}`);
    assert.equal(s.services.find((x) => x.service === 'gateway')!.errorRate, Math.round((0.2 / 5.2) * 10_000) / 10_000);
    assert.deepEqual(tempoCalls, [], 'no trace fetched for the services page');
    assert.ok(
      gateSeen.length && gateSeen.every((g) => g.auth === `Bearer ${BEARER}` && g.org === 'tenant-a'),
      'Prometheus asked with the token and tenant'
    );
  });

  it('pods of a service: by k8s_pod_name', async () => {
    const p = PodsAnswer.parse(
      await (await fetch(`${proxy.url}/api/services/gateway/pods?from=${RANGE.from}&to=${RANGE.to}`)).json()
    );
    assert.deepEqual(
      p.pods.map((x) => x.pod),
      ['gateway-0', 'gateway-1']
    );
    for (const pod of p.pods) {
      const req = KNOWN.filter((k) => k.pod === pod.pod && k.kind === 'SPAN_KIND_SERVER');
      close(
        pod.rps,
        req.reduce((n, k) => n + k.rate, 0),
        0.01,
        `${pod.pod} rps`
      );
      assert.equal(pod.figures!.rate.origin, 'spanmetrics');
    }
    assert.equal(p.pods[0].errors, Math.round(0.2 * 1800));
  });

  it("a range without span metrics: figures from the recorded Tempo's sample, each saying so", async () => {
    tempoCalls.length = 0;
    const s = ServicesAnswer.parse(await (await fetch(`${proxy.url}/api/services?from=now-5m&to=now`)).json());
    assert.ok(
      tempoCalls.includes('/api/search') && tempoCalls.some((c) => c.startsWith('/api/v2/traces/')),
      tempoCalls.join(',')
    );
    assert.ok(s.services.length >= 1);
    for (const row of s.services) {
      for (const f of [row.figures.rate, row.figures.errors, row.figures.latency])
        assert.deepEqual([f.origin, f.exact], ['sampled-traces', false]);
      assert.match(row.figures.rate.note!, /a lower bound: from \d+ trace/);
    }
    assert.ok(
      s.notes.some((n) => /no span metrics/.test(n)),
      s.notes.join('; ')
    );
  });

  it('wrong credentials: each source says it refused, nothing repeats a secret', async () => {
    const bad = await startProxy({
      port: 0,
      prometheusUrl: gate.url,
      tempoUrl: tempo.url,
      exporterUrls: [],
      chainControlUrl: undefined,
      sourceAuth: {
        prometheus: { bearerToken: 'wrong-token' },
        tempo: { basic: { user: TEMPO_USER, password: 'wrong-pass' } },
      },
    });
    try {
      const text = await (await fetch(`${bad.url}/api/services?from=${RANGE.from}&to=${RANGE.to}`)).text();
      const body = JSON.parse(text);
      const prom = body.sources.find((x: { source: string }) => x.source === 'prometheus');
      assert.equal(prom.ok, false);
      assert.match(prom.error, /HTTP 401/);
      const health = await (await fetch(`${bad.url}/api/health`)).text();
      for (const secret of ['wrong-token', 'wrong-pass', BEARER, TEMPO_PASS]) {
        assert.ok(!text.includes(secret) && !health.includes(secret), `${secret} never in an answer`);
      }
    } finally {
      await bad.close();
    }
  });
});
