/**
 * The inference engines' state from a real Prometheus: a vLLM pod exposing only the names of releases before the
 * renames (`vllm:gpu_cache_usage_perc`, `vllm:gpu_prefix_cache_{hits,queries}_total`), an SGLang pod (`sglang:*`), a
 * pod exposing nothing. One query per figure for the whole answer (counted), every figure with the name found, what a
 * pod lacks said. Then a per-trace root cause through the proxy (GET /api/traces/:id/rca) on a vLLM-shaped trace from
 * that pod: `llm_queue` naming waiting requests and KV usage, the verdict, the phases.
 * The exposition below is written by hand in the engines' formats (names and labels of vllm/v1/metrics/loggers.py
 * before the renames and of python/sglang/srt/metrics/collector.py); the values are the test's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RcaAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { EngineStateService } from '../../../backend-proxy/src/services/engine-state';
import { PrometheusSource, type PromSeries } from '../../../backend-proxy/src/sources/prometheus';
import { spansToOtlp } from '../../support/otlp-encode';
import { engineTrace, healthyCall } from '../../support/rca/engine-spans';
import { startPrometheus, type RealServer } from '../../support/real-servers';

const t0 = Date.now();
/** Counters grow with time: preemptions 1/s (60/min), prefix-cache hits 3 of every 10 queried tokens. */
function vllmOld(): string {
  const s = (Date.now() - t0) / 1000;
  const l = 'engine="0",model_name="llama-3-8b"';
  return [
    '# TYPE vllm:num_requests_waiting gauge',
    `vllm:num_requests_waiting{${l}} 37`,
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{${l}} 32`,
    '# TYPE vllm:gpu_cache_usage_perc gauge',
    `vllm:gpu_cache_usage_perc{${l}} 0.98`,
    '# TYPE vllm:num_preemptions_total counter',
    `vllm:num_preemptions_total{${l}} ${Math.floor(s)}`,
    '# TYPE vllm:gpu_prefix_cache_queries_total counter',
    `vllm:gpu_prefix_cache_queries_total{${l}} ${Math.floor(s) * 1000}`,
    '# TYPE vllm:gpu_prefix_cache_hits_total counter',
    `vllm:gpu_prefix_cache_hits_total{${l}} ${Math.floor(s) * 300}`,
    '',
  ].join('\n');
}
function sglang(): string {
  const l = 'model_name="qwen",tp_rank="0"';
  return [
    '# TYPE sglang:num_queue_reqs gauge',
    `sglang:num_queue_reqs{${l}} 5`,
    '# TYPE sglang:num_running_reqs gauge',
    `sglang:num_running_reqs{${l}} 12`,
    '# TYPE sglang:token_usage gauge',
    `sglang:token_usage{${l}} 0.5`,
    '# TYPE sglang:cache_hit_rate gauge',
    `sglang:cache_hit_rate{${l}} 0.7`,
    '',
  ].join('\n');
}

class CountingPrometheus extends PrometheusSource {
  calls: string[] = [];
  override queryRange(q: string, f: number, t: number, s: number): Promise<PromSeries[]> {
    this.calls.push(q);
    return super.queryRange(q, f, t, s);
  }
  override query(q: string, at?: number): Promise<PromSeries[]> {
    this.calls.push(q);
    return super.query(q, at);
  }
}

describe('engine state from Prometheus', () => {
  let metrics: Server;
  let prom: RealServer;
  let proxy: RunningProxy | undefined;
  before(async () => {
    metrics = createServer((req, res) => {
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(req.url === '/sglang' ? sglang() : vllmOld());
    });
    await new Promise<void>((r) => metrics.listen(0, '127.0.0.1', r));
    const port = (metrics.address() as AddressInfo).port;
    // The SGLang pod on its own path: Prometheus takes `__metrics_path__` as a target label.
    prom = await startPrometheus([
      { target: `127.0.0.1:${port}`, labels: { pod: 'llm-vllm-1', service: 'inference-a' } },
      { target: `127.0.0.1:${port}`, labels: { pod: 'sglang-0', service: 'sglang', __metrics_path__: '/sglang' } },
    ]);
    // Wait for a few scrapes of both pods (readiness, not a sleep).
    const p = new PrometheusSource(prom.url, 5000);
    for (let i = 0; i < 200; i++) {
      const r = await p.query('count_over_time({__name__=~"vllm:num_preemptions_total|sglang:token_usage"}[1m])');
      if (r.length === 2 && r.every((s) => (s.points[0]?.[1] ?? 0) >= 5)) break;
      await new Promise((res) => setTimeout(res, 250));
    }
  });
  after(async () => {
    await proxy?.close();
    await prom?.stop();
    metrics?.close();
  });

  it('one query per figure for every pod and instant; old vLLM names and SGLang read, each with the name found', async () => {
    const src = new CountingPrometheus(prom.url, 5000);
    const svc = new EngineStateService(src, 1000);
    const now = Date.now() - 1000;
    const ans = await svc.lookup([
      { service: 'inference-a', pod: 'llm-vllm-1', atMs: now },
      { service: 'inference-a', pod: 'llm-vllm-1', atMs: now - 1500 },
      { service: 'sglang', pod: 'sglang-0', atMs: now },
      { service: 'textgen', pod: 'tgi-0', atMs: now },
    ]);
    assert.equal(ans.queries, 5);
    assert.equal(src.calls.length, 5, src.calls.join('\n'));
    assert.ok(
      src.calls.every((q) => q.includes('pod=~"llm-vllm-1|sglang-0|tgi-0"')),
      src.calls[0]
    );

    const v = ans.lookup('inference-a', 'llm-vllm-1', now)!;
    assert.equal(v.waiting, 37);
    assert.equal(v.running, 32);
    assert.equal(v.kvCacheUsage, 0.98);
    assert.ok(v.preemptionsPerMin! > 45 && v.preemptionsPerMin! < 75, String(v.preemptionsPerMin));
    assert.equal(v.prefixCacheHitRate, 0.3);
    const metricOf = (f: string) => v.provenance.find((p) => p.figure === f)?.metric;
    assert.equal(metricOf('kvCacheUsage'), 'vllm:gpu_cache_usage_perc');
    assert.equal(metricOf('waiting'), 'vllm:num_requests_waiting');
    assert.equal(
      metricOf('prefixCacheHitRate'),
      'vllm:gpu_prefix_cache_hits_total ÷ vllm:gpu_prefix_cache_queries_total'
    );
    assert.ok(v.provenance.every((p) => p.instantMs <= now && p.instantMs > now - 5000 && p.scrapeIntervalS === 1));

    const g = ans.lookup('sglang', 'sglang-0', now)!;
    assert.equal(g.waiting, 5);
    assert.equal(g.running, 12);
    assert.equal(g.kvCacheUsage, 0.5);
    assert.equal(g.prefixCacheHitRate, 0.7);
    assert.equal(g.preemptionsPerMin, undefined);
    assert.equal(ans.lookup('textgen', 'tgi-0', now), undefined);
    assert.ok(
      ans.missing.some((m) => /no preemptions for pods sglang-0, tgi-0/.test(m)),
      ans.missing.join('\n')
    );
    assert.ok(
      ans.missing.some((m) => /no requests waiting for pod tgi-0/.test(m)),
      ans.missing.join('\n')
    );
  });

  it('a per-trace root cause names the saturated pod, its waiting requests and KV usage, with the old name found', async () => {
    proxy = await startProxy({
      port: 0,
      prometheusUrl: prom.url,
      exporterUrls: [],
      chainControlUrl: undefined,
      scrapeIntervalMs: 1000,
      sourceTimeoutMs: 5000,
    });
    const now = Date.now();
    const healthy = Array.from({ length: 30 }, (_, i) =>
      engineTrace({
        seed: i + 1,
        startMs: now - 60_000 + i * 1000,
        engine: 'vllm',
        service: 'inference-a',
        pod: 'llm-vllm-1',
        call: healthyCall(i + 1),
      })
    );
    const slow = engineTrace({
      seed: 99,
      startMs: now - 5000,
      engine: 'vllm',
      service: 'inference-a',
      pod: 'llm-vllm-1',
      call: { ...healthyCall(99), queueMs: 2800 },
    });
    const r = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(spansToOtlp([...healthy.flat(), ...slow])),
    });
    assert.equal(r.status, 200, await r.text());
    const res = await fetch(`${proxy.url}/api/traces/${slow[0].traceId}/rca`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const ans = RcaAnswer.parse(body);
    assert.equal(ans.candidates[0].service, 'inference-a');
    assert.equal(ans.candidates[0].pod, 'llm-vllm-1');
    const q = ans.candidates[0].evidence.find((e) => e.kind === 'llm_queue')!;
    assert.ok(q, JSON.stringify(ans.candidates[0].evidence));
    assert.match(q.summary, /behind 37 waiting requests, 32 running, KV cache 98 %/);
    assert.match(q.summary, /vllm:gpu_cache_usage_perc/);
    assert.match(
      ans.verdict!,
      /^llm-vllm-1 saturated: queued 2\.8 s \(usually 4\d ms\) behind 37 waiting requests, KV cache 98 %, \d+ preemptions\/min$/
    );
    const lp = ans.llmPhases![0];
    assert.equal(lp.engine, 'vllm');
    assert.equal(
      lp.engineState?.provenance.find((p) => p.figure === 'kvCacheUsage')?.metric,
      'vllm:gpu_cache_usage_perc'
    );
  });
});
