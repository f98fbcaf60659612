/**
 * A run's slowest and failed requests, their client TTFT split along their traces (GET /api/runs/:runId/ttft/requests):
 * client → gateway, the hops before the LLM, the engine's queue and prefill from vLLM's `llm_request` span
 * (tests/support/rca/engine-spans.ts, derived from vLLM's source at the commit named there), the way back as the
 * remainder; a TGI span gives no prefill and says so; a trace without an engine span says so; the means over those
 * that have each part. The route: a 404 for an unknown run, the answer valid against its schema.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunTtftRequestsAnswer, type RunRecord, type RunRequest, type Span } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { RunTtftRequestsService } from '../../../backend-proxy/src/services/run-ttft-requests';
import type { TraceService } from '../../../backend-proxy/src/services/traces';
import { engineTrace, healthyCall } from '../../support/rca/engine-spans';

const vllm = engineTrace({
  seed: 1,
  engine: 'vllm',
  service: 'inference-a',
  pod: 'llm-vllm-1',
  call: { ...healthyCall(1), queueMs: 2000, prefillMs: 300 },
});
const tgi = engineTrace({ seed: 2, engine: 'tgi', service: 'textgen', pod: 'tgi-0', call: healthyCall(2) });
const plain = vllm.filter((s) => s.name !== 'llm_request').map((s) => ({ ...s, traceId: 'c'.repeat(32) }));

/** The client sent 2 ms before the gateway's span starts and saw its first chunk 5 ms after vLLM's first token. */
function requestOf(spans: Span[], o: Partial<RunRequest> = {}): RunRequest {
  const gw = spans.find((s) => s.kind === 'server')!;
  const llm = spans.find((s) => s.name === 'llm_request');
  const firstToken = llm
    ? llm.startMs +
      1000 *
        (Number(llm.attributes['gen_ai.latency.time_in_queue']) +
          Number(llm.attributes['gen_ai.latency.time_in_model_prefill']))
    : gw.endMs;
  return {
    traceId: spans[0].traceId,
    traceIdSource: 'sent',
    startMs: gw.startMs - 2,
    e2eMs: gw.endMs - gw.startMs + 4,
    ttftMs: firstToken + 5 - (gw.startMs - 2),
    outcome: 'ok',
    ...o,
  };
}

describe('client TTFT per request, decomposed', () => {
  it('splits each request along its trace and averages each part over the requests that have it', async () => {
    const byId = new Map([vllm, tgi, plain].map((t) => [t[0].traceId, t]));
    const run = {
      runId: 'r1',
      slowest: [requestOf(vllm), requestOf(tgi)],
      failed: [
        requestOf(plain, { outcome: 'timeout', ttftMs: null }),
        { ...requestOf(vllm), traceId: null, traceIdSource: 'none' as const },
      ],
    } as unknown as RunRecord;
    const traces = {
      byId: async (id: string) => ({ traceId: id, spans: byId.get(id) ?? [] }),
    } as unknown as TraceService;
    const svc = new RunTtftRequestsService({ get: async (id) => (id === 'r1' ? run : undefined) }, traces);
    const ans = RunTtftRequestsAnswer.parse(await svc.requests('r1'));
    assert.equal(ans.requests.length, 3);
    const part = (traceId: string, p: string) =>
      ans.requests.find((r) => r.traceId === traceId)!.parts.find((x) => x.part === p)!.ms;

    const v = vllm[0].traceId;
    assert.equal(part(v, 'client_to_gateway'), 2);
    assert.equal(part(v, 'before_llm'), 3.6); // gateway's own 3 ms + the 0.6 ms into the engine
    assert.equal(part(v, 'engine_queue'), 2000);
    assert.equal(part(v, 'engine_prefill'), 300);
    assert.equal(part(v, 'way_back'), 5);
    const r = ans.requests.find((x) => x.traceId === v)!;
    assert.equal(r.llm?.pod, 'llm-vllm-1');
    assert.ok(
      Math.abs(r.parts.reduce((n, p) => n + (p.ms ?? 0), 0) - r.ttftMs!) < 0.01,
      'the parts add up to the client TTFT'
    );

    const t = ans.requests.find((x) => x.traceId === tgi[0].traceId)!;
    assert.equal(t.llm?.engine, 'tgi');
    assert.equal(part(t.traceId, 'engine_prefill'), null);
    assert.equal(part(t.traceId, 'way_back'), null);
    assert.ok(t.missing.some((m) => /does not split prefill from decode/.test(m)));

    const p = ans.requests.find((x) => x.traceId === plain[0].traceId)!;
    assert.equal(p.list, 'failed');
    assert.equal(part(p.traceId, 'engine_queue'), null);
    assert.ok(
      p.missing.some((m) => /no inference server span|no engine phases/.test(m)),
      p.missing.join('; ')
    );
    assert.ok(p.missing.some((m) => /no first chunk/.test(m)));

    const avg = (x: string) => ans.average.find((a) => a.part === x)!;
    assert.equal(avg('client_to_gateway').n, 3);
    assert.equal(avg('engine_prefill').n, 1);
    assert.equal(avg('engine_prefill').meanMs, 300);
    assert.ok(ans.missing.some((m) => /1 request\(s\) have no trace id/.test(m)));
  });

  describe('the route', () => {
    let proxy: RunningProxy;
    before(async () => {
      proxy = await startProxy({
        port: 0,
        prometheusUrl: undefined,
        exporterUrls: [],
        chainControlUrl: undefined,
        alertIntervalMs: 0,
      });
    });
    after(() => proxy.close());
    it('is a 404 for a run it does not know', async () => {
      const r = await fetch(`${proxy.url}/api/runs/nope-1/ttft/requests`);
      assert.equal(r.status, 404, await r.text());
    });
  });
});
