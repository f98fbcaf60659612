/**
 * Sources hung, killed or answering garbage, against the proxy's CLI: a real Prometheus process and a real
 * bpf-exporter process are stopped with SIGSTOP (the kernel still accepts their connections, nothing answers), then
 * resumed with SIGCONT; the exporter is killed; then every source is a server that answers garbage (invalid JSON,
 * the wrong shapes, HTML, huge bodies, a body dripping past the deadline, resets). What must hold on every endpoint
 * the dashboard calls: an answer within the source deadline (plus slack), never a 500, and the failed source named
 * in a per-source error (`sources[]`, or the error message of an endpoint that has only that source).
 * It times answers, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chainTrace, otlp } from '../../support/otlp-spans';
import { startPrometheus, type RealServer } from '../../support/real-servers';
import { figure } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';
import { startExporterProcess, type ExporterProcess } from './support/sources';

const DEADLINE_MS = 1500;
/** An answer within the source deadline plus what the proxy does around it, on a loaded CI machine. */
const WITHIN_MS = DEADLINE_MS + 3000;

interface Answer {
  path: string;
  status: number;
  ms: number;
  body: string;
}

/** The dashboard's endpoints (trace ids filled in). */
function endpoints(traceId: string): string[] {
  return [
    '/api/health',
    '/api/golden?from=now-15m&to=now&backend=vllm',
    '/api/golden?from=now-15m&to=now&backend=tgi',
    '/api/gpu/heatmap?from=now-15m&to=now',
    '/api/services?from=now-15m&to=now',
    '/api/services/rag/pods?from=now-15m&to=now',
    '/api/pods/rag-0/kernel-events?from=now-15m&to=now',
    '/api/annotations?from=now-15m&to=now',
    '/api/traces?from=now-1h&to=now',
    `/api/traces/${traceId}`,
    `/api/traces/${traceId}/rca`,
    '/api/rca?from=now-15m&to=now',
    '/api/compare?a=backend:vllm&b=backend:tgi&from=now-15m&to=now',
    '/api/alerts',
    `/api/export/postmortem?from=now-1h&to=now&traceId=${traceId}&pod=rag-0`,
    '/api/runs',
  ];
}

async function askAll(base: string, paths: string[]): Promise<Answer[]> {
  return Promise.all(
    paths.map(async (path) => {
      const t0 = performance.now();
      try {
        const r = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(WITHIN_MS + 10_000) });
        const body = await r.text();
        return { path, status: r.status, ms: performance.now() - t0, body };
      } catch (err) {
        return { path, status: 0, ms: performance.now() - t0, body: String(err) };
      }
    })
  );
}

/** Every answer in time, none a 5xx but a 502 that names the source; `failed` named in what the source-reading ones say. */
function check(answers: Answer[], failed: RegExp, reading: (path: string) => boolean, phase: string): void {
  for (const a of answers) {
    const what = `${phase}: ${a.path} → ${a.status} in ${Math.round(a.ms)} ms: ${a.body.slice(0, 300)}`;
    assert.ok(a.ms < WITHIN_MS, `late: ${what}`);
    assert.ok(a.status > 0 && a.status !== 500 && a.status !== 504, what);
    if (a.status === 502) assert.match(a.body, failed, what);
    else assert.ok(a.status < 500, what);
    if (reading(a.path)) assert.match(a.body, failed, `the failed source is named: ${what}`);
  }
}

// (/api/alerts reads Prometheus only for rules with a metric condition; the default rule has none.)
const PROM_PATHS = /\/api\/(health|golden|gpu\/heatmap|services(\?|\/rag\/pods))/;
const EXPORTER_PATHS = /\/api\/(health|pods\/rag-0\/kernel-events|export\/postmortem|traces\/[0-9a-f]+\/rca)/;

describe('sources stopped (SIGSTOP), resumed, killed: every endpoint answers in time with a per-source error', () => {
  let prom: RealServer;
  let exporter: ExporterProcess;
  let proxy: ProxyProcess;
  let traceId = '';
  let faults = 0;

  before(async () => {
    exporter = await startExporterProcess();
    prom = await startPrometheus([new URL(exporter.url).host]);
    proxy = await startProxyProcess({
      HOPSCOPE_PROMETHEUS_URL: prom.url,
      HOPSCOPE_EXPORTER_URLS: exporter.url,
      HOPSCOPE_SOURCE_TIMEOUT_MS: String(DEADLINE_MS),
      HOPSCOPE_ALERT_INTERVAL_MS: '1000',
    });
    const spans = Array.from({ length: 40 }, (_, i) =>
      chainTrace(i, Date.now() - 300_000 + i * 5000, 100 + (i % 5) * 200, i % 7 === 0 ? 2 : 1)
    ).flat();
    const r = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlp(spans)),
    });
    assert.equal(r.status, 200);
    traceId = spans[0].traceId;
  });

  after(async () => {
    for (const c of [prom?.child, exporter?.child]) if (c && c.exitCode === null) c.kill('SIGCONT');
    await proxy?.stop();
    await Promise.all([prom?.stop(), exporter?.stop()]);
    figure('sources', { faultsSurvived: faults, deadlineMs: DEADLINE_MS });
  });

  it('all sources up: every endpoint answers 200', async () => {
    const answers = await askAll(proxy.url, endpoints(traceId));
    for (const a of answers) assert.equal(a.status, 200, `${a.path}: ${a.body.slice(0, 300)}`);
  });

  it('Prometheus stopped with SIGSTOP: answers within the deadline, Prometheus named; SIGCONT: back to healthy', async () => {
    prom.child.kill('SIGSTOP');
    try {
      check(await askAll(proxy.url, endpoints(traceId)), /prometheus/, (p) => PROM_PATHS.test(p), 'prometheus stopped');
      assert.equal(proxy.exited(), undefined);
    } finally {
      prom.child.kill('SIGCONT');
    }
    faults++;
    const health = JSON.parse((await askAll(proxy.url, ['/api/health']))[0].body);
    assert.equal(
      health.sources.find((s: { source: string }) => s.source === 'prometheus').ok,
      true,
      JSON.stringify(health)
    );
  });

  it('the exporter stopped with SIGSTOP: its kernel evidence is a per-source error in time; SIGCONT: back', async () => {
    exporter.child.kill('SIGSTOP');
    try {
      check(
        await askAll(proxy.url, endpoints(traceId)),
        /bpf-exporter|exporter/,
        (p) => EXPORTER_PATHS.test(p),
        'exporter stopped'
      );
    } finally {
      exporter.child.kill('SIGCONT');
    }
    faults++;
    const ev = JSON.parse((await askAll(proxy.url, ['/api/pods/rag-0/kernel-events?from=now-15m&to=now']))[0].body);
    assert.ok(
      ev.sources.every((s: { ok: boolean }) => s.ok),
      JSON.stringify(ev.sources)
    );
  });

  it('both stopped at once, then the exporter killed: still answers in time, never a 500', async () => {
    prom.child.kill('SIGSTOP');
    exporter.child.kill('SIGSTOP');
    try {
      check(
        await askAll(proxy.url, endpoints(traceId)),
        /prometheus|exporter/,
        (p) => PROM_PATHS.test(p) || EXPORTER_PATHS.test(p),
        'both stopped'
      );
    } finally {
      prom.child.kill('SIGCONT');
    }
    faults++;
    exporter.child.kill('SIGKILL');
    await new Promise((r) => exporter.child.once('exit', r));
    check(await askAll(proxy.url, endpoints(traceId)), /exporter/, (p) => EXPORTER_PATHS.test(p), 'exporter killed');
    faults++;
    assert.equal(proxy.exited(), undefined, proxy.output());
  });
});

/** One kind of garbage per request, in turn: what a broken or hostile source may answer. */
function garbageServer(): Promise<{ url: string; server: Server; hits: () => number }> {
  let n = 0;
  const kinds: Array<(res: import('node:http').ServerResponse) => void> = [
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"success","data":');
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'success',
          data: {
            resultType: 'matrix',
            result: [null, 1, { metric: 'x', values: 'nope' }, { values: [[1], ['x', 'y', 'z']] }],
          },
        })
      );
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'success',
          data: { resultType: 'vector', result: [{ value: null }, { metric: null, value: [1] }] },
        })
      );
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          events: [null, 1, 'x', { ts: 'x' }, { type: 'tcp_retransmit' }],
          faults: 'x',
          annotations: [null],
          dropped: 'many',
          probes: 1,
        })
      );
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([1, 2, 3]));
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to nginx</body></html>');
    },
    (res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n# not markdown\n| x |');
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":"');
      const chunk = 'x'.repeat(1 << 20);
      let i = 0;
      const w = (): void => {
        while (i++ < 200) {
          if (!res.write(chunk)) {
            res.once('drain', w);
            return;
          }
        }
        res.end('"}');
      };
      w();
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"succ');
      const t = setInterval(() => {
        if (res.destroyed) clearInterval(t);
        else res.write(' ');
      }, 200);
      res.on('close', () => clearInterval(t));
    },
    (res) => {
      res.socket?.destroy();
    },
    (res) => {
      res.writeHead(204);
      res.end();
    },
    (res) => {
      res.writeHead(302, { location: '/again' });
      res.end();
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('null');
    },
  ];
  const server = createServer((req, res) => {
    req.resume();
    kinds[n++ % kinds.length](res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits: () => n })
    )
  );
}

describe('sources answering garbage: every endpoint answers in time, never a 500', () => {
  let garbage: Awaited<ReturnType<typeof garbageServer>>;
  const proxies: ProxyProcess[] = [];

  before(async () => {
    garbage = await garbageServer();
  });
  after(async () => {
    for (const p of proxies) await p.stop();
    garbage.server.closeAllConnections();
    await new Promise((r) => garbage.server.close(r));
  });

  for (const mode of ['embedded store', 'Tempo'] as const) {
    it(`Prometheus, exporter, chain control${mode === 'Tempo' ? ' and Tempo' : ''} all garbage (traces from ${mode})`, async () => {
      const proxy = await startProxyProcess({
        HOPSCOPE_PROMETHEUS_URL: garbage.url,
        HOPSCOPE_EXPORTER_URLS: `${garbage.url},${garbage.url}/second`,
        HOPSCOPE_CHAIN_CONTROL_URL: garbage.url,
        HOPSCOPE_SOURCE_TIMEOUT_MS: String(DEADLINE_MS),
        HOPSCOPE_ALERT_INTERVAL_MS: '1000',
        ...(mode === 'Tempo' ? { HOPSCOPE_TEMPO_URL: garbage.url } : {}),
      });
      proxies.push(proxy);
      const spans = chainTrace(1, Date.now() - 60_000, 300, 2);
      await (
        await fetch(`${proxy.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(otlp(spans)),
        })
      ).text();
      const rounds: Answer[] = [];
      // Several rounds, so every endpoint meets every kind of garbage.
      for (let i = 0; i < 4; i++) rounds.push(...(await askAll(proxy.url, endpoints(spans[0].traceId))));
      for (const a of rounds) {
        const what = `${a.path} → ${a.status} in ${Math.round(a.ms)} ms: ${a.body.slice(0, 300)}`;
        assert.ok(a.ms < WITHIN_MS, `late: ${what}`);
        assert.ok(a.status > 0 && a.status !== 500 && a.status < 503, what);
        // A 502 is an endpoint whose only source failed (a trace by id from Tempo): it says which.
        if (a.status === 502) assert.match(a.body, /"source_unavailable".*tempo/, what);
      }
      assert.equal(proxy.exited(), undefined, proxy.output());
      assert.ok(proxy.rss() < 1024 * 1048576, `RSS ${proxy.rss()}`);
      figure(`garbage-sources (${mode})`, {
        requests: rounds.length,
        garbageAnswers: garbage.hits(),
        byStatus: rounds.reduce<Record<number, number>>((m, a) => ({ ...m, [a.status]: (m[a.status] ?? 0) + 1 }), {}),
      });
    });
  }
});
