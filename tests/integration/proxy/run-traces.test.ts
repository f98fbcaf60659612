/**
 * Every request a run links to has its trace (issue 19, item 6): the chain as the demo runs it — the gateway's adaptive
 * sampler on, a steady load of requests without a traceparent beside the run (as the demo's background traffic before
 * hopscope-load sent one) — and a run of `hopscope-load` (`main()` of loadgen/src/cli.ts) on top, with an error fault
 * on rag so some requests fail. The run's QPS jump cuts the sampler's rate for parentless traffic; the run's own
 * requests carry a sampled traceparent, which the parent-based sampler honours, and the failed ones are kept by the
 * keep-errors path. Each slowest and failed request of the proxy's record then resolves: `GET /api/traces/:id` → 200.
 * Real parts: the simulated chain (in this process, time scale 0.05, spans to the proxy's embedded store), the proxy
 * on an in-memory PGlite.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RunRecord } from '../../../contract';
import type { RunningChain } from '../../../loadgen/src/chain/start';
import type { RunningProxy } from '../../../backend-proxy/src/server';
import { main } from '../../../loadgen/src/cli';
import { startTestStack, type TestStack } from '../../support/stack';

let stack: TestStack;
let proxy: RunningProxy;
let chain: RunningChain;
let dir: string;

before(async () => {
  stack = await startTestStack({
    tmpPrefix: 'run-traces-',
    split: { readyTimeoutMs: 120_000 },
    chain: { timeScale: 0.05, samplerAdaptive: true },
    proxy: (s) => ({ chainControlUrl: s.chain.controlUrl }),
    prometheus: false,
  });
  ({ proxy, chain, dir } = stack);
});
after(async () => {
  await stack?.close();
});

/** The gateway's `hopscope_sampler_rate` (its adaptive sampler's current rate for traces without a parent). */
async function samplerRate(): Promise<number | undefined> {
  const gateway = chain.hops.find((h) => h.hop === 'gateway')!;
  const text = await (await fetch(gateway.metricsUrl)).text();
  const m = /^hopscope_sampler_rate(?:\{[^}]*\})? ([\d.e+-]+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Parentless chat requests at `rps` until `signal` aborts, as a steady background load; returns how many were sent. */
async function steadyLoad(rps: number, signal: AbortSignal): Promise<number> {
  let sent = 0;
  const inflight: Array<Promise<unknown>> = [];
  while (!signal.aborted) {
    sent++;
    inflight.push(
      fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'hopscope-llama-8b-v1',
          messages: [{ role: 'user', content: 'What is a vector cache?' }],
          max_tokens: 8,
        }),
      })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined)
    );
    await new Promise((r) => setTimeout(r, 1000 / rps));
  }
  await Promise.all(inflight);
  return sent;
}

test(
  'beside a steady parentless load and under an adaptive sampler, every slowest and failed request of a run resolves to its trace',
  { timeout: 180_000 },
  async (t) => {
    const stop = new AbortController();
    const background = steadyLoad(4, stop.signal);
    // The sampler's window (10 s) learns the steady rate first, so the run's arrival is a jump.
    await new Promise((r) => setTimeout(r, 11_000));
    const fault = (await (
      await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'rag', kind: 'error', magnitude: 0.3 }),
      })
    ).json()) as { id: string };
    let lowestRate = 1;
    const watch = setInterval(() => {
      void samplerRate().then((r) => {
        if (r !== undefined) lowestRate = Math.min(lowestRate, r);
      });
    }, 500);
    let code: number;
    let err = '';
    try {
      code = await main(
        [
          '--scenario',
          'single-turn-short',
          '--target',
          chain.gatewayUrl,
          '--control',
          chain.controlUrl,
          '--rps',
          '10',
          '--duration',
          '10s',
          '--run-id',
          'traces-1',
          '--report',
          proxy.url,
          '--metrics',
          'none',
          '--quiet',
          '--spool-dir',
          join(dir, 'spool'),
        ],
        () => {},
        (s) => {
          err += s;
        },
        { env: {} }
      );
    } finally {
      clearInterval(watch);
      await fetch(`${chain.controlUrl}/faults/${fault.id}`, { method: 'DELETE' });
      stop.abort();
    }
    const steadySent = await background;
    // 1: the scenario's error-rate threshold fails on the injected errors, as it should.
    assert.ok([0, 1].includes(code), `exit ${code}: ${err.slice(-600)}`);
    await chain.forceFlush();

    const rec = RunRecord.parse(await (await fetch(`${proxy.url}/api/runs/traces-1`)).json());
    t.diagnostic(
      `steady requests ${steadySent}; lowest sampler rate ${lowestRate}; run completed ${rec.summary?.completed}; slowest ${rec.slowest.length}, failed ${rec.failed.length}`
    );
    // The conditions that lost traces before: the sampler cut its rate for the parentless load during the run.
    assert.ok(lowestRate < 1, `the adaptive sampler's rate stayed ${lowestRate}: the run was no jump for it`);
    assert.ok(rec.slowest.length > 0, 'the record keeps the slowest requests');
    assert.ok(rec.failed.length > 0, 'the error fault failed some requests');
    const linked = [...rec.slowest, ...rec.failed].filter((q) => q.traceId);
    assert.equal(linked.length, rec.slowest.length + rec.failed.length, 'every kept request has a trace id');
    const missing: string[] = [];
    for (const q of linked) {
      const r = await fetch(`${proxy.url}/api/traces/${q.traceId}`);
      await r.arrayBuffer();
      if (r.status !== 200) missing.push(`${q.traceId} (${q.outcome}, ${q.e2eMs} ms): ${r.status}`);
    }
    assert.deepEqual(missing, [], 'every linked request resolves to its trace');
    assert.ok(
      linked.every((q) => q.traceSampled !== false),
      'no linked request says its trace was dropped'
    );
  }
);
