/**
 * The tokens between the parts, end to end, on real servers: a bpf-exporter (replaying recorded events) started with
 * HOPSCOPE_BPF_TOKEN and the simulated chain with its control API token (HOPSCOPE_CHAIN_TOKEN), as they must be when
 * bound beyond loopback.
 *   - the chain registers its pid with the exporter carrying HOPSCOPE_EXPORTER_TOKEN;
 *   - a proxy given HOPSCOPE_EXPORTER_TOKEN and HOPSCOPE_CHAIN_CONTROL_TOKEN reads the kernel events and the faults;
 *   - without them (or with a wrong one) the proxy keeps answering and its per-source status says 401 and names the
 *     setting to fix, never a token;
 *   - hopscope-load's fault schedule applies and removes its faults with HOPSCOPE_CHAIN_TOKEN, and says why it cannot
 *     without it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig as loadProxyConfig, ConfigError } from '../../../backend-proxy/src/config';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { loadConfig as loadExporterConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import type { AnnotationsAnswer, HealthAnswer, KernelEvent, PodKernelEventsAnswer } from '../../../contract';
import { registerWithExporter } from '../../../loadgen/src/chain/registration';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { FaultSchedule } from '../../../loadgen/src/load/fault-schedule';

const BPF_TOKEN = 'bpf-token-0123456789abcdef';
const CHAIN_TOKEN = 'chain-token-0123456789abcdef';
const now = Date.now();
const EVENTS = 12;

let dir = '';
let exporter: Exporter;
let chain: RunningChain;
const proxies: RunningProxy[] = [];

const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
async function getJson<T>(
  url: string,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: T; text: string }> {
  const r = await fetch(url, { headers });
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text) as T, text };
}
async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const QUIET = { port: 0, prometheusUrl: undefined, alertIntervalMs: 0, sourceTimeoutMs: 3000 } as const;
async function proxyWith(o: { exporterToken?: string; chainControlToken?: string }): Promise<RunningProxy> {
  const p = await startProxy({
    ...QUIET,
    exporterUrls: [exporter.url],
    chainControlUrl: chain.controlUrl,
    exporterToken: o.exporterToken,
    chainControlToken: o.chainControlToken,
  });
  proxies.push(p);
  return p;
}
const range = (): string => `from=${now - 5 * 60_000}&to=${Date.now() + 60_000}`;

describe('tokens between the proxy, the exporter, the chain and hopscope-load', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'proxy-tokens-'));
    const lines = Array.from({ length: EVENTS }, (_, i): KernelEvent => ({
      ts: now - 60_000 + i * 1000,
      type: 'tcp_retransmit',
      pid: 10,
      comm: 'rag',
      pod: 'rag-0',
      namespace: 'hopscope-demo',
      detail: {},
      mode: 'live',
    }));
    writeFileSync(join(dir, 'rec.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    exporter = await startExporter(
      loadExporterConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_TOKEN: BPF_TOKEN,
        HOPSCOPE_BPF_REPLAY: join(dir, 'rec.jsonl'),
        HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
      }),
      pino({ level: 'silent' })
    );
    // The chain reads the exporter's token from its environment (as in docker-compose.yaml and the DaemonSet's pods).
    process.env.HOPSCOPE_EXPORTER_TOKEN = BPF_TOKEN;
    try {
      chain = await startChain({
        gatewayPort: 0,
        controlPort: 0,
        timeScale: 0.05,
        logLevel: 'silent',
        tracing: false,
        controlToken: CHAIN_TOKEN,
        exporterUrl: exporter.url,
      });
      await waitFor("the chain's registration", async () => {
        const { body } = await getJson<{ registrations?: Array<{ pid: number }> } | Array<{ pid: number }>>(
          `${exporter.url}/register`,
          bearer(BPF_TOKEN)
        );
        const list = Array.isArray(body) ? body : (body.registrations ?? []);
        return list.some((r) => r.pid === process.pid) || undefined;
      });
    } finally {
      delete process.env.HOPSCOPE_EXPORTER_TOKEN;
    }
  });
  after(async () => {
    for (const p of proxies) await p.close();
    await chain?.stop();
    await exporter?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the chain registered its pid with the token; the exporter refuses the same call without it', async () => {
    const open = await fetch(`${exporter.url}/register`);
    assert.equal(open.status, 401, 'the exporter really guards /register');
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(c, _e, cb) {
          lines.push(String(c));
          cb();
        },
      })
    );
    const reg = { pid: process.pid, pod: 'x-0', namespace: 'hopscope-demo', node: 'n', service: 'x' };
    assert.equal(await registerWithExporter(exporter.url, reg, log, undefined), false);
    assert.equal(await registerWithExporter(exporter.url, reg, log, 'wrong-token-0123456789'), false);
    // Warned once, naming the setting and never a token.
    assert.equal(lines.length, 1);
    assert.match(
      lines[0],
      /HTTP 401: the exporter requires a token: set HOPSCOPE_EXPORTER_TOKEN to its HOPSCOPE_BPF_TOKEN/
    );
    assert.ok(!lines.join('').includes('wrong-token') && !lines.join('').includes(BPF_TOKEN));
  });

  test('the proxy reads the names of its two tokens from the environment, and refuses a bad one without showing it', () => {
    const c = loadProxyConfig(
      {},
      { HOPSCOPE_EXPORTER_TOKEN: ` ${BPF_TOKEN} `, HOPSCOPE_CHAIN_CONTROL_TOKEN: CHAIN_TOKEN }
    );
    assert.deepEqual([c.exporterToken, c.chainControlToken], [BPF_TOKEN, CHAIN_TOKEN]);
    assert.deepEqual(
      [loadProxyConfig({}, {}).exporterToken, loadProxyConfig({}, { HOPSCOPE_EXPORTER_TOKEN: '' }).exporterToken],
      [undefined, undefined]
    );
    assert.throws(
      () => loadProxyConfig({}, { HOPSCOPE_CHAIN_CONTROL_TOKEN: 'two words-secret' }),
      (e: Error) =>
        e instanceof ConfigError &&
        /HOPSCOPE_CHAIN_CONTROL_TOKEN: must not contain whitespace/.test(e.message) &&
        !e.message.includes('secret')
    );
  });

  test('with HOPSCOPE_EXPORTER_TOKEN and HOPSCOPE_CHAIN_CONTROL_TOKEN the proxy reads kernel events and faults', async () => {
    const f = await fetch(`${chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(CHAIN_TOKEN) },
      body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 100, durationS: 60 }),
    });
    assert.equal(f.status, 201, await f.clone().text());
    const { id } = (await f.json()) as { id: string };
    const proxy = await proxyWith({ exporterToken: BPF_TOKEN, chainControlToken: CHAIN_TOKEN });
    const k = await waitFor('the replayed events', async () => {
      const r = await getJson<PodKernelEventsAnswer>(`${proxy.url}/api/pods/rag-0/kernel-events?${range()}`);
      return r.body.events?.length === EVENTS ? r : undefined;
    });
    assert.equal(k.status, 200);
    assert.deepEqual(
      k.body.sources.map((s) => [s.source, s.ok, s.error]),
      [[`bpf-exporter ${new URL(exporter.url).host}`, true, undefined]]
    );
    assert.ok(k.body.events.every((e) => e.pod === 'rag-0' && e.mode === 'replay'));
    const a = await getJson<AnnotationsAnswer>(`${proxy.url}/api/annotations?${range()}`);
    assert.deepEqual(
      a.body.sources.map((s) => [s.source, s.ok]),
      [['chain-control', true]]
    );
    assert.ok(
      a.body.annotations.some((x) => x.id === id),
      `the fault ${id} is an annotation`
    );
    const h = await getJson<HealthAnswer>(`${proxy.url}/api/health`);
    for (const name of ['chain-control', `bpf-exporter ${new URL(exporter.url).host}`]) {
      assert.equal(
        h.body.sources.find((s) => s.source === name)?.ok,
        true,
        `${name}: ${JSON.stringify(h.body.sources)}`
      );
    }
    await fetch(`${chain.controlUrl}/faults/${id}`, { method: 'DELETE', headers: bearer(CHAIN_TOKEN) });
  });

  test("without the tokens, or with wrong ones: the proxy answers, each source's status says 401 and names the setting", async () => {
    const none = await proxyWith({});
    const wrong = await proxyWith({
      exporterToken: 'wrong-token-0123456789',
      chainControlToken: 'wrong-token-0123456789',
    });
    for (const [proxy, exporterMsg, chainMsg] of [
      [
        none,
        /^bpf-exporter \S+: events: HTTP 401: the exporter requires a token: set HOPSCOPE_EXPORTER_TOKEN to its HOPSCOPE_BPF_TOKEN$/,
        /^chain-control: faults: HTTP 401: the control API requires a token: set HOPSCOPE_CHAIN_CONTROL_TOKEN to the chain's HOPSCOPE_CHAIN_TOKEN$/,
      ],
      [
        wrong,
        /^bpf-exporter \S+: events: HTTP 401: the exporter refused the proxy's HOPSCOPE_EXPORTER_TOKEN \(it must equal the exporter's HOPSCOPE_BPF_TOKEN\)$/,
        /^chain-control: faults: HTTP 401: the control API refused the proxy's HOPSCOPE_CHAIN_CONTROL_TOKEN/,
      ],
    ] as const) {
      const k = await getJson<PodKernelEventsAnswer>(`${proxy.url}/api/pods/rag-0/kernel-events?${range()}`);
      assert.equal(k.status, 200, 'one source refusing is a per-source error, not a failed answer');
      assert.deepEqual(k.body.events, []);
      assert.equal(k.body.sources.length, 1);
      assert.equal(k.body.sources[0].ok, false);
      assert.match(k.body.sources[0].error!, exporterMsg);
      const a = await getJson<AnnotationsAnswer>(`${proxy.url}/api/annotations?${range()}`);
      assert.equal(a.status, 200);
      assert.equal(a.body.sources[0].ok, false);
      assert.match(a.body.sources[0].error!, chainMsg);
      const h = await getJson<HealthAnswer>(`${proxy.url}/api/health`);
      assert.equal(h.body.ok, false);
      assert.match(h.body.sources.find((s) => s.source.startsWith('bpf-exporter'))!.error!, exporterMsg);
      assert.match(h.body.sources.find((s) => s.source === 'chain-control')!.error!, chainMsg);
      for (const r of [k, a, h])
        assert.ok(
          !r.text.includes('wrong-token') && !r.text.includes(BPF_TOKEN) && !r.text.includes(CHAIN_TOKEN),
          'no token in an answer'
        );
    }
  });

  test("hopscope-load's fault schedule applies and removes its faults with HOPSCOPE_CHAIN_TOKEN, and says why not without", async () => {
    const faults = [{ at: 0, target: 'rag', kind: 'latency', magnitude: 100, for: 60 }] as ConstructorParameters<
      typeof FaultSchedule
    >[0];
    const warnings: string[] = [];
    const active = async (): Promise<Array<{ id: string; endMs?: number }>> => {
      const { body } = await getJson<
        { faults?: Array<{ id: string; endMs?: number }> } | Array<{ id: string; endMs?: number }>
      >(`${chain.controlUrl}/faults`, bearer(CHAIN_TOKEN));
      return Array.isArray(body) ? body : (body.faults ?? []);
    };
    // The token from hopscope-load's environment, as the CLI runs it.
    process.env.HOPSCOPE_CHAIN_TOKEN = CHAIN_TOKEN;
    let withToken: FaultSchedule;
    try {
      withToken = new FaultSchedule(faults, chain.controlUrl, (m) => warnings.push(m));
    } finally {
      delete process.env.HOPSCOPE_CHAIN_TOKEN;
    }
    withToken.start();
    const id = await waitFor('the fault applied', async () =>
      withToken.planned()[0].id ? withToken.planned()[0].id : undefined
    );
    assert.ok(
      (await active()).some((f) => f.id === id),
      'the chain holds the fault'
    );
    const [done] = await withToken.stop();
    assert.equal(done.error, undefined);
    assert.ok(done.endMs !== undefined, 'removed at the end');
    const after = (await active()).find((f) => f.id === id);
    assert.ok(!after || (after.endMs !== undefined && after.endMs <= Date.now()), 'no longer active on the chain');
    assert.equal(warnings.length, 0, warnings.join('; '));

    const without = new FaultSchedule(faults, chain.controlUrl, (m) => warnings.push(m), undefined);
    without.start();
    await waitFor('the refusal', async () => (warnings.length ? true : undefined));
    const [refused] = await without.stop();
    assert.equal(refused.id, undefined);
    assert.match(
      refused.error!,
      /^the fault API answered 401: it requires a token: set HOPSCOPE_CHAIN_TOKEN to the chain's$/
    );
    assert.match(warnings[0], /fault latency on rag at 0 s not applied: the fault API answered 401/);
  });
});
