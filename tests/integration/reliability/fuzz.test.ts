/**
 * The attack run of issue 14 as a bounded, seeded test against the proxy's CLI in a child process (a real Prometheus
 * and a real bpf-exporter process behind it): a few thousand malformed, oversized and odd requests across every
 * route (./support/fuzz.ts), then a 100-client burst of dashboard requests. What must hold: no 5xx other than the
 * documented ones (501: PNG export without Chromium; 503 with Retry-After: back-pressure), every request answered
 * well within its deadline, the process alive and answering afterwards, `/metrics` with a bounded set of route
 * labels, and RSS bounded. The figures are printed (`RELIABILITY fuzz: …`) for the README.
 * It times answers, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainTrace, otlp } from '../../support/otlp-spans';
import { startPrometheus, type RealServer } from '../../support/real-servers';
import { fuzzCases } from './support/fuzz';
import { figure, mib, pool } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';
import { rawRequest, requestBytes, type RawAnswer } from './support/raw-http';
import { startExporterProcess, type ExporterProcess } from './support/sources';

const SEED = Number(process.env.HOPSCOPE_FUZZ_SEED ?? 14_2026);
const REQUESTS = Number(process.env.HOPSCOPE_FUZZ_REQUESTS ?? 5000);
const SOURCE_TIMEOUT_MS = 2000;
/** Each answer within the source deadline plus generous slack for a loaded CI machine. */
const ANSWER_WITHIN_MS = 15_000;

/** A 5xx the proxy documents: 501 (PNG export without Chromium), 503 with Retry-After (back-pressure). */
export function documented5xx(a: RawAnswer): boolean {
  if (a.status === 501) return /not_implemented/.test(a.body.toString());
  if (a.status === 503) return a.headers['retry-after'] !== undefined;
  return false;
}

describe('fuzzing the proxy: malformed, oversized and odd requests on every route', () => {
  let prom: RealServer;
  let exporter: ExporterProcess;
  let proxy: ProxyProcess;
  const traceIds: string[] = [];

  before(async () => {
    [prom, exporter] = await Promise.all([startPrometheus([]), startExporterProcess()]);
    proxy = await startProxyProcess({
      HOPSCOPE_PROMETHEUS_URL: prom.url,
      HOPSCOPE_EXPORTER_URLS: exporter.url,
      HOPSCOPE_SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
    });
    const spans = Array.from({ length: 60 }, (_, i) =>
      chainTrace(i, Date.now() - 120_000 + i * 1000, 100 + (i % 7) * 150, i % 9 === 0 ? 2 : 1)
    ).flat();
    const r = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlp(spans)),
    });
    assert.equal(r.status, 200, await r.text());
    traceIds.push(...new Set(spans.map((s) => s.traceId)));
  });

  after(async () => {
    await proxy?.stop();
    await Promise.all([prom?.stop(), exporter?.stop()]);
  });

  it(`${REQUESTS} seeded requests (seed ${SEED}): no undocumented 5xx, all answered in time, the proxy alive`, async () => {
    const cases = fuzzCases(SEED, REQUESTS, traceIds);
    const rssBefore = proxy.rss();
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      try {
        peakRss = Math.max(peakRss, proxy.rss());
      } catch {
        /* exited */
      }
    }, 100);
    const t0 = performance.now();
    const answers = await pool(cases, 8, (c) =>
      rawRequest(proxy.port, c.bytes, ANSWER_WITHIN_MS, c.label.startsWith('raw:'))
    );
    const wallS = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const bad = answers.map((a, i) => ({ a, c: cases[i] })).filter(({ a }) => a.status >= 500 && !documented5xx(a));
    const late = answers.map((a, i) => ({ a, c: cases[i] })).filter(({ a }) => a.timedOut);
    const silent = answers
      .map((a, i) => ({ a, c: cases[i] }))
      .filter(({ a, c }) => a.status === 0 && !a.timedOut && !c.label.startsWith('raw:'));
    const byStatus: Record<string, number> = {};
    for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
    assert.equal(proxy.exited(), undefined, `the proxy exited during the fuzz:\n${proxy.output()}`);
    const health = await fetch(`${proxy.url}/api/health`);
    assert.equal(health.status, 200);
    await health.json();
    const rssAfter = proxy.rss();
    figure('fuzz', {
      seed: SEED,
      requests: cases.length,
      wallS: Math.round(wallS),
      byStatus,
      fiveXx: bad.length,
      documented5xx: answers.filter(documented5xx).length,
      unanswered: answers.filter((a) => a.status === 0).length,
      slowestMs: Math.round(Math.max(...answers.map((a) => a.ms))),
      rssBeforeMiB: mib(rssBefore),
      rssPeakMiB: mib(peakRss),
      rssAfterMiB: mib(rssAfter),
    });
    const show = (xs: Array<{ a: RawAnswer; c: { label: string } }>): string =>
      xs
        .slice(0, 15)
        .map(({ a, c }) => `${a.status} ${c.label}: ${a.body.toString().slice(0, 200)}`)
        .join('\n');
    assert.deepEqual(bad.length, 0, `undocumented 5xx:\n${show(bad)}`);
    assert.equal(late.length, 0, `no answer within ${ANSWER_WITHIN_MS} ms:\n${show(late)}`);
    assert.equal(silent.length, 0, `closed without an answer:\n${show(silent)}`);
    // Kubernetes gives the proxy 1 GiB: the fuzz (zip bombs, element floods, deep JSON) stays below it, and adds at
    // most 256 MiB to what the idle proxy holds (its in-memory database is most of that).
    assert.ok(peakRss < 1024 * 1048576, `peak RSS ${mib(peakRss)} MiB`);
    assert.ok(peakRss - rssBefore < 256 * 1048576, `RSS grew ${mib(peakRss - rssBefore)} MiB during the fuzz`);
  });

  it('/metrics labels every unmatched route as one value', async () => {
    const text = await (await fetch(`${proxy.url}/metrics`)).text();
    const routes = new Set(
      [...text.matchAll(/^hopscope_proxy_http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1])
    );
    assert.ok(routes.has('unmatched'), [...routes].join(', '));
    // Every value is a route pattern of the API (or `unmatched`): the fuzz's thousands of paths add no series.
    for (const r of routes)
      assert.match(r, /^(unmatched|\/metrics|\/v1\/traces|\/api\/[a-z/:A-Z-]*)$/, `route label ${r}`);
    assert.ok(routes.size <= 40, `${routes.size} route labels: ${[...routes].join(', ')}`);
  });

  it('a burst of 100 dashboard clients at once: every one answered, no 5xx', async () => {
    const paths = [
      '/api/golden?from=now-15m&to=now&backend=vllm',
      '/api/services?from=now-15m&to=now',
      '/api/traces?from=now-1h&to=now',
      '/api/gpu/heatmap?from=now-15m&to=now',
      '/api/health',
      `/api/traces/${traceIds[3]}/rca`,
      '/api/alerts',
      '/api/pods/rag-0/kernel-events?from=now-15m&to=now',
    ];
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        rawRequest(proxy.port, requestBytes('GET', paths[i % paths.length]), ANSWER_WITHIN_MS)
      )
    );
    const ms = performance.now() - t0;
    const statuses = answers.map((a) => a.status);
    figure('burst', {
      clients: 100,
      wallMs: Math.round(ms),
      slowestMs: Math.round(Math.max(...answers.map((a) => a.ms))),
      fiveXx: statuses.filter((s) => s >= 500).length,
    });
    assert.ok(
      statuses.every((s) => s === 200),
      `statuses: ${statuses.join(',')}`
    );
  });
});
