/**
 * Faults inside the proxy process and at its door, against its CLI in a child process: an exception thrown in a timer
 * callback, an unhandled promise rejection, an interval that throws (all logged with their stack, counted in
 * hopscope_proxy_uncaught_errors_total, never fatal); and slow-header connections (slowloris), which the server
 * closes once HEADERS_TIMEOUT_MS has passed while it keeps answering everyone else.
 * It times answers, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { HEADERS_TIMEOUT_MS } from '../../../backend-proxy/src/server';
import { figure } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const proxies: ProxyProcess[] = [];
after(async () => {
  for (const p of proxies) await p.stop();
});

describe('faults inside the proxy process are logged and survived', () => {
  it('a throwing timer, an unhandled rejection and a throwing interval: the proxy keeps answering', async () => {
    const proxy = await startProxyProcess(
      { HOPSCOPE_PROMETHEUS_URL: 'none', HOPSCOPE_EXPORTER_URLS: 'none', HOPSCOPE_LOG_LEVEL: 'error' },
      ['--import', join(import.meta.dirname, 'support', 'faulty-timers.ts')]
    );
    proxies.push(proxy);
    // The faults start when told (the proxy listens, its guards are in place); each is counted before it is logged,
    // so once the last one's log line is out, all five are counted.
    const messages = ['timer boom (injected)', 'rejected boom (injected)', 'interval boom 3 (injected)'];
    proxy.child.kill('SIGUSR2');
    for (const t0 = Date.now(); !messages.every((m) => proxy.output().includes(m)) && proxy.exited() === undefined;) {
      assert.ok(Date.now() - t0 < 15_000, `the injected faults were not all logged within 15 s:\n${proxy.output()}`);
      await sleep(50);
    }
    assert.equal(proxy.exited(), undefined, `the proxy exited:\n${proxy.output()}`);
    const r = await fetch(`${proxy.url}/api/health`);
    assert.equal(r.status, 200);
    const metrics = await (await fetch(`${proxy.url}/metrics`)).text();
    const count = (kind: string): number =>
      Number(
        new RegExp(`^hopscope_proxy_uncaught_errors_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0
      );
    assert.equal(
      count('exception'),
      4,
      metrics
        .split('\n')
        .filter((l) => l.includes('uncaught'))
        .join('\n')
    );
    assert.equal(count('rejection'), 1);
    const out = proxy.output();
    for (const msg of messages) assert.ok(out.includes(msg), `logged: ${msg}\n${out}`);
    assert.match(out, /uncaught exception \(survived\)/);
    figure('process-faults', {
      survived: count('exception') + count('rejection'),
      kinds: { exception: count('exception'), rejection: count('rejection') },
    });
  });
});

describe('slow clients cannot hold connections', () => {
  it(`slow-header connections are closed after ${HEADERS_TIMEOUT_MS} ms while others are served`, async () => {
    const proxy = await startProxyProcess({ HOPSCOPE_PROMETHEUS_URL: 'none', HOPSCOPE_EXPORTER_URLS: 'none' });
    proxies.push(proxy);
    const N = 30;
    const t0 = performance.now();
    const closedAt: number[] = [];
    const sockets: Socket[] = [];
    const trickles: NodeJS.Timeout[] = [];
    const answers: string[] = [];
    await Promise.all(
      Array.from(
        { length: N },
        (_, i) =>
          new Promise<void>((resolve) => {
            const s = connect(proxy.port, '127.0.0.1', () => {
              // Half of them trickle a header byte every 400 ms, the others send a request line and then nothing.
              s.write('GET /api/health HTTP/1.1\r\nhost: 127.0.0.1\r\n');
              if (i % 2 === 0)
                trickles.push(
                  setInterval(() => {
                    if (!s.destroyed) s.write('x');
                  }, 400)
                );
              resolve();
            });
            s.on('error', () => {});
            s.on('data', (d: Buffer) => {
              answers.push(d.toString().split('\r\n')[0]);
            });
            s.on('close', () => closedAt.push(performance.now() - t0));
            sockets.push(s);
          })
      )
    );
    // Everyone else is served meanwhile.
    let served = 0;
    while (closedAt.length < N && performance.now() - t0 < HEADERS_TIMEOUT_MS + 8000) {
      const r = await fetch(`${proxy.url}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) served++;
      await r.text();
      await sleep(500);
    }
    for (const t of trickles) clearInterval(t);
    for (const s of sockets) s.destroy();
    figure('slow-headers', {
      connections: N,
      closedByServer: closedAt.length,
      lastClosedMs: Math.round(Math.max(...closedAt)),
      servedMeanwhile: served,
    });
    assert.equal(closedAt.length, N, `${closedAt.length} of ${N} slow connections closed by the server`);
    assert.ok(
      Math.max(...closedAt) < HEADERS_TIMEOUT_MS + 3000,
      `last closed after ${Math.round(Math.max(...closedAt))} ms`
    );
    assert.ok(Math.min(...closedAt) >= HEADERS_TIMEOUT_MS - 500, 'not before the timeout');
    assert.ok(served >= 10, `${served} requests served meanwhile`);
    assert.deepEqual(new Set(answers), new Set(['HTTP/1.1 408 Request Timeout']));
  });
});
