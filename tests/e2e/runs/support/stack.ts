/**
 * The stack for the load-test runs story, every server on a free port: the simulated chain (real hops, spans to the
 * proxy's embedded store, real /metrics), a real Prometheus scraping the chain (its HTTP SD) and the running
 * load-test workers (the proxy's HTTP SD, the demo's own scrape job), the real backend proxy on an embedded PGlite in a
 * temp dir, the Grafana-compatible host serving the built plugin, and `hopscope-load` itself (`main()` of
 * loadgen/src/cli.ts) for each run. Built with the tests' stack builder (tests/support/stack.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { RunningProxy } from '../../../../backend-proxy/src/server';
import type { RunningChain } from '../../../../loadgen/src/chain/start';
import { main } from '../../../../loadgen/src/cli';
import type { RunningHost } from '../../../host/server';
import { startTestStack } from '../../../support/stack';
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
  const stack = await startTestStack({
    tmpPrefix: 'hopscope-e2e-runs-',
    chain: {
      timeScale: opts.timeScale ?? 0.1,
      samplerAdaptive: false,
      samplerBaseRate: 1,
      hopTimeoutMs: 5000,
      seed: 11,
    },
    proxy: ({ chain, dir }) => ({
      chainControlUrl: chain.controlUrl,
      alertIntervalMs: 0,
      dataDir: join(dir, 'data'),
      scrapeIntervalMs: 1000,
    }),
    // The chain's hops through its HTTP SD, the running load-test workers through the proxy's (the demo's jobs).
    prometheus: { chain: 'sd', runs: true },
    host: true,
  });
  const { chain, proxy, promUrl, dir } = stack;
  try {
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
  } catch (err) {
    await stack.close();
    throw err;
  }

  // The load's own flags last, so a run can override the stack's (a warm-up reports nowhere: `--report none`);
  // tests/support/stack.ts hopscopeLoad puts them first.
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
  return { chain, proxy, promUrl, host: stack.host!, dir, load, close: stack.close };
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
