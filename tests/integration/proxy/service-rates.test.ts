/**
 * The Services page's numbers against the services' own counters, on the real chain under a steady load with a real
 * Prometheus scraping it (every second, through the chain's http_sd): the chain's head sampler keeps 80% of traces
 * (fixed rate, recorded on their roots), so the traces the proxy receives are a sample.
 * - A proxy with Prometheus reads the hops' own `hopscope_requests_total`: origin `service-metrics`, exact.
 * - A proxy without Prometheus, fed the chain's (sampled) spans, counts them at ingest and scales them by the rate
 *   the sampler recorded: origin `ingest-counters`, not exact.
 * Both must be within ±10% of what the hops counted (their counters in Prometheus: the increase over the range).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodsAnswer, ServicesAnswer } from '../../../contract';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chat, havePrometheus, startPrometheus, waitFor } from '../loadgen/support';

const skip = havePrometheus() ? false : 'the Debian prometheus binary (/usr/bin/prometheus) is not installed';
const RPS = 20;
const LOAD_S = 40;
const RATE = 0.8;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('service rates from counts: the real chain, a real Prometheus', { skip }, () => {
  let chain: RunningChain;
  let prom: Awaited<ReturnType<typeof startPrometheus>>;
  let withProm: RunningProxy;
  let embedded: RunningProxy;
  let t0 = 0;
  let t1 = 0;
  /** What the hops counted in [t0, t1], per service (their counters' increase, read at both instants). */
  const truth = new Map<string, number>();
  let sent = 0;

  before(async () => {
    embedded = await startProxy({ port: 0, prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined });
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      vectorCacheHitRate: 0.35,
      otlpEndpoint: `${embedded.url}/v1/traces`,
      otlpProtocol: 'http/protobuf',
      samplerBaseRate: RATE,
      samplerMinRate: 0.01,
      samplerAdaptive: false,
    });
    prom = await startPrometheus(`${chain.controlUrl}/targets`);
    withProm = await startProxy({
      port: 0,
      prometheusUrl: prom.url,
      exporterUrls: [],
      chainControlUrl: undefined,
      scrapeIntervalMs: 1000,
    });
    // Every series exists before the measured range (a counter's first sample is its start, not an increase).
    for (let i = 0; i < 6; i++)
      await chat(
        chain.gatewayUrl,
        { messages: [{ role: 'user', content: `warm-up ${i}` }] },
        { 'x-hopscope-backend': i % 2 ? 'tgi' : 'vllm' }
      );
    await waitFor(
      'the hops scraped',
      async () =>
        (await prom.query('count(hopscope_requests_total{service=~"gateway|rag|llm-vllm|llm-tgi"})'))[0]?.value[1] >= 4,
      30_000
    );
    await sleep(2500);
    t0 = Date.now();
    await sleep(500);
    // A steady load at RPS, each request its own question (the vector cache hits some, misses the others).
    const inflight: Array<Promise<unknown>> = [];
    const start = Date.now();
    for (let i = 0; i < RPS * LOAD_S; i++) {
      const due = start + (i * 1000) / RPS;
      if (due > Date.now()) await sleep(due - Date.now());
      inflight.push(
        chat(
          chain.gatewayUrl,
          { messages: [{ role: 'user', content: `question ${i} about batching` }] },
          { 'x-hopscope-backend': i % 2 ? 'tgi' : 'vllm' }
        ).then(
          (r) => {
            if (r.status === 200) sent++;
          },
          () => {}
        )
      );
    }
    await Promise.all(inflight);
    await chain.forceFlush();
    await sleep(3000);
    t1 = Date.now();
    await sleep(1500);
    const at = async (t: number): Promise<Map<string, number>> =>
      new Map(
        (
          await prom.api(
            `/api/v1/query?query=${encodeURIComponent('sum by (service) (hopscope_requests_total)')}&time=${t / 1000}`
          )
        ).result.map((r: { metric: { service: string }; value: [number, string] }) => [
          r.metric.service,
          Number(r.value[1]),
        ])
      );
    const [a, b] = [await at(t0), await at(t1)];
    for (const [svc, v] of b) truth.set(svc, v - (a.get(svc) ?? 0));
  });

  after(async () => {
    await withProm?.close();
    await prom?.stop();
    await chain?.stop();
    await embedded?.close();
  });

  const within = (got: number, want: number, what: string): void => {
    assert.ok(
      Math.abs(got - want) <= 0.1 * want,
      `${what}: ${got.toFixed(1)} vs the hops' own ${want.toFixed(1)} (${((100 * (got - want)) / want).toFixed(1)}%)`
    );
  };

  it('the hops counted the load', () => {
    assert.ok(sent >= RPS * LOAD_S * 0.95, `${sent} requests answered`);
    within(truth.get('gateway')!, sent, 'gateway requests');
  });

  it("with Prometheus: the services' own counters, exact, within ±10% of rate(hopscope_requests_total)", async () => {
    const s = ServicesAnswer.parse(await (await fetch(`${withProm.url}/api/services?from=${t0}&to=${t1}`)).json());
    const secs = (t1 - t0) / 1000;
    for (const [svc, n] of truth) {
      if (n < 100) continue;
      const row = s.services.find((x) => x.service === svc);
      assert.ok(row, `${svc} listed: ${s.services.map((x) => x.service).join(', ')}`);
      within(row.rps, n / secs, `${svc} req/s`);
      console.log(`# ${svc}: ${row.rps} req/s from its own counters; the hop counted ${(n / secs).toFixed(3)} req/s`);
      assert.deepEqual([row.figures.rate.origin, row.figures.rate.exact], ['service-metrics', true], svc);
      assert.ok(row.p50Ms !== null && row.p99Ms! >= row.p50Ms!, `${svc} percentiles ${row.p50Ms} ${row.p99Ms}`);
    }
    const rag = PodsAnswer.parse(
      await (await fetch(`${withProm.url}/api/services/rag/pods?from=${t0}&to=${t1}`)).json()
    );
    assert.equal(rag.pods.length, 2, 'two rag replicas');
    within(
      rag.pods.reduce((n, p) => n + p.requests, 0),
      truth.get('rag')!,
      'rag pods together'
    );
  });

  it('embedded store, no Prometheus: ingest counters scaled by the recorded sampler rate, within ±10%', async () => {
    const s = ServicesAnswer.parse(await (await fetch(`${embedded.url}/api/services?from=${t0}&to=${t1}`)).json());
    let checked = 0;
    for (const [svc, n] of truth) {
      if (n < 300) continue; // the sampler's own noise: ±10% is > 3σ from 300 requests kept at 80%
      const row = s.services.find((x) => x.service === svc);
      assert.ok(row, `${svc} listed`);
      within(row.requests, n, `${svc} requests`);
      assert.equal(row.figures.rate.origin, 'ingest-counters');
      assert.equal(row.figures.rate.exact, false, 'scaled: an estimate');
      assert.match(row.figures.rate.note!, /scaled by the sampling rate/);
      console.log(
        `# ${svc}: ${row.requests} requests estimated from ${row.spans} spans received; the hop counted ${n}`
      );
      checked++;
    }
    assert.ok(checked >= 3, `${checked} services checked`);
    const total = [...truth.values()].reduce((a, b) => a + b, 0);
    const est = s.services.filter((x) => truth.has(x.service)).reduce((a, x) => a + x.requests, 0);
    assert.ok(Math.abs(est - total) <= 0.05 * total, `all hops: ${est.toFixed(0)} vs ${total}`);
  });
});
