/**
 * Two proxies (their CLI, in child processes, so SIGKILL is real) on one real PostgreSQL with a real Alertmanager,
 * as the Kubernetes manifest runs them: they agree on the rules (one versioned set; a stale edit is a 409), only the
 * holder of the `alerts-evaluator` lease evaluates and pushes (Alertmanager receives each alert from one of them,
 * and the transition is recorded once), SIGKILL of the holder → the other takes over within the lease ttl and pushes
 * on without re-firing, and SIGKILL in the middle of a stream of rule edits loses no acknowledged one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { AlertRules, AlertsAnswer, type KernelEvent } from '../../../contract';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';
import { startProxyProcess, type ProxyProcess } from '../reliability/support/proxy-process';
import { tinyServer } from '../../support/otlp-spans';
import { startAlertmanager, type RealServer } from '../../support/real-servers';

const AM_BIN = '/usr/bin/prometheus-alertmanager';
const skip =
  postgresSkipReason() ??
  (existsSync(AM_BIN) ? undefined : `${AM_BIN} is missing (apt-get install prometheus-alertmanager)`);
const TTL_MS = 2000;
const INTERVAL_MS = 250;
const RULE = 'tls-slow-and-gpu-oom';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  while (Date.now() - t0 < ms) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

const json = async <T>(url: string, init?: RequestInit): Promise<T> => (await (await fetch(url, init)).json()) as T;
const metric = async (url: string, re: RegExp): Promise<number> => {
  const m = re.exec(await (await fetch(`${url}/metrics`)).text());
  return m ? Number(m[1]) : 0;
};
const pushed = (p: ProxyProcess): Promise<number> =>
  metric(p.url, /^hopscope_proxy_alerts_pushed_total\{state="firing"\} (\d+)/m);
type Health = {
  state: {
    alerts: { holder: string | null; self: boolean; token: number | null };
    kernelEvidence: { holder: string | null; self: boolean };
  };
};
const health = (p: ProxyProcess): Promise<Health> => json<Health>(`${p.url}/api/health`);

describe('two proxies on one PostgreSQL', { skip }, () => {
  let pg: PostgresServer;
  let dbUrl = '';
  let am: RealServer;
  let exporter: Awaited<ReturnType<typeof tinyServer>>;
  const procs: ProxyProcess[] = [];
  /** The exporter keeps the seed rule's coincidence fresh: 3 slow handshakes and a GPU allocation failure. */
  let firing = true;

  const spawnProxy = async (): Promise<ProxyProcess> => {
    const p = await startProxyProcess({
      HOPSCOPE_DATABASE_URL: dbUrl,
      HOPSCOPE_EXPORTER_URLS: exporter.url,
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_ALERTMANAGER_URL: am.url,
      HOPSCOPE_ALERT_INTERVAL_MS: String(INTERVAL_MS),
      HOPSCOPE_LEASE_TTL_MS: String(TTL_MS),
      HOPSCOPE_APP_URL: 'https://grafana.example.com',
    });
    procs.push(p);
    return p;
  };
  const leaderOf = async (ps: ProxyProcess[]): Promise<{ leader: ProxyProcess; follower: ProxyProcess }> =>
    waitFor(
      'one evaluator',
      async () => {
        const hs = await Promise.all(ps.map(health));
        const held = ps.filter((_, i) => hs[i].state.alerts.self);
        if (held.length !== 1) return undefined;
        assert.ok(
          hs.every((h) => h.state.alerts.holder === hs[0].state.alerts.holder),
          'both name the same holder'
        );
        return { leader: held[0], follower: ps.find((p) => p !== held[0])! };
      },
      15_000
    );

  before(async () => {
    pg = await startPostgres();
    dbUrl = await pg.createDatabase('alerts_ha');
    am = await startAlertmanager();
    exporter = await tinyServer((req, res) => {
      const now = Date.now();
      const events: KernelEvent[] = firing
        ? [
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
          ]
        : [];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url!.startsWith('/health') ? { ok: true } : { events }));
    });
  });
  after(async () => {
    for (const p of procs) await p.kill9();
    await exporter?.close();
    await am?.stop();
    await pg?.close();
  });

  test("both see one rule set; an edit on one is the other's; a stale edit is a 409", async () => {
    const [a, b] = await Promise.all([spawnProxy(), spawnProxy()]);
    const ra = AlertRules.parse(await json(`${a.url}/api/alerts/rules`));
    const rb = AlertRules.parse(await json(`${b.url}/api/alerts/rules`));
    assert.deepEqual(ra, rb);
    assert.equal(ra.version, 1, 'seeded once though both started at once');
    const edited = {
      rules: [
        ...ra.rules,
        { id: 'extra', name: 'Extra', conditions: [{ kind: 'kernel', type: 'tcp_retransmit', atLeast: 1000 }] },
      ],
      expectedVersion: 1,
    };
    const r = await fetch(`${a.url}/api/alerts/rules`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(edited),
    });
    assert.equal(r.status, 200);
    const onB = AlertRules.parse(await json(`${b.url}/api/alerts/rules`));
    assert.equal(onB.version, 2);
    assert.deepEqual(
      onB.rules.map((x) => x.id),
      [...ra.rules.map((x) => x.id), 'extra']
    );
    assert.ok(onB.rules.some((x) => x.id === RULE));
    const stale = await fetch(`${b.url}/api/alerts/rules`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: ra.rules, expectedVersion: 1 }),
    });
    assert.equal(stale.status, 409);
    assert.match(
      ((await stale.json()) as { error: { message: string } }).error.message,
      /version 1, the database has version 2/
    );
  });

  test('only the lease holder evaluates and pushes: Alertmanager gets the alert from one proxy, recorded once', async () => {
    const { leader, follower } = await leaderOf(procs);
    type AmAlert = { labels: Record<string, string>; status: { state: string }; generatorURL: string };
    const inAm = await waitFor(
      'the alert in Alertmanager',
      async () => (await json<AmAlert[]>(`${am.url}/api/v2/alerts`)).find((x) => x.labels.rule_id === RULE),
      15_000
    );
    assert.match(inAm.generatorURL, /^https:\/\/grafana\.example\.com\/a\/hopscope-rca-app\//);
    // Several rounds later: every alert Alertmanager received came from the holder.
    await new Promise((r) => setTimeout(r, 6 * INTERVAL_MS));
    const before = await pushed(leader);
    const received = await metric(am.url, /^alertmanager_alerts_received_total\{status="firing",version="v2"\} (\d+)/m);
    const afterwards = await pushed(leader);
    assert.ok(before > 3, `the holder re-sends each round: ${before}`);
    assert.equal(await pushed(follower), 0, 'the other proxy never pushed');
    assert.ok(
      received >= before && received <= afterwards,
      `Alertmanager received ${received}, the holder sent ${before}..${afterwards}`
    );
    // The kernel-evidence keeper is one proxy too.
    const hs = await Promise.all([leader, follower].map(health));
    assert.equal(hs.filter((h) => h.state.kernelEvidence.self).length, 1);
    assert.equal(hs[0].state.kernelEvidence.holder, hs[1].state.kernelEvidence.holder);
    for (const p of [leader, follower]) {
      const a = AlertsAnswer.parse(await json(`${p.url}/api/alerts`));
      assert.equal(a.alerts.filter((x) => x.state === 'firing').length, 1, 'both answer the alert from the database');
      assert.equal(a.history!.filter((x) => x.alert.state === 'firing').length, 1, 'one firing transition');
      assert.equal(a.evaluator!.self, p === leader);
      assert.ok(a.evaluatedAt !== null && Date.now() - a.evaluatedAt < 3000);
      // The postmortem export reads the same database: the follower's lists the alert as the holder's does.
      const md = await (await fetch(`${p.url}/api/export/postmortem?from=now-15m&to=now`)).text();
      const section = md.slice(md.indexOf('## Alerts'));
      assert.match(section, /- \*\*firing\*\* .* since /, `${p === leader ? 'holder' : 'follower'}: ${section}`);
    }
  });

  test('SIGKILL of the holder: the other takes over within the lease ttl and pushes on, without firing again', async (t) => {
    const { leader, follower } = await leaderOf(procs);
    const before = await pushed(follower);
    const t0 = Date.now();
    await leader.kill9();
    procs.splice(procs.indexOf(leader), 1);
    await waitFor(
      'the takeover',
      async () => ((await health(follower)).state.alerts.self ? true : undefined),
      TTL_MS + 5000
    );
    const tookMs = Date.now() - t0;
    assert.ok(tookMs <= TTL_MS + INTERVAL_MS + 1000, `took over in ${tookMs} ms (ttl ${TTL_MS})`);
    t.diagnostic(`takeover after SIGKILL: ${tookMs} ms (lease ttl ${TTL_MS} ms, round ${INTERVAL_MS} ms)`);
    await waitFor(
      'pushes from the new holder',
      async () => ((await pushed(follower)) > before ? true : undefined),
      5000
    );
    type AmAlert = { labels: Record<string, string>; status: { state: string } };
    const inAm = (await json<AmAlert[]>(`${am.url}/api/v2/alerts`)).find((x) => x.labels.rule_id === RULE);
    assert.equal(inAm?.status.state, 'active', 'still firing in Alertmanager across the takeover');
    const a = AlertsAnswer.parse(await json(`${follower.url}/api/alerts`));
    assert.equal(
      a.history!.filter((x) => x.alert.state === 'firing').length,
      1,
      'the new holder reloaded the alert, it did not fire it again'
    );
    assert.equal(a.evaluator!.self, true);
    // The alert resolves once, from the new holder.
    firing = false;
    await waitFor(
      'resolved',
      async () => {
        const x = AlertsAnswer.parse(await json(`${follower.url}/api/alerts`));
        return x.history!.some((h) => h.alert.state === 'resolved') ? true : undefined;
      },
      10_000
    );
    await spawnProxy(); // back to two
  });

  test('SIGKILL in the middle of a stream of rule edits loses nothing that was acknowledged', async (t) => {
    const victim = procs[procs.length - 1];
    const other = procs[0];
    let acked = AlertRules.parse(await json(`${victim.url}/api/alerts/rules`));
    let inFlight: AlertRules | undefined;
    let n = 0;
    let stop = false;
    const edits = (async () => {
      while (!stop) {
        const next = {
          rules: [
            {
              id: `edit-${++n}`,
              name: `Edit ${n}`,
              conditions: [{ kind: 'kernel', type: 'tcp_retransmit', atLeast: 1000 }],
            },
          ],
          expectedVersion: acked.version,
        };
        inFlight = next as AlertRules;
        try {
          const r = await fetch(`${victim.url}/api/alerts/rules`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(next),
          });
          if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
          acked = AlertRules.parse(await r.json());
        } catch {
          return; // killed: this one was not acknowledged
        }
      }
    })();
    // The kill lands mid-stream once three edits were acknowledged (what was counted, not a fixed delay a busy
    // machine can fill with one edit), at a random point of the next ones.
    const first = acked.version!;
    await waitFor('three edits acknowledged', async () => (acked.version! >= first + 3 ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
    await victim.kill9();
    procs.splice(procs.indexOf(victim), 1);
    stop = true;
    await edits;
    assert.ok(acked.version! >= first + 3, `edits were acknowledged before the kill (${acked.version} from ${first})`);
    const now = AlertRules.parse(await json(`${other.url}/api/alerts/rules`));
    t.diagnostic(`acknowledged up to version ${acked.version}; the database has version ${now.version} after SIGKILL`);
    // The acknowledged edit, or the one in flight when the kill came (committed, its answer lost): never older.
    if (now.version === acked.version) assert.deepEqual(now.rules, acked.rules);
    else {
      assert.equal(now.version, acked.version! + 1, `version ${now.version} after acknowledged ${acked.version}`);
      assert.deepEqual(
        now.rules.map((r) => r.id),
        inFlight!.rules.map((r) => r.id)
      );
    }
    // A restarted proxy reads the same.
    const again = await spawnProxy();
    assert.deepEqual(AlertRules.parse(await json(`${again.url}/api/alerts/rules`)), now);
  });

  test('PostgreSQL down: the alert routes answer 503 with Retry-After, the proxies stay up; back up, they answer again', async () => {
    const p = procs[0];
    await pg.stop();
    try {
      const r = await fetch(`${p.url}/api/alerts/rules`);
      assert.equal(r.status, 503);
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'database_unavailable');
      assert.equal((await fetch(`${p.url}/api/alerts`)).status, 503);
      assert.equal((await fetch(`${p.url}/api/health`)).status, 200, 'the proxy answers');
    } finally {
      await pg.start();
    }
    await waitFor(
      'the rules again',
      async () => ((await fetch(`${p.url}/api/alerts/rules`)).status === 200 ? true : undefined),
      20_000
    );
    await leaderOf(procs);
    for (const x of procs) assert.equal(x.exited(), undefined, 'no proxy died');
  });
});
