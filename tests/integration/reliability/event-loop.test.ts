/**
 * One hostile trace does not stall the proxy: a trace of 20,000 spans sharing one span id (what once took the
 * engine's shared-span split quadratic time on the event loop) is planted through OTLP and sent to POST /api/rca,
 * and its root cause asked for again and again, while a poller on its own thread asks /metrics and /api/health every
 * few milliseconds and times each answer. Every poll answers within 100 ms; the root causes answer, and say what the
 * engine's caps left out. It times answers, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { figure } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';

const COPIES = 20_000;
const LIMIT_MS = 100;
const MIN_POLLS = 300;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SHARED_ID = '00f067aa0ba902b7';
const ROOT_ID = '0af7651916cd43dd';

/** OTLP JSON: a gateway root and 20,000 spans under one span id, over 40 services and 13 pods each, in their own windows. */
function hostileTrace(): unknown {
  const t0 = BigInt(Date.now() - 60_000) * 1_000_000n;
  const ns = (ms: number): string => String(t0 + BigInt(Math.round(ms * 1_000_000)));
  const byResource = new Map<string, unknown[]>();
  const add = (service: string, pod: string, span: unknown): void => {
    const k = `${service}\u0000${pod}`;
    const l = byResource.get(k);
    if (l) l.push(span);
    else byResource.set(k, [span]);
  };
  add('gateway', 'gateway-0', {
    traceId: TRACE_ID,
    spanId: ROOT_ID,
    name: 'POST /v1/chat',
    kind: 2,
    startTimeUnixNano: ns(0),
    endTimeUnixNano: ns(30_000),
  });
  for (let i = 0; i < COPIES; i++) {
    const service = `svc${i % 40}`;
    add(service, `${service}-${i % 13}`, {
      traceId: TRACE_ID,
      spanId: SHARED_ID,
      parentSpanId: ROOT_ID,
      name: 'op',
      startTimeUnixNano: ns(i),
      endTimeUnixNano: ns(i + 10 + (i % 7)),
    });
  }
  return {
    resourceSpans: [...byResource].map(([k, spans]) => {
      const [service, pod] = k.split('\u0000');
      return {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'k8s.pod.name', value: { stringValue: pod } },
          ],
        },
        scopeSpans: [{ spans }],
      };
    }),
  };
}

/** A healthy two-span trace (the warm-up). */
function smallTrace(): unknown {
  const t0 = BigInt(Date.now() - 60_000) * 1_000_000n;
  const span = (spanId: string, parentSpanId: string | undefined, ms: number) => ({
    traceId: TRACE_ID.replace(/^4/, '5'),
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: 'op',
    kind: parentSpanId ? 3 : 2,
    startTimeUnixNano: String(t0),
    endTimeUnixNano: String(t0 + BigInt(ms) * 1_000_000n),
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gateway' } }] },
        scopeSpans: [{ spans: [span(ROOT_ID, undefined, 20), span(SHARED_ID, ROOT_ID, 10)] }],
      },
    ],
  };
}

/** A poller on its own thread (the test's own work must not delay it): GET each path in turn, timing every answer. */
function startPoller(
  base: string,
  paths: string[]
): { stop(): Promise<Array<{ path: string; ms: number; status: number }>> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const http = require('node:http');
    // This thread ahead of the neighbours too (its own nice value), so its clock measures the proxy, not the queue for a core.
    try { require('node:os').setPriority(-10); } catch {}
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const out = [];
    let stop = false;
    parentPort.on('message', () => { stop = true; });
    const get = (path) => new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.get(workerData.base + path, { agent, timeout: 10000 }, (res) => {
        res.resume();
        res.on('end', () => resolve({ path, ms: performance.now() - t0, status: res.statusCode }));
      });
      req.on('error', () => resolve({ path, ms: performance.now() - t0, status: 0 }));
      req.on('timeout', () => req.destroy());
    });
    (async () => {
      for (let i = 0; !stop; i++) {
        out.push(await get(workerData.paths[i % workerData.paths.length]));
        await new Promise((r) => setTimeout(r, 5));
      }
      parentPort.postMessage(out);
    })();`;
  const w = new Worker(code, { eval: true, workerData: { base, paths } });
  const done = new Promise<Array<{ path: string; ms: number; status: number }>>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  return {
    async stop() {
      w.postMessage('stop');
      const polls = await done;
      await w.terminate();
      return polls;
    },
  };
}

let proxy: ProxyProcess;
before(async () => {
  proxy = await startProxyProcess({ HOPSCOPE_PROMETHEUS_URL: 'none', HOPSCOPE_EXPORTER_URLS: 'none' });
  // The proxy's event loop ahead of the other processes on this shared machine (nice -10, its main thread; threads it
  // starts later inherit it, and the engine's workers lower themselves to 19): what is measured is the proxy's own
  // event loop against its own engine, not the neighbours' load. Needs root; without it, the default priority.
  try {
    setPriority(proxy.child.pid!, -10);
  } catch {
    // not permitted: measured at the default priority
  }
});
after(async () => {
  await proxy?.stop();
});

it('a trace of 20,000 spans under one span id: /metrics and /api/health answer within 100 ms throughout', async () => {
  const body = JSON.stringify(hostileTrace());
  // Ready first: the routes answered once and the engine's worker started (a small window ranked).
  for (const path of ['/metrics', '/api/health']) await (await fetch(`${proxy.url}${path}`)).text();
  const small = `{"traces":${JSON.stringify(smallTrace())}}`;
  const warm = await fetch(`${proxy.url}/api/rca`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: small,
  });
  assert.equal(warm.status, 200, await warm.text());
  const poller = startPoller(proxy.url, ['/metrics', '/api/health']);
  // The poller is up before the trace arrives.
  await new Promise((r) => setTimeout(r, 500));
  const t0 = performance.now();
  const ingest = await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  assert.equal(ingest.status, 200, await ingest.text());
  const answers: Array<{ path: string; status: number; missing: string[] }> = [];
  const ask = async (init?: RequestInit, path = `/api/traces/${TRACE_ID}/rca`): Promise<void> => {
    const r = await fetch(`${proxy.url}${path}`, init);
    const j = (await r.json()) as { missing?: string[] };
    answers.push({ path, status: r.status, missing: j.missing ?? [] });
  };
  // The planted trace's root cause, three times over, and the same trace uploaded as an incident window, twice.
  for (let k = 0; k < 3; k++) await ask();
  const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"traces":${body}}` };
  for (let k = 0; k < 2; k++) await ask(post, '/api/rca');
  // Keep polling until a generous sample is in.
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    if (performance.now() - t0 > 3000) break;
  }
  let polls = await poller.stop();
  while (polls.length < MIN_POLLS) {
    const more = startPoller(proxy.url, ['/metrics', '/api/health']);
    await new Promise((r) => setTimeout(r, 1000));
    polls = polls.concat(await more.stop());
  }
  const slow = polls.filter((p) => p.ms > LIMIT_MS);
  const sorted = polls.map((p) => p.ms).sort((a, b) => a - b);
  figure('event-loop-hostile-trace', {
    spansUnderOneId: COPIES,
    bodyBytes: body.length,
    polls: polls.length,
    over100ms: slow.length,
    p99Ms: Math.round(sorted[Math.floor(sorted.length * 0.99)] * 10) / 10,
    maxMs: Math.round(sorted.at(-1)! * 10) / 10,
    rcaAnswers: answers.map((a) => a.status),
    tookMs: Math.round(performance.now() - t0),
  });
  for (const a of answers) {
    assert.equal(a.status, 200);
    // The embedded store keeps one span per span id (a copy replaces the one before it); the upload keeps them all.
    if (a.path === '/api/rca')
      assert.ok(
        a.missing.some((m) => /beyond the first \d+ under one span id were ignored/.test(m)),
        `the cap on copies per id is said: ${a.missing.join(' | ')}`
      );
  }
  assert.ok(
    polls.every((p) => p.status === 200),
    'every poll answered 200'
  );
  assert.equal(
    slow.length,
    0,
    `polls over ${LIMIT_MS} ms: ${slow.map((p) => `${p.path} ${Math.round(p.ms)} ms`).join(', ')}`
  );
});
