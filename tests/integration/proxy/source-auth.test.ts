/**
 * Source credentials reach the sources and nothing else: Alertmanager's readiness check carries its basic auth and
 * tenant (and the composite-alert push goes through the same call path); the proxy started as a CLI at debug level
 * with every credential set never writes one to its log, nor to an answer.
 */
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startProxy } from '../../../backend-proxy/src/server';
import { tinyServer } from '../../support/otlp-spans';

const SECRETS = { prom: 'prom-tok-9f8e7d', tempo: 'tempo-pw-1a2b3c', am: 'am-pw-4d5e6f' };

test('Alertmanager is asked with its credentials and tenant; wrong ones are a per-source error', async () => {
  const seen: Array<string | undefined> = [];
  const want = `Basic ${Buffer.from(`hopscope:${SECRETS.am}`).toString('base64')}`;
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void => {
    seen.push(req.headers.authorization);
    const ok = req.headers.authorization === want && req.headers['x-scope-orgid'] === 'ops';
    res.writeHead(ok ? 200 : 401, { 'content-type': 'text/plain' });
    res.end(ok ? 'OK' : 'unauthorized');
  };
  // Two Alertmanagers: credentials are registered per base URL, and both proxies run in this one process.
  const am = await tinyServer(handler);
  const am2 = await tinyServer(handler);
  const good = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertmanagerUrl: am.url,
    sourceAuth: { alertmanager: { basic: { user: 'hopscope', password: SECRETS.am }, orgId: 'ops' } },
  });
  const bad = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertmanagerUrl: am2.url,
  });
  try {
    const h = await (await fetch(`${good.url}/api/health`)).json();
    assert.deepEqual(
      h.sources.filter((s: { source: string }) => s.source === 'alertmanager').map((s: { ok: boolean }) => s.ok),
      [true]
    );
    const text = await (await fetch(`${bad.url}/api/health`)).text();
    const b = JSON.parse(text).sources.find((s: { source: string }) => s.source === 'alertmanager');
    assert.equal(b.ok, false);
    assert.match(b.error, /HTTP 401/);
    assert.ok(!text.includes(SECRETS.am));
    assert.ok(seen.includes(want) && seen.includes(undefined));
  } finally {
    await good.close();
    await bad.close();
    await am.close();
    await am2.close();
  }
});

test('the CLI at debug level never logs a credential', async () => {
  const src = await tinyServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url?.startsWith('/api/v1/') ? '{"status":"success","data":{"resultType":"vector","result":[]}}' : '{}');
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'backend-proxy/src/main.ts'], {
    env: {
      PATH: process.env.PATH,
      HOPSCOPE_PROXY_PORT: '0',
      HOPSCOPE_LOG_LEVEL: 'debug',
      HOPSCOPE_EXPORTER_URLS: 'none',
      HOPSCOPE_CHAIN_CONTROL_URL: 'none',
      HOPSCOPE_PROMETHEUS_URL: src.url,
      HOPSCOPE_PROMETHEUS_BEARER_TOKEN: SECRETS.prom,
      HOPSCOPE_PROMETHEUS_ORG_ID: 'tenant-x',
      HOPSCOPE_TEMPO_URL: src.url,
      HOPSCOPE_TEMPO_BASIC_AUTH: `reader:${SECRETS.tempo}`,
      HOPSCOPE_ALERTMANAGER_URL: src.url,
      HOPSCOPE_ALERTMANAGER_BEARER_TOKEN: SECRETS.am,
      HOPSCOPE_ALERT_INTERVAL_MS: '200',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d;
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no start: ${out}`)), 120_000); // a deadline for a busy machine
      const check = (): void => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]);
        }
      };
      child.stdout.on('data', check);
      child.once('exit', () => reject(new Error(`exited: ${out}`)));
    });
    const answers = await Promise.all(
      [
        '/api/health',
        '/api/services?from=now-5m&to=now',
        '/api/golden?backend=vllm',
        '/api/traces?limit=5',
        '/api/alerts',
      ].map(async (p) => (await fetch(`${url}${p}`)).text())
    );
    await new Promise((r) => setTimeout(r, 600)); // a few alert rounds
    for (const secret of Object.values(SECRETS)) {
      assert.ok(!out.includes(secret), `the log holds ${secret}`);
      assert.ok(!answers.some((a) => a.includes(secret)), `an answer holds ${secret}`);
    }
    assert.match(out, /"level":20/, 'debug lines were written');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await src.close();
  }
});
