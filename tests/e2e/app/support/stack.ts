/**
 * The whole stack for the app's end-to-end story, every server on a free port: the simulated chain (real hops, real
 * OpenTelemetry spans and /metrics), a real Prometheus scraping it, the real backend proxy (embedded trace store,
 * Prometheus, the chain's fault API for annotations), the Grafana-compatible host serving the built plugin, and the
 * chain's load driver sending steady traffic until stopped. Built with the tests' stack builder
 * (tests/support/stack.ts), plus the exporter replaying recorded kernel events and the load.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';

import type { RunningProxy } from '../../../../backend-proxy/src/server';
import { loadConfig as loadExporterConfig } from '../../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../../bpf-exporter/src/server';
import type { KernelEvent } from '../../../../contract';
import { podName } from '../../../../loadgen/src/chain/topology';
import type { RunningChain } from '../../../../loadgen/src/chain/start';
import { runLoad } from '../../../../loadgen/src/load/driver';
import type { RealServer } from '../../../support/real-servers';
import { startTestStack } from '../../../support/stack';
import type { RunningHost } from '../../../host/server';
import { waitFor as pollUntil } from '../../../support/wait';

export interface Stack {
  chain: RunningChain;
  exporter: Exporter;
  prometheus: RealServer;
  proxy: RunningProxy;
  host: RunningHost;
  stopLoad(): Promise<void>;
  close(): Promise<void>;
}

export async function startStack(opts: { rps?: number } = {}): Promise<Stack> {
  // Kernel evidence: every hop runs inside this one test process, so live probes could not tell its pods apart.
  // The exporter replays a recording instead (its documented mode for that case; every event says mode "replay"):
  // slow TLS handshakes and retransmits on the rag pods, quick handshakes elsewhere, spaced in real time. It starts
  // first, since the proxy is told its URL.
  const dir = mkdtempSync(join(tmpdir(), `hopscope-e2e-app-kernel-${process.pid}-`));
  const recording = join(dir, 'kernel.jsonl');
  writeFileSync(
    recording,
    kernelRecording(process.pid)
      .map((e) => JSON.stringify(e))
      .join('\n') + '\n'
  );
  let exporter: Exporter;
  try {
    exporter = await startExporter(
      loadExporterConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_NODE: 'cpu-node-0',
        HOPSCOPE_BPF_REPLAY: recording,
        HOPSCOPE_BPF_REPLAY_TIMING: 'original',
        HOPSCOPE_LOG_LEVEL: 'silent',
      }),
      pino({ level: 'silent' })
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const stopExporter = async (): Promise<void> => {
    await exporter.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  // The chain (its spans to the proxy), a real Prometheus scraping its hops (static targets with their pod labels),
  // the real proxy (Prometheus, the replaying exporter, the chain's fault API for annotations) and the host serving
  // the built plugin, the proxy's PNG export rendering app views from it.
  const stack = await startTestStack({
    tmpPrefix: 'hopscope-e2e-app-',
    chain: { timeScale: 0.1, samplerBaseRate: 1, seed: 7 },
    proxy: ({ chain }) => ({ exporterUrls: [exporter.url], chainControlUrl: chain.controlUrl }),
    prometheus: { chain: 'static' },
    host: true,
  }).catch(async (err: unknown) => {
    await stopExporter().catch(() => undefined);
    throw err;
  });
  stack.onClose(stopExporter);
  const { chain, proxy } = stack;
  try {
    const abort = new AbortController();
    const load = runLoad({
      target: chain.gatewayUrl,
      path: '/v1/chat/completions',
      method: 'POST',
      profile: { kind: 'constant', rps: opts.rps ?? 6, durationS: 3600, arrivals: 'uniform' },
      stream: true,
      models: ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2'],
      backend: 'mix',
      agentRatio: 0,
      maxTokens: 16,
      seed: 3,
      runId: 'e2e-app',
      timeoutMs: 20_000,
      connections: 16,
      maxInFlight: 64,
      slo: {},
      // The driver's own span is not exported: sending its traceparent would make every trace look broken.
      traceparent: false,
      signal: abort.signal,
    }).catch(() => undefined);
    const stopLoad = async (): Promise<void> => {
      abort.abort();
      await load;
    };
    stack.onClose(stopLoad);
    // Ready when a dashboard opened now has data: Prometheus has scraped the traffic at least twice (a rate needs
    // two samples) and both backends' request rates are there. Pages do not poll, so a page opened earlier would
    // keep its "no data" answer.
    await waitFor(
      'request rates in Prometheus through the proxy',
      async () => {
        for (const backend of ['vllm', 'tgi']) {
          const g = (await (
            await fetch(`${proxy.url}/api/golden?backend=${backend}&from=${Date.now() - 600_000}&to=${Date.now()}`)
          ).json()) as { series: Array<{ metric: string; points: Array<[number, number | null]> }> };
          if (!g.series.some((x) => x.metric === 'rps' && x.points.some(([, v]) => v !== null && v > 0)))
            return undefined;
        }
        return true;
      },
      60_000
    );
    return {
      chain,
      exporter,
      prometheus: stack.prometheus!,
      proxy,
      host: stack.host!,
      stopLoad,
      close: stack.close,
    };
  } catch (err) {
    await stack.close();
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

/** The replayed kernel events (times are re-based to when the exporter starts; the first event anchors the rest). */
function kernelRecording(pid: number): KernelEvent[] {
  const t0 = 1_700_000_000_000;
  const ev = (
    offsetMs: number,
    type: KernelEvent['type'],
    pod: string,
    durationMs: number | undefined,
    detail: Record<string, unknown>
  ): KernelEvent => ({
    ts: t0 + offsetMs,
    type,
    pid,
    comm: 'node',
    pod,
    namespace: 'hopscope-demo',
    node: 'cpu-node-0',
    durationMs,
    detail,
    mode: 'live',
  });
  const out: KernelEvent[] = [
    ev(0, 'tls_handshake', podName('gateway', 0), 4, { role: 'client', peer: '127.0.0.1:443' }),
  ];
  let k = 0;
  for (let t = 12_000; t < 600_000; t += 700, k++) {
    const rag = podName('rag', k % 2);
    out.push(ev(t, 'tls_handshake', rag, 520 + ((k * 37) % 180), { role: 'client', peer: 'vector-cache:8443' }));
    if (k % 3 === 0) {
      out.push(ev(t + 120, 'tcp_retransmit', rag, undefined, { daddr: '10.0.0.7', dport: 8443, state: 'ESTABLISHED' }));
    }
    if (k % 2 === 0) {
      out.push(
        ev(t + 300, 'tls_handshake', podName('embedding', 0), 3 + (k % 5), {
          role: 'client',
          peer: 'vector-cache:8443',
        })
      );
      out.push(
        ev(t + 350, 'tcp_connect', podName('vector-cache', 0), 0.4 + (k % 3) * 0.1, { daddr: '10.0.0.9', dport: 6379 })
      );
    }
  }
  return out;
}
