/**
 * Every PromQL expression of the golden dashboard template (provisioning/dashboards/hopscope-golden.json) answers
 * without error and with at least one finite sample from a real Prometheus scraping the real simulated chain, with the
 * deploy config's scrape job (http_sd through the control API + its relabelling), so the dashboard's metric names and
 * label assumptions (service, model_name, gpu/UUID/Hostname…) are checked against what the chain really exposes.
 * No fault is injected: the error-rate expressions must answer 0, not empty, when nothing fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { goldenQueries, type GoldenQuery } from '../../static/deploy/golden-queries';
import { chat, havePrometheus, startPrometheus, waitFor } from '../loadgen/support';

const root = join(import.meta.dirname, '..', '..', '..');
const skip = havePrometheus() ? false : 'the Debian prometheus binary (/usr/bin/prometheus) is not installed';
const DEADLINE_MS = 40_000;

/** The deploy Prometheus's chain job relabelling; its `chain:` host (the compose service) becomes our loopback. */
function deployChainRelabel(): unknown[] {
  const cfg = parse(readFileSync(join(root, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8'));
  const job = cfg.scrape_configs.find((j: { job_name: string }) => j.job_name === 'hopscope-chain');
  assert.ok(job?.http_sd_configs?.length, 'deploy/prometheus/prometheus.yml: the hopscope-chain job uses http_sd');
  return (job.relabel_configs ?? []).map((r: Record<string, unknown>) =>
    (typeof r.replacement === 'string' ? { ...r, replacement: r.replacement.replace(/^chain:/, '127.0.0.1:') } : r));
}

type Outcome = { ok: true } | { ok: false; why: string };

/** Labels the expression groups by (`by (a, b)`, bar `le`): the legend needs them on every series it returns. */
const groupLabels = (promql: string): string[] =>
  [...new Set([...promql.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) => m[1].split(',').map((l) => l.trim())).filter((l) => l && l !== 'le'))];

/**
 * One instant query. Fails on a Prometheus error, an empty vector, only NaN/Inf samples (0/0, a quantile of no
 * increase), or a series missing a label the expression groups by (a target label the scrape config did not set).
 */
async function check(query: (q: string) => Promise<any[]>, q: GoldenQuery): Promise<Outcome> {
  let result: Array<{ metric: Record<string, string>; value: [number, string] }>;
  try {
    result = await query(q.promql);
  } catch (err) {
    return { ok: false, why: `error: ${(err as Error).message}` };
  }
  if (!result.length) return { ok: false, why: 'empty result' };
  if (!result.some((s) => Number.isFinite(Number(s.value[1])))) return { ok: false, why: `no finite sample (${result.map((s) => s.value[1]).join(', ')})` };
  const missing = groupLabels(q.promql).filter((l) => result.some((s) => !s.metric[l]));
  if (missing.length) return { ok: false, why: `series without ${missing.join(', ')}: ${result.map((s) => JSON.stringify(s.metric)).join(' ')}` };
  return { ok: true };
}

describe('golden dashboard PromQL against a real Prometheus scraping the chain', { skip }, () => {
  let chain: RunningChain | undefined;
  let prom: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  let trafficStop = false;
  let traffic: Promise<void> | undefined;
  const statuses = new Map<number, number>();
  const queries = goldenQueries(root);

  before(async () => {
    chain = await startChain({ gatewayPort: 0, controlPort: 0, timeScale: 0.05, logLevel: 'silent', tracing: false, vectorCacheHitRate: 0.3 });
    prom = await startPrometheus(`${chain.controlUrl}/targets`, { relabelConfigs: deployChainRelabel() });
    const expected = chain.hops.length + chain.dcgm.length;
    await waitFor('every chain target up', async () => {
      const t = await prom!.api('/api/v1/targets?state=active');
      return t.activeTargets.length === expected && t.activeTargets.every((x: { health: string }) => x.health === 'up');
    });
    // Traffic only after the first scrapes, so counters and histograms rise inside the rate window. Every round:
    // both backends × both 8B versions × streaming or not, through the gateway, plus one agent request.
    const gw = chain.gatewayUrl;
    traffic = (async () => {
      for (let round = 0; !trafficStop; round++) {
        const reqs = [];
        for (const backend of ['vllm', 'tgi']) {
          for (const model of ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2']) {
            for (const stream of [false, true]) {
              reqs.push(chat(gw, { model, stream, messages: [{ role: 'system', content: 'You answer SRE questions.' }, { role: 'user', content: `round ${round}: why is ${model} slow on ${backend}?` }] }, { 'x-hopscope-backend': backend }));
            }
          }
        }
        reqs.push(chat(gw, { messages: [{ role: 'user', content: `round ${round}: look up the on-call rota and summarise it` }] }, { 'x-hopscope-route': 'agent' }));
        for (const r of await Promise.allSettled(reqs)) {
          const code = r.status === 'fulfilled' ? r.value.status : -1;
          statuses.set(code, (statuses.get(code) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
  });

  after(async () => {
    trafficStop = true;
    await traffic?.catch(() => {});
    await prom?.stop();
    await chain?.stop();
  });

  it('the dashboard has PromQL targets to check', () => {
    assert.ok(queries.length >= 10, `${queries.length} expressions`);
    for (const q of queries) assert.doesNotMatch(q.promql, /\$\w|\$\{/, `${q.panel} ${q.refId}: a variable left unsubstituted: ${q.promql}`);
  });

  it('every expression answers without error and not empty (polled until data or 40 s)', async () => {
    const pending = new Map(queries.map((q) => [q, { ok: false, why: 'not queried' } as Outcome]));
    const deadline = Date.now() + DEADLINE_MS;
    while (pending.size && Date.now() < deadline) {
      await Promise.all([...pending.keys()].map(async (q) => {
        const o = await check(prom!.query, q);
        if (o.ok) pending.delete(q);
        else pending.set(q, o);
      }));
      if (pending.size) await new Promise((r) => setTimeout(r, 1000));
    }
    const failing = [...pending].map(([q, o]) => `  - [${q.panel}] ${q.refId}: ${o.ok ? '' : o.why}\n      ${q.promql}`);
    assert.equal(failing.length, 0,
      `${failing.length} of ${queries.length} golden-dashboard expressions failed (gateway statuses ${JSON.stringify(Object.fromEntries(statuses))}):\n${failing.join('\n')}`);
    assert.ok((statuses.get(200) ?? 0) > 0, 'the chain served traffic');
  });
});
