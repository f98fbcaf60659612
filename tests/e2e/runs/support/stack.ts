/**
 * The stack for the load-test runs story, every server on a free port: the simulated chain (real hops, spans to the
 * proxy's embedded store, real /metrics), a real Prometheus scraping the chain (its HTTP SD) and the running
 * load-test workers (the proxy's HTTP SD, the demo's own scrape job), the real backend proxy on an embedded PGlite in a
 * temp dir, the Grafana-compatible host serving the built plugin, and `hopscope-load` itself (`main()` of
 * loadgen/src/cli.ts) for each run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startProxy, type RunningProxy } from '../../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../../loadgen/src/chain/start';
import { main } from '../../../../loadgen/src/cli';
import { runsScrapeJob } from '../../../../scripts/demo-parts/prometheus';
import type { RunningHost } from '../../../host/server';
import { freePort } from '../../../support/real-servers';
import { startTestHost } from '../../../support/host';
import { waitFor as pollUntil } from '../../../support/wait';

export const PROMETHEUS = '/usr/bin/prometheus';

export interface RunsStack {
  chain: RunningChain;
  proxy: RunningProxy;
  promUrl: string;
  host: RunningHost;
  dir: string;
  /** One run of `hopscope-load` against the chain, reported to the proxy, its client metrics scraped. */
  load(runId: string, args: string[]): Promise<{ code: number; err: string; json: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startRunsStack(opts: { timeScale?: number } = {}): Promise<RunsStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const stop of stops.reverse()) {
      await stop().catch(() => undefined);
    }
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'hopscope-e2e-runs-'));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const proxyPort = await freePort();
    const promPort = await freePort();
    const promUrl = `http://127.0.0.1:${promPort}`;
    const chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      hopPort: 0,
      timeScale: opts.timeScale ?? 0.1,
      logLevel: 'silent',
      otlpEndpoint: `http://127.0.0.1:${proxyPort}/v1/traces`,
      samplerAdaptive: false,
      samplerBaseRate: 1,
      hopTimeoutMs: 5000,
      seed: 11,
    });
    stops.push(() => chain.stop());
    const proxy = await startProxy({
      port: proxyPort,
      prometheusUrl: promUrl,
      exporterUrls: [],
      chainControlUrl: chain.controlUrl,
      alertIntervalMs: 0,
      dataDir: join(dir, 'data'),
      scrapeIntervalMs: 1000,
      logLevel: 'silent',
    });
    stops.push(() => proxy.close());
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: chain\n    http_sd_configs:\n      - url: ${chain.controlUrl}/targets\n        refresh_interval: 1s\n${runsScrapeJob(proxy.url, { refresh: '1s' })}`
    );
    const prom: ChildProcess = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prom')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      }
    );
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          if (prom.exitCode !== null) return resolve();
          prom.once('exit', () => resolve());
          prom.kill('SIGTERM');
          setTimeout(() => prom.exitCode === null && prom.kill('SIGKILL'), 5000).unref();
        })
    );
    let stderr = '';
    prom.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    await waitFor(
      'Prometheus ready',
      async () =>
        (await fetch(`${promUrl}/-/ready`)).ok || (prom.exitCode !== null && Promise.reject(new Error(stderr))),
      30_000,
      200
    );
    // The chain's hops scraped before any run, so the window's increase() of vLLM's counters starts from a sample.
    await waitFor(
      'the chain scraped',
      async () => {
        const r = (await (
          await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent('count(up{job="chain"} == 1)')}`)
        ).json()) as { data: { result: Array<{ value: [number, string] }> } };
        return Number(r.data.result[0]?.value[1] ?? 0) >= 4;
      },
      30_000,
      250
    );
    const host = await startTestHost({ proxyUrl: proxy.url });
    stops.push(() => host.close());

    const load: RunsStack['load'] = async (runId, args) => {
      let err = '';
      const out = join(dir, `${runId}.json`);
      const code = await main(
        [
          '--target',
          chain.gatewayUrl,
          '--control',
          chain.controlUrl,
          '--run-id',
          runId,
          '--report',
          proxy.url,
          '--metrics',
          'prometheus',
          '--quiet',
          '--spool-dir',
          join(dir, 'spool'),
          '--json',
          out,
          ...args,
        ],
        () => {},
        (s) => {
          err += s;
        },
        { env: {} }
      );
      await chain.forceFlush();
      return { code, err, json: JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> };
    };
    return { chain, proxy, promUrl, host, dir, load, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The e2e stacks start slowly: a minute by default, polled every 500 ms. */
export const waitFor = <T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 500
): Promise<T> => pollUntil(what, fn, timeoutMs, everyMs);

/**
 * A scenario file for the story: short, vLLM only (so vLLM's histogram sees every request), chat and RAG, and its
 * fault schedule (a run given `--no-faults` skips it: both runs stay one scenario).
 */
export function storyScenario(dir: string, name: string, faults: string[] = []): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      `description: The runs story — single-turn chat and RAG on vLLM${faults.length ? ', with its fault schedule' : ''}.`,
      'target: { backend: vllm }',
      'models: { hopscope-llama-8b-v1: 1 }',
      'routes: { chat: 1, rag: 1, agent: 0 }',
      'prompts: { kind: synth, multiTurnP: 0, nestingP: 0, medianContextTokens: 12, maxContextTokens: 120 }',
      'request: { stream: true, maxTokens: 16, timeout: 20s }',
      'load: { profile: constant, rps: 8, duration: 12s, arrivals: uniform, seed: 5 }',
      'slo: { ttftMs: 1000, e2eMs: 3000 }',
      "thresholds: [ 'error_rate<0.05' ]",
      "maxRegression: 'p99_ms:+10%'",
      ...(faults.length ? ['faults:', ...faults.map((f) => `  - ${f}`)] : []),
      '',
    ].join('\n')
  );
  return file;
}
