/**
 * The exporter's exposure (runs anywhere: replay mode, no eBPF): with HOPSCOPE_BPF_TOKEN, /register and the event API
 * answer 401 without the bearer token while /metrics and /health stay open; it may then bind a non-loopback address
 * (without a token it refuses to); the SSE subscriber after the cap gets 503; a connection that sends its headers
 * too slowly is closed within the headers timeout. It times that close (under 3 s), so it runs with no other test file
 * beside it (hopscope-test: alone).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { sse } from './http';

const log = pino({ level: 'silent' });
const TOKEN = 'bx-token-0123456789abcdef';

describe('bpf-exporter hardening', () => {
  let dir = '';
  let e: Exporter;
  let base = '';
  const bearer = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-hard-'));
    const ev = { ts: 1_700_000_000_000, type: 'tcp_retransmit', pid: 7, comm: 'rag', detail: {}, mode: 'live' };
    writeFileSync(join(dir, 'one.jsonl'), `${JSON.stringify(ev)}\n`);
    e = await startExporter(
      loadConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_HOST: '0.0.0.0',
        HOPSCOPE_BPF_TOKEN: TOKEN,
        HOPSCOPE_BPF_SSE_MAX_CLIENTS: '2',
        HOPSCOPE_BPF_HEADERS_TIMEOUT_MS: '1000',
        HOPSCOPE_BPF_REQUEST_TIMEOUT_MS: '2000',
        HOPSCOPE_BPF_REPLAY: join(dir, 'one.jsonl'),
        HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
      }),
      log
    );
    base = `http://127.0.0.1:${e.port}`;
  });
  after(async () => {
    await e?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('without a token it will not listen beyond loopback', () => {
    assert.throws(
      () => loadConfig({ HOPSCOPE_BPF_HOST: '0.0.0.0' }),
      /not a loopback address and HOPSCOPE_BPF_TOKEN is not set/
    );
    assert.equal(
      e.server.address() && typeof e.server.address() === 'object'
        ? (e.server.address() as { address: string }).address
        : '',
      '0.0.0.0',
      'with one it does'
    );
  });

  test('/register and the event API need the bearer token (401 without, 401 wrong); /metrics and /health do not', async () => {
    const reg = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ pid: 4242, pod: 'x-0' }),
      });
    const none = await reg({});
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="hopscope-bpf-exporter"');
    assert.equal(((await none.json()) as { error: { code: string } }).error.code, 'unauthorized');
    assert.equal((await reg({ authorization: 'Bearer wrong-token-0123456789' })).status, 401);
    assert.equal((await reg({ authorization: `Basic ${TOKEN}` })).status, 401);
    assert.equal((await reg(bearer)).status, 201);
    for (const path of ['/register', '/events', '/events/stream']) {
      assert.equal((await fetch(`${base}${path}`)).status, 401, path);
    }
    assert.equal((await fetch(`${base}/register/4242`, { method: 'DELETE' })).status, 401);
    const events = await fetch(`${base}/events`, { headers: bearer });
    assert.equal(events.status, 200);
    assert.equal(((await events.json()) as { events: unknown[] }).events.length, 1);
    assert.equal((await fetch(`${base}/metrics`)).status, 200);
    assert.equal((await fetch(`${base}/health`)).status, 200);
    assert.equal((await fetch(`${base}/register/4242`, { method: 'DELETE', headers: bearer })).status, 204);
  });

  test('the subscriber over HOPSCOPE_BPF_SSE_MAX_CLIENTS gets 503; a place freed is taken again', async () => {
    const a = await sse(`${base}/events/stream`, bearer);
    const b = await sse(`${base}/events/stream`, bearer);
    assert.deepEqual([a.status, b.status], [200, 200]);
    const refused = await fetch(`${base}/events/stream`, { headers: bearer });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'too_many_subscribers');
    a.close();
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /hopscope_bpf_sse_refused 1/);
    let c: Awaited<ReturnType<typeof sse>> | undefined;
    for (let i = 0; i < 50 && c?.status !== 200; i++) {
      c?.close();
      await new Promise((r) => setTimeout(r, 50));
      c = await sse(`${base}/events/stream`, bearer);
    }
    assert.equal(c?.status, 200, "the closed subscriber's place is free again");
    b.close();
    c?.close();
  });

  test('a connection that sends its headers too slowly is closed within the headers timeout', async () => {
    const sock = connect(e.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const t0 = Date.now();
    let answer = '';
    sock.on('data', (d: Buffer) => {
      answer += d.toString();
    });
    // One header line, then nothing: a slowloris.
    sock.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => sock.write('X-a: b\r\n'), 300);
    await new Promise<void>((r) => sock.once('close', () => r()));
    clearInterval(drip);
    const took = Date.now() - t0;
    assert.ok(took >= 900 && took < 3000, `closed after ${took} ms (headers timeout 1000 ms)`);
    assert.match(answer, /^HTTP\/1\.1 408/, 'told why');
    // A normal request is unaffected.
    assert.equal((await fetch(`${base}/health`)).status, 200);
  });
});
