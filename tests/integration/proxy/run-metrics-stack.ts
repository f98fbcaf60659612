/**
 * The stack of the tests on a load test's client metrics (runs-prometheus-sd, run-ttft), on the tests' one stack
 * builder (../../support/stack.ts), in a temp dir: the simulated
 * chain (its traces to the proxy), the real proxy, and a real Prometheus (/usr/bin/prometheus) scraping every second
 * with the demo's own scrape job for the running load-test workers (scripts/demo-parts/prometheus.ts `runsScrapeJob`,
 * the proxy's HTTP SD) and, with `scrapeChain`, the chain's hops (job `chain`, the chain's HTTP SD); and the real
 * `hopscope-load` (`main()`, `--metrics prometheus`) reporting to that proxy.
 */
import type { ProxyConfig } from '../../../backend-proxy/src/config';
import type { RunningProxy } from '../../../backend-proxy/src/server';
import type { RunningChain, StartChainOptions } from '../../../loadgen/src/chain/start';
import { hopscopeLoad, startTestStack } from '../../support/stack';
import { havePrometheus, PROMETHEUS_BIN } from '../loadgen/support';

/** The tests' `skip`: why they cannot run here, or undefined. */
export const skipWithoutPrometheus = havePrometheus()
  ? undefined
  : `${PROMETHEUS_BIN} is missing (apt-get install prometheus)`;

export interface RunMetricsStack {
  dir: string;
  chain: RunningChain;
  proxy: RunningProxy;
  promUrl: string;
  /**
   * The real `hopscope-load` on `args`, then `--run-id runId --report <proxy> --metrics prometheus --quiet
   * --spool-dir <dir>/spool --json <dir>/<runId>.json`: its exit code, its stderr so far, its JSON summary once done.
   */
  load(runId: string, args: string[]): { code: Promise<number>; err(): string; summary(): any };
  /** Stops Prometheus, the chain and the proxy, and removes the temp dir. */
  stop(): Promise<void>;
}

export async function startRunMetricsStack(o: {
  tmpPrefix: string;
  timeScale: number;
  /** Prometheus scrapes the chain's hops too (job `chain`). */
  scrapeChain: boolean;
  /** The chain's options beyond its ports, time scale and tracing (e.g. `replicas`, `split`). */
  chain?: StartChainOptions;
  /** The proxy's config beyond its port, no exporters and no alert loop (default: no Prometheus, no chain control). */
  proxy?: (s: { promUrl: string; chain: RunningChain; dir: string }) => Partial<ProxyConfig>;
}): Promise<RunMetricsStack> {
  const stack = await startTestStack({
    tmpPrefix: o.tmpPrefix,
    chain: { timeScale: o.timeScale, samplerAdaptive: false, ...o.chain },
    proxy: (s) => ({ prometheusUrl: undefined, alertIntervalMs: 0, ...o.proxy?.(s) }),
    prometheus: { chain: o.scrapeChain ? 'sd' : undefined, runs: true },
  });
  const { dir, chain, proxy, promUrl } = stack;
  return {
    dir,
    chain,
    proxy,
    promUrl,
    load: (runId, args) => hopscopeLoad(stack, runId, args),
    stop: stack.close,
  };
}
