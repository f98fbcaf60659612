/**
 * A soak of the proxy CLI at a steady dashboard load (HOPSCOPE_SOAK_S, 60 s by default): ten Overview dashboards
 * refreshing every 5 s (golden for vLLM and TGI, the GPU heatmap, services, traces, alerts, annotations) and drilling
 * into a trace's root cause and a pod's kernel evidence every 10 s, against a real Prometheus scraping real vLLM/TGI/
 * DCGM metric names and a real exporter, while spans stream in (600 a second) into an embedded store bounded at
 * 10,000 spans, so the store is full for most of the run. What must hold: no 5xx, and RSS flat once warm (the
 * store full, caches filled): bounded growth from the end of the warm-up to the end (HOPSCOPE_SOAK_SERIES=1 prints
 * the RSS of every second).
 * It times answers, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainTrace, otlp } from '../../support/otlp-spans';
import { startChainMetrics } from '../proxy/chain-metrics';
import { startPrometheus, type RealServer } from '../../support/real-servers';
import { figure, mib } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';
import { startExporterProcess, type ExporterProcess } from './support/sources';

const SOAK_S = Number(process.env.HOPSCOPE_SOAK_S ?? 60);
const WARM_S = Math.min(20, Math.floor(SOAK_S / 3));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe(`soak: a steady dashboard load for ${SOAK_S} s`, () => {
  let metrics: Awaited<ReturnType<typeof startChainMetrics>>;
  let prom: RealServer;
  let exporter: ExporterProcess;
  let proxy: ProxyProcess;

  before(async () => {
    metrics = await startChainMetrics();
    exporter = await startExporterProcess(2000);
    prom = await startPrometheus([metrics.target]);
    proxy = await startProxyProcess({
      HOPSCOPE_PROMETHEUS_URL: prom.url,
      HOPSCOPE_EXPORTER_URLS: exporter.url,
      HOPSCOPE_STORE_MAX_SPANS: '10000',
      HOPSCOPE_ALERT_INTERVAL_MS: '5000',
    });
  });

  after(async () => {
    await proxy?.stop();
    await Promise.all([prom?.stop(), exporter?.stop(), metrics?.close()]);
  });

  it('no 5xx, and RSS flat once warm', { timeout: (SOAK_S + 60) * 1000 }, async () => {
    const t0 = Date.now();
    const end = t0 + SOAK_S * 1000;
    const statuses: Record<number, number> = {};
    const latencies: number[] = [];
    const rss: Array<{ s: number; bytes: number }> = [];
    let traceSeq = 0;
    const recent: string[] = [];
    let spansSent = 0;

    const ask = async (path: string): Promise<void> => {
      const a = performance.now();
      try {
        const r = await fetch(`${proxy.url}${path}`, { signal: AbortSignal.timeout(15_000) });
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      } catch {
        statuses[0] = (statuses[0] ?? 0) + 1;
      }
      latencies.push(performance.now() - a);
    };

    const ingest = (async () => {
      while (Date.now() < end) {
        const now = Date.now();
        const spans = Array.from({ length: 20 }, () =>
          chainTrace(traceSeq++, now - 2000, 100 + (traceSeq % 13) * 60, traceSeq % 50 === 0 ? 2 : 1)
        ).flat();
        recent.unshift(spans[0].traceId);
        recent.length = Math.min(recent.length, 50);
        const r = await fetch(`${proxy.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(otlp(spans)),
        });
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        spansSent += spans.length;
        await sleep(100);
      }
    })();

    const overview = [
      '/api/golden?from=now-15m&to=now&backend=vllm',
      '/api/golden?from=now-15m&to=now&backend=tgi',
      '/api/gpu/heatmap?from=now-15m&to=now',
      '/api/services?from=now-15m&to=now',
      '/api/traces?from=now-15m&to=now&limit=50',
      '/api/alerts',
      '/api/annotations?from=now-15m&to=now',
    ];
    const dashboards = Array.from({ length: 10 }, async (_, d) => {
      await sleep(d * 500); // staggered, as people open them
      for (let round = 0; Date.now() < end; round++) {
        const t = Date.now();
        await Promise.all(overview.map(ask));
        if (round % 2 === d % 2 && recent.length) {
          await ask(`/api/traces/${recent[(d * 7 + round) % recent.length]}/rca`);
          await ask('/api/pods/rag-0/kernel-events?from=now-15m&to=now');
        }
        await sleep(Math.max(0, 5000 - (Date.now() - t)));
      }
    });

    const sampler = (async () => {
      while (Date.now() < end) {
        rss.push({ s: (Date.now() - t0) / 1000, bytes: proxy.rss() });
        await sleep(1000);
      }
    })();
    await Promise.all([ingest, sampler, ...dashboards]);

    const warm = rss.filter((x) => x.s >= WARM_S - 5 && x.s < WARM_S).map((x) => x.bytes);
    const last = rss.filter((x) => x.s >= SOAK_S - 5).map((x) => x.bytes);
    const afterWarm = rss.filter((x) => x.s >= WARM_S).map((x) => x.bytes);
    const store = await (await fetch(`${proxy.url}/metrics`)).text();
    const held = Number(/^hopscope_proxy_store_spans (\d+)/m.exec(store)?.[1]);
    const sorted = [...latencies].sort((a, b) => a - b);
    const f = {
      seconds: SOAK_S,
      requests: latencies.length,
      spansIngested: spansSent,
      storeSpans: held,
      byStatus: statuses,
      p50Ms: Math.round(sorted[Math.floor(sorted.length * 0.5)]),
      p99Ms: Math.round(sorted[Math.floor(sorted.length * 0.99)]),
      rssStartMiB: mib(rss[0].bytes),
      rssWarmMiB: mib(median(warm)),
      rssPeakMiB: mib(Math.max(...afterWarm)),
      rssEndMiB: mib(median(last)),
    };
    figure('soak', f);
    if (process.env.HOPSCOPE_SOAK_SERIES) console.log(rss.map((x) => `${Math.round(x.s)}:${mib(x.bytes)}`).join(' '));
    assert.equal(proxy.exited(), undefined, proxy.output());
    assert.deepEqual(
      Object.keys(statuses).filter((s) => Number(s) >= 500 || s === '0'),
      [],
      JSON.stringify(statuses)
    );
    assert.ok(held <= 10_000 && held > 5000, `the store is full and bounded: ${held} spans`);
    // Flat once warm: the end within 96 MiB of the warm-up's end (V8's collections alone swing RSS by ~40 MiB here;
    // a 150 s run stays in 520-560 MiB), and nowhere near the 1 GiB limit.
    assert.ok(
      median(last) - median(warm) < 96 * 1048576,
      `RSS grew ${mib(median(last) - median(warm))} MiB after the warm-up`
    );
    assert.ok(Math.max(...afterWarm) < 1024 * 1048576, `peak RSS ${mib(Math.max(...afterWarm))} MiB`);
  });
});
