/**
 * The tests' stack builder (the integration tests on a load test's client metrics, the e2e app and runs stories):
 * the simulated chain (real hops, its spans to the proxy's embedded store, real /metrics), the real backend proxy, a
 * real Prometheus (/usr/bin/prometheus, the demo's command line and scrape jobs from scripts/demo-parts/prometheus.ts:
 * the chain's hops and the running load-test workers) and, when asked, the Grafana-compatible host serving the built
 * plugin; every server on a free port, in a temp dir removed on close. `startTestChain` is the chain alone with the
 * tests' defaults.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProxyConfig } from '../../backend-proxy/src/config';
import { startProxy, type RunningProxy } from '../../backend-proxy/src/server';
import { startChain, type RunningChain, type StartChainOptions } from '../../loadgen/src/chain/start';
import { main } from '../../loadgen/src/cli';
import { startSplitChain } from '../../loadgen/src/chain/split';
import { loadChainConfig } from '../../loadgen/src/config';
import { makeLogger } from '../../loadgen/src/log';
import { chainScrapeJob, runsScrapeJob } from '../../scripts/demo-parts/prometheus';
import type { RunningHost } from '../host/server';
import { startTestHost } from './host';
import { freePort, startPrometheusWith, staticConfig, type RealServer } from './real-servers';

/** The simulated chain on free ports, its logs silent; `overrides` for the rest (time scale, sampler, seed…). */
export function startTestChain(overrides: StartChainOptions = {}): Promise<RunningChain> {
  return startChain({ gatewayPort: 0, controlPort: 0, hopPort: 0, logLevel: 'silent', ...overrides });
}

export interface TestStackOptions {
  /** The temp dir's name prefix (the pid is added). */
  tmpPrefix: string;
  /** The chain's options beyond its ports, logs and tracing (its spans go to the proxy). */
  chain?: StartChainOptions;
  /** Split mode (one process per pod, as the demo runs it), each replica process ready within `readyTimeoutMs`. */
  split?: { readyTimeoutMs?: number };
  /** The proxy's config beyond its port (default: no exporters, no chain control, the stack's Prometheus). */
  proxy?: (s: { promUrl: string; chain: RunningChain; dir: string }) => Partial<ProxyConfig>;
  /**
   * What Prometheus scrapes every `scrapeInterval` (default 1s): the chain's hops through its HTTP SD (job `chain`,
   * `'sd'`) or as static targets with their labels (`'static'`), and the running load-test workers through the proxy's
   * HTTP SD (`runs`, the demo's job; not with `'static'`, which scrapes the hops only). `false`: no Prometheus.
   */
  prometheus?: false | { chain?: 'sd' | 'static'; runs?: boolean; scrapeInterval?: string };
  /** The Grafana-compatible host serving the built plugin, and the proxy's PNG export rendering from it. */
  host?: boolean;
}

export interface TestStack {
  dir: string;
  chain: RunningChain;
  proxy: RunningProxy;
  /** The stack's Prometheus (absent with `prometheus: false`); its URL is the proxy's either way. */
  prometheus?: RealServer;
  promUrl: string;
  host?: RunningHost;
  /** Runs `stop` first on close (what the caller started on top of the stack). */
  onClose(stop: () => Promise<unknown>): void;
  /** Stops everything started, last started first, and removes the temp dir. */
  close(): Promise<void>;
}

export async function startTestStack(o: TestStackOptions): Promise<TestStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), `${o.tmpPrefix}${process.pid}-`));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    // The chain exports spans to the proxy and the proxy reads Prometheus, which scrapes both: learn their ports first.
    const proxyPort = await freePort();
    const promPort = await freePort();
    const promUrl = `http://127.0.0.1:${promPort}`;
    const otlpEndpoint = `http://127.0.0.1:${proxyPort}/v1/traces`;
    const chain = o.split
      ? await startSplitChain(
          loadChainConfig({ gatewayPort: 0, controlPort: 0, logLevel: 'silent', otlpEndpoint, ...o.chain }),
          makeLogger('silent'),
          o.split
        )
      : await startTestChain({ otlpEndpoint, ...o.chain });
    stops.push(() => chain.stop());
    const proxy = await startProxy({
      port: proxyPort,
      prometheusUrl: o.prometheus === false ? undefined : promUrl,
      exporterUrls: [],
      chainControlUrl: undefined,
      logLevel: 'silent',
      ...o.proxy?.({ promUrl, chain, dir }),
    });
    stops.push(() => proxy.close());
    let prometheus: RealServer | undefined;
    if (o.prometheus !== false) {
      const p = o.prometheus ?? {};
      const every = p.scrapeInterval ?? '1s';
      const jobs =
        (p.chain === 'sd' ? chainScrapeJob(chain.controlUrl, { name: 'chain', refresh: '1s' }) : '') +
        (p.runs ? runsScrapeJob(proxy.url, { refresh: '1s' }) : '');
      const config =
        p.chain === 'static'
          ? staticConfig(
              chain.targets().flatMap((t) => t.targets),
              every
            )
          : `global:\n  scrape_interval: ${every}\n  scrape_timeout: ${every}\nscrape_configs:\n${jobs}`;
      prometheus = await startPrometheusWith(config, promPort);
      stops.push(() => prometheus!.stop());
    }
    let host: RunningHost | undefined;
    if (o.host) {
      host = await startTestHost({ proxyUrl: proxy.url });
      stops.push(() => host!.close());
      proxy.config.appUrl = host.url;
    }
    return {
      dir,
      chain,
      proxy,
      prometheus,
      promUrl: prometheus?.url ?? promUrl,
      host,
      onClose: (stop) => stops.push(stop),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The real `hopscope-load` (`main()` of loadgen/src/cli.ts) on `args`, then `--run-id runId --report <proxy> --metrics
 * prometheus --quiet --spool-dir <dir>/spool --json <dir>/<runId>.json`: its exit code, its stderr so far, its JSON
 * summary once done.
 */
export function hopscopeLoad(
  stack: Pick<TestStack, 'dir' | 'proxy'>,
  runId: string,
  args: string[]
): { code: Promise<number>; err(): string; summary(): Record<string, unknown> } {
  let err = '';
  const out = join(stack.dir, `${runId}.json`);
  const code = main(
    [
      ...args,
      '--run-id',
      runId,
      '--report',
      stack.proxy.url,
      '--metrics',
      'prometheus',
      '--quiet',
      '--spool-dir',
      join(stack.dir, 'spool'),
      '--json',
      out,
    ],
    () => {},
    (s) => {
      err += s;
    },
    { env: {} }
  );
  return { code, err: () => err, summary: () => JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> };
}
