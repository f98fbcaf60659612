/**
 * The stack of the tests on a load test's client metrics (runs-prometheus-sd, run-ttft), in a temp dir: the simulated
 * chain (its traces to the proxy), the real proxy, and a real Prometheus (/usr/bin/prometheus) scraping every second
 * with the demo's own scrape job for the running load-test workers (scripts/demo-parts/prometheus.ts `runsScrapeJob`,
 * the proxy's HTTP SD) and, with `scrapeChain`, the chain's hops (job `chain`, the chain's HTTP SD); and the real
 * `hopscope-load` (`main()`, `--metrics prometheus`) reporting to that proxy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProxyConfig } from '../../../backend-proxy/src/config';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { main } from '../../../loadgen/src/cli';
import { runsScrapeJob } from '../../../scripts/demo-parts/prometheus';
import { havePrometheus, PROMETHEUS_BIN } from '../loadgen/support';
import { freePort } from './real-servers';

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
  chain?: Partial<Parameters<typeof startChain>[0]>;
  /** The proxy's config beyond its port, no exporters and no alert loop (default: no Prometheus, no chain control). */
  proxy?: (s: { promUrl: string; chain: RunningChain; dir: string }) => Partial<ProxyConfig>;
}): Promise<RunMetricsStack> {
  const dir = mkdtempSync(join(tmpdir(), o.tmpPrefix));
  let chain: RunningChain | undefined;
  let proxy: RunningProxy | undefined;
  let prom: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (prom && prom.exitCode === null) {
      prom.kill('SIGTERM');
      await new Promise((r) => {
        prom!.once('exit', r);
        setTimeout(r, 5000);
      });
    }
    await chain?.stop();
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const promPort = await freePort();
    const promUrl = `http://127.0.0.1:${promPort}`;
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: o.timeScale,
      logLevel: 'silent',
      otlpEndpoint: `http://127.0.0.1:${port}/v1/traces`,
      samplerAdaptive: false,
      ...o.chain,
    });
    proxy = await startProxy({
      port,
      prometheusUrl: undefined,
      exporterUrls: [],
      chainControlUrl: undefined,
      alertIntervalMs: 0,
      ...o.proxy?.({ promUrl, chain, dir }),
    });
    const chainJob = o.scrapeChain
      ? `  - job_name: chain\n    http_sd_configs:\n      - url: ${chain.controlUrl}/targets\n        refresh_interval: 1s\n`
      : '';
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n${chainJob}${runsScrapeJob(proxy.url, { refresh: '1s' })}`
    );
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prom')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] }
    );
    prom = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    for (const t0 = Date.now(); ;) {
      try {
        if ((await fetch(`${promUrl}/-/ready`)).ok) break;
      } catch {
        /* starting */
      }
      if (child.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`prometheus did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const reportTo = proxy.url;
    return {
      dir,
      chain,
      proxy,
      promUrl,
      load(runId, args) {
        let err = '';
        const out = join(dir, `${runId}.json`);
        const code = main(
          [
            ...args,
            '--run-id',
            runId,
            '--report',
            reportTo,
            '--metrics',
            'prometheus',
            '--quiet',
            '--spool-dir',
            join(dir, 'spool'),
            '--json',
            out,
          ],
          () => {},
          (s) => {
            err += s;
          },
          { env: {} }
        );
        return { code, err: () => err, summary: () => JSON.parse(readFileSync(out, 'utf8')) };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
