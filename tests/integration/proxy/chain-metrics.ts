/**
 * A small prom-client server exposing the real vLLM / TGI / DCGM names (fixtures/metrics) with steady synthetic
 * traffic, for a real Prometheus to scrape in proxy tests. DCGM: no SM_ACTIVE (fallback), both hostname spellings,
 * one GPU reporting the FP64 blank sentinel.
 */
import client from 'prom-client';
import { tinyServer } from '../../support/otlp-spans';

export const DCGM_BLANK = 140737488355328;

/** `pods` > 1 repeats the vLLM/TGI series per pod (a fleet), for benchmarks that need Prometheus to do real work. */
export async function startChainMetrics(
  pods = 1
): Promise<{ url: string; target: string; close(): Promise<void>; stopTraffic(): void }> {
  const reg = new client.Registry();
  const VLLM_E2E = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0];
  const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
  // Every metric: help 'x', in this server's registry.
  const counter = <L extends string>(name: string, labelNames: readonly L[]) =>
    new client.Counter<L>({ name, help: 'x', labelNames, registers: [reg] });
  const histogram = <L extends string>(name: string, labelNames: readonly L[], buckets: number[]) =>
    new client.Histogram<L>({ name, help: 'x', labelNames, buckets, registers: [reg] });
  const gauge = <L extends string>(name: string, labelNames: readonly L[]) =>
    new client.Gauge<L>({ name, help: 'x', labelNames, registers: [reg] });
  const vSuccess = counter('vllm:request_success_total', ['model_name', 'engine', 'finished_reason', 'pod']);
  const vGen = counter('vllm:generation_tokens_total', ['model_name', 'engine', 'pod']);
  const vE2e = histogram('vllm:e2e_request_latency_seconds', ['model_name', 'engine', 'pod'], VLLM_E2E);
  const vTtft = histogram('vllm:time_to_first_token_seconds', ['model_name', 'engine', 'pod'], TTFT);
  const vHits = counter('vllm:prefix_cache_hits_total', ['model_name', 'engine', 'pod']);
  const vQueries = counter('vllm:prefix_cache_queries_total', ['model_name', 'engine', 'pod']);
  const tSuccess = counter('tgi_request_success', ['pod']);
  const tFail = counter('tgi_request_failure', ['err', 'pod']);
  const tGen = histogram('tgi_request_generated_tokens', ['pod'], [1, 10, 100, 1000]);
  const tDur = histogram('tgi_request_duration', ['pod'], [0.1, 0.5, 1, 2, 5, 10]);
  const gr = gauge('DCGM_FI_PROF_GR_ENGINE_ACTIVE', ['gpu', 'UUID', 'Hostname', 'hostname', 'pod', 'namespace']);
  const util = gauge('DCGM_FI_DEV_GPU_UTIL', ['gpu', 'UUID', 'hostname']);
  const model = 'llama-3-8b';
  const podNames = Array.from({ length: pods }, (_, i) => (pods === 1 ? 'llm-0' : `llm-${i}`));
  // Initialise every labelled child so rate() has a starting point.
  for (const pod of podNames) {
    vSuccess.inc({ model_name: model, engine: '0', finished_reason: 'stop', pod }, 0);
    vSuccess.inc({ model_name: model, engine: '0', finished_reason: 'abort', pod }, 0);
    tFail.inc({ err: 'overloaded', pod }, 0);
  }
  const tick = (): void => {
    // Per 100 ms and pod: vLLM 4 ok + 1 abort (error rate 0.2), 10 tokens each; prefix cache 3/5 hits; TGI 3 ok + 1 failure.
    for (const pod of podNames) {
      const l = { model_name: model, engine: '0', pod };
      vSuccess.inc({ ...l, finished_reason: 'stop' }, 4);
      vSuccess.inc({ ...l, finished_reason: 'abort' }, 1);
      vGen.inc(l, 50);
      for (let i = 0; i < 5; i++) {
        vE2e.observe(l, 0.9);
        vTtft.observe(l, 0.07);
      }
      vHits.inc(l, 3);
      vQueries.inc(l, 5);
      tSuccess.inc({ pod }, 3);
      tFail.inc({ err: 'overloaded', pod }, 1);
      for (let i = 0; i < 3; i++) {
        tGen.observe({ pod }, 20);
        tDur.observe({ pod }, 1.5);
      }
    }
  };
  gr.set({ gpu: '0', UUID: 'GPU-aaa', Hostname: 'node-a', pod: 'llm-vllm-0', namespace: 'chain' }, 0.75);
  gr.set({ gpu: '1', UUID: 'GPU-bbb', hostname: 'node-b', pod: 'llm-tgi-0', namespace: 'chain' }, 0.25);
  gr.set({ gpu: '2', UUID: 'GPU-ccc', hostname: 'node-b' }, DCGM_BLANK);
  util.set({ gpu: '0', UUID: 'GPU-aaa', hostname: 'node-a' }, 50);
  const timer = setInterval(tick, 100);
  const srv = await tinyServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': reg.contentType });
    res.end(await reg.metrics());
  });
  return {
    url: srv.url,
    target: srv.url.replace('http://', ''),
    stopTraffic: () => clearInterval(timer),
    close: async () => {
      clearInterval(timer);
      await srv.close();
    },
  };
}
