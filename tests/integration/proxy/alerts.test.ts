/**
 * Composite alerts evaluated continuously and pushed to a real Alertmanager (Debian) over its v2 API: the labels the
 * shipped route groups by, an absolute generatorURL under HOPSCOPE_APP_URL, a rolling endsAt while firing; state and
 * each transition in the database, the firing alert reloaded (not re-fired) after a restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlertsAnswer, type KernelEvent } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startAlertmanager, type RealServer } from '../../support/real-servers';
import { tinyServer } from '../../support/otlp-spans';

let am: RealServer;
let exporter: Awaited<ReturnType<typeof tinyServer>>;
let proxy: RunningProxy;
let events: KernelEvent[] = [];
const APP_URL = 'https://grafana.example.com/grafana';
const dataDir = join(mkdtempSync(join(tmpdir(), 'proxy-alerts-')), 'data');
const start = (): Promise<RunningProxy> =>
  startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [exporter.url],
    chainControlUrl: undefined,
    alertmanagerUrl: am.url,
    alertIntervalMs: 200,
    appUrl: APP_URL,
    dataDir,
  });

async function waitFor<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

before(async () => {
  am = await startAlertmanager();
  exporter = await tinyServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url!.startsWith('/health') ? { ok: true } : { events }));
  });
  proxy = await start();
});
after(async () => {
  await proxy?.close();
  await exporter?.close();
  await am?.stop();
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

type AmAlert = {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: { state: string };
  startsAt: string;
  endsAt: string;
  generatorURL: string;
};
const amAlerts = async (): Promise<AmAlert[]> => (await fetch(`${am.url}/api/v2/alerts`)).json() as Promise<AmAlert[]>;

test('rules: GET returns the default seed rule; PUT validates and replaces', async () => {
  const got = await (await fetch(`${proxy.url}/api/alerts/rules`)).json();
  assert.equal(got.rules[0].id, 'tls-slow-and-gpu-oom');
  const bad = await fetch(`${proxy.url}/api/alerts/rules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [{ id: 'x', name: 'x', conditions: [{ kind: 'kernel', type: 'nope' }] }] }),
  });
  assert.equal(bad.status, 400);
  const dup = await fetch(`${proxy.url}/api/alerts/rules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [got.rules[0], got.rules[0]] }),
  });
  assert.equal(dup.status, 400);
  const ok = await fetch(`${proxy.url}/api/alerts/rules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(got),
  });
  assert.equal(ok.status, 200);
});

test('the seed example fires, reaches Alertmanager, then resolves', async () => {
  const now = Date.now();
  events = [
    ...[0, 1, 2].map((i) => ({
      ts: now - 3000 + i * 100,
      type: 'tls_handshake' as const,
      pid: 9,
      comm: 'llm',
      pod: 'llm-vllm-0',
      durationMs: 650,
      detail: {},
      mode: 'live' as const,
    })),
    {
      ts: now - 1000,
      type: 'gpu_alloc_fail',
      pid: 9,
      comm: 'llm',
      pod: 'llm-vllm-0',
      detail: { bytes: 1 << 30 },
      mode: 'live',
    },
  ];
  const firing = await waitFor(
    async () => {
      const a = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts`)).json());
      return a.alerts.find((x) => x.state === 'firing');
    },
    10_000,
    'a firing alert'
  );
  assert.equal(firing.pod, 'llm-vllm-0');
  assert.match(firing.link, /^\/a\/hopscope-rca-app\//);
  const inAm = await waitFor(
    async () => (await amAlerts()).find((a) => a.labels.rule_id === 'tls-slow-and-gpu-oom'),
    10_000,
    'the alert in Alertmanager'
  );
  assert.equal(inAm.labels.pod, 'llm-vllm-0');
  assert.equal(inAm.labels.severity, 'critical');
  assert.match(inAm.annotations.summary, /consecutive tls_handshake/);
  // What the shipped route groups composite alerts by.
  for (const l of ['alertname', 'rule_id', 'pod', 'severity']) assert.ok(inAm.labels[l], `label ${l}`);
  assert.equal(inAm.labels.source, 'hopscope');
  assert.equal(inAm.generatorURL, `${APP_URL}${firing.link}`, 'absolute, under HOPSCOPE_APP_URL');
  assert.equal(inAm.annotations.link, inAm.generatorURL);
  // Rolling endsAt: in the future, and moved on by the next rounds while it fires.
  const ends1 = Date.parse(inAm.endsAt);
  assert.ok(ends1 > Date.now(), `endsAt ${inAm.endsAt} is ahead`);
  const later = await waitFor(
    async () => {
      const a = (await amAlerts()).find((x) => x.labels.rule_id === 'tls-slow-and-gpu-oom');
      return a && Date.parse(a.endsAt) > ends1 + 300 ? a : undefined;
    },
    10_000,
    'endsAt to roll on'
  );
  assert.equal(later.startsAt, inAm.startsAt);
  // The firing transition is in the history, once.
  const h1 = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts`)).json());
  assert.equal(
    h1.history!.filter((x) => x.alert.state === 'firing' && x.alert.ruleId === 'tls-slow-and-gpu-oom').length,
    1
  );
  assert.equal(h1.evaluator!.self, true);

  // A restart reloads the firing alert from the database: the same alert, no second firing transition.
  await proxy.close();
  proxy = await start();
  await new Promise((r) => setTimeout(r, 1000));
  const h2 = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts/evaluate`, { method: 'POST' })).json());
  const still = h2.alerts.filter((x) => x.state === 'firing');
  assert.equal(still.length, 1);
  assert.equal(still[0].startsAt, firing.startsAt);
  assert.equal(h2.history!.filter((x) => x.alert.state === 'firing').length, 1, 'not fired again');
  events = [];
  const resolved = await waitFor(
    async () => {
      const a = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts`)).json());
      return a.alerts.find((x) => x.state === 'resolved');
    },
    10_000,
    'a resolved alert'
  );
  assert.ok(resolved.endsAt! >= resolved.startsAt);
  const h3 = AlertsAnswer.parse(
    await (await fetch(`${proxy.url}/api/alerts?from=${resolved.startsAt - 1000}&to=${Date.now()}`)).json()
  );
  assert.deepEqual(
    h3.history!.map((x) => x.alert.state),
    ['resolved', 'firing'],
    'each transition once, newest first'
  );
  // Alertmanager drops resolved alerts from its active list.
  await waitFor(
    async () =>
      (await amAlerts()).some((a) => a.labels.rule_id === 'tls-slow-and-gpu-oom' && a.status.state === 'active')
        ? undefined
        : true,
    10_000,
    'Alertmanager to see it resolved'
  );
});
