/**
 * Outages in the middle of a load-test run, with the real parts: the simulated chain (time scale 0.05), the real
 * proxy, the real `hopscope-load` (`main()` of loadgen/src/cli.ts) and a real PostgreSQL (tests/support/postgres.ts).
 * - PostgreSQL stopped mid-run: the runs routes answer 503 + Retry-After with a clear message while the rest of the
 *   API keeps working and /api/health shows the database down; the load generator keeps running, retries its finish,
 *   and once PostgreSQL is back the run is recorded whole. Down for longer than the retry window: the run is spooled,
 *   and `--resend` delivers it once the database is back.
 * - The proxy itself restarted mid-run (PGlite data dir, same port): the run resumes on the new proxy and ends passed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HealthAnswer, RunRecord } from '../../../contract';
import type { ProxyConfig } from '../../../backend-proxy/src/config';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { main } from '../../../loadgen/src/cli';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';
import { freePort } from '../../support/real-servers';

const QUIET: Partial<ProxyConfig> = { prometheusUrl: undefined, exporterUrls: [], alertIntervalMs: 0 };
let chain: RunningChain;
let dir: string;
let proxyPort: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runs-outage-'));
  proxyPort = await freePort();
  chain = await startChain({
    gatewayPort: 0,
    controlPort: 0,
    timeScale: 0.05,
    logLevel: 'silent',
    otlpEndpoint: `http://127.0.0.1:${proxyPort}/v1/traces`,
    samplerAdaptive: false,
    hopTimeoutMs: 3000,
  });
});
after(async () => {
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  code: number;
  err: string;
  json: any;
}

/** Starts `hopscope-load` against the chain, reporting to `proxyUrl`; resolves when it exits. */
function load(proxyUrl: string, runId: string, extra: string[] = []): { done: Promise<Ran>; err: () => string } {
  let err = '';
  const out = join(dir, `${runId}.json`);
  const done = main(
    [
      '--target',
      chain.gatewayUrl,
      '--rps',
      '5',
      '--duration',
      '8s',
      '--run-id',
      runId,
      '--report',
      proxyUrl,
      '--metrics',
      'none',
      '--quiet',
      '--spool-dir',
      join(dir, 'spool'),
      '--json',
      out,
      ...extra,
    ],
    () => {},
    (s) => {
      err += s;
    },
    { env: {} }
  ).then((code) => ({ code, err, json: JSON.parse(readFileSync(out, 'utf8')) }));
  return { done, err: () => err };
}

async function get(url: string, path: string): Promise<{ status: number; body: any; retryAfter: string | null }> {
  const r = await fetch(`${url}${path}`);
  return { status: r.status, body: await r.json(), retryAfter: r.headers.get('retry-after') };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const registered = (url: string, runId: string) =>
  waitFor(
    `run ${runId} registered`,
    async () => ((await get(url, `/api/runs/${runId}`)).status === 200 ? true : undefined),
    10_000
  );

describe('PostgreSQL stopped mid-run', { skip: postgresSkipReason() }, () => {
  let pg: PostgresServer;
  let proxy: RunningProxy;
  before(async () => {
    pg = await startPostgres();
    proxy = await startProxy({
      ...QUIET,
      port: proxyPort,
      databaseUrl: await pg.createDatabase('outage'),
      chainControlUrl: chain.controlUrl,
    });
  });
  after(async () => {
    await proxy?.close();
    await pg?.close();
  });

  test('503 + Retry-After while it is down, the rest of the API works, and the finish is delivered once it is back', async () => {
    const run = load(proxy.url, 'pg-down-1', ['--report-retry', '60s']);
    await registered(proxy.url, 'pg-down-1');
    await pg.stop();
    try {
      const list = await get(proxy.url, '/api/runs');
      assert.equal(list.status, 503);
      assert.equal(list.body.error.code, 'database_unavailable');
      assert.match(list.body.error.message, /runs database is unavailable/);
      assert.ok(Number(list.retryAfter) >= 1, `Retry-After: ${list.retryAfter}`);
      assert.equal((await get(proxy.url, '/api/runs/pg-down-1')).status, 503);
      const health = HealthAnswer.parse((await get(proxy.url, '/api/health')).body);
      assert.equal(health.ok, false);
      assert.equal(health.sources.find((s) => s.source === 'database')?.ok, false);
      assert.equal(
        (await get(proxy.url, '/api/traces?from=now-5m&to=now')).status,
        200,
        'the trace routes do not need the database'
      );
      // The run ends while the database is down: its finish is answered 503 and retried.
      await waitFor(
        'the finish retried',
        async () => (/finish not delivered yet \(503/.test(run.err()) ? true : undefined),
        20_000
      );
    } finally {
      await pg.start();
    }
    const r = await run.done;
    assert.equal(r.code, 0, r.err);
    assert.equal(r.json.report.delivered, true, r.err);
    const rec = RunRecord.parse((await get(proxy.url, '/api/runs/pg-down-1')).body);
    assert.equal(rec.status, 'passed');
    assert.equal(rec.summary!.sent, r.json.sent);
    assert.equal(rec.summary!.completed, r.json.completed);
  });

  test('down longer than the retry window: spooled, then delivered by --resend; nothing lost', async () => {
    const run = load(proxy.url, 'pg-down-2', ['--report-retry', '2s']);
    await registered(proxy.url, 'pg-down-2');
    await pg.stop();
    let r: Ran;
    try {
      r = await run.done;
    } finally {
      await pg.start();
    }
    assert.equal(r.json.report.delivered, false, r.err);
    const spool = r.json.report.spoolFile as string;
    assert.ok(
      readdirSync(join(dir, 'spool')).some((f) => spool.endsWith(f)),
      r.err
    );
    let out = '';
    let err = '';
    const code = await main(
      ['--resend', spool, '--report', proxy.url],
      (s) => {
        out += s;
      },
      (s) => {
        err += s;
      },
      { env: {} }
    );
    assert.equal(code, 0, err);
    assert.match(out, /delivered/);
    const rec = RunRecord.parse((await get(proxy.url, '/api/runs/pg-down-2')).body);
    assert.equal(rec.status, 'passed');
    assert.equal(rec.summary!.sent, r.json.sent);
  });
});

describe('the proxy restarted mid-run (PGlite)', () => {
  test('the run resumes on the restarted proxy and is recorded whole', async () => {
    const dataDir = join(dir, 'pglite');
    const cfg = { ...QUIET, port: proxyPort, dataDir, chainControlUrl: chain.controlUrl };
    let proxy = await startProxy(cfg);
    let closed = false;
    try {
      const run = load(proxy.url, 'proxy-down-1', ['--report-retry', '60s']);
      await registered(proxy.url, 'proxy-down-1');
      await proxy.close();
      closed = true;
      // Longer than the 5 s heartbeat period: at least one heartbeat finds no proxy.
      await new Promise((res) => setTimeout(res, 6000));
      proxy = await startProxy(cfg);
      closed = false;
      const r = await run.done;
      assert.equal(r.code, 0, r.err);
      assert.equal(r.json.report.delivered, true, r.err);
      assert.match(r.err, /heartbeat to the proxy failed/);
      const rec = RunRecord.parse((await get(proxy.url, '/api/runs/proxy-down-1')).body);
      assert.equal(rec.status, 'passed');
      assert.equal(rec.summary!.sent, r.json.sent);
      assert.equal(rec.workers, 1, 'the same worker, not a second one');
    } finally {
      if (!closed) await proxy.close();
    }
  });
});
