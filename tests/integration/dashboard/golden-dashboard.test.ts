/**
 * Every PromQL expression of the golden dashboard template (provisioning/dashboards/hopscope-golden.json) answers
 * without error and with at least one finite sample from a real Prometheus, scraping with the deploy config's jobs
 * (deploy/prometheus/prometheus.yml), so the dashboard's metric names and label assumptions are checked against what
 * the real programs expose:
 *  - the chain rows (vLLM/TGI, GPU, hops: service, model_name, gpu/UUID/Hostname…) against the real simulated chain,
 *    scraped with the `hopscope-chain` job (http_sd through the control API + its relabelling). No fault is injected
 *    while they are checked: the error-rate expressions must answer 0, not empty, when nothing fails.
 *  - the kernel row (hopscope_tcp_*, hopscope_tls_*, hopscope_gpu_*, hopscope_bpf_*) against the real bpf-exporter
 *    running real bpftrace probes (root, bpftrace, tracefs), scraped with the `hopscope-bpf-exporter` job. The chain
 *    then runs split (one process per pod, as the demo runs it), each replica registering its pid with the exporter
 *    through /register with the exporter's HOPSCOPE_BPF_TOKEN, and the kernel activity every panel needs is caused for
 *    real: connects of the chain's hops (the agent's fresh TLS connection per tool call, so TLS handshakes too) and of a
 *    small client process registered as a pod (fresh connects to the gateway, and refused connects to a closed port);
 *    the chain's tcp_retransmit fault (an nftables drop rule) on rag; its gpu_oom fault on llm-tgi, whose CUDA driver
 *    processes allocate through the stand-in libcuda.so.1 the exporter's uretprobes watch; a per-event budget lowered
 *    to 5 records/s (HOPSCOPE_BPF_EVENT_BUDGET) so the client's connects exceed it and are counted as suppressed.
 *    Without eBPF the kernel row is skipped, with the reason, and the chain runs in one process as before.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { parse } from 'yaml';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { loadChainConfig } from '../../../loadgen/src/config';
import { ensureCudaStandIn, type StandInResult } from '../../../loadgen/src/chain/gpu/cuda-stand-in';
import { startSplitChain } from '../../../loadgen/src/chain/split';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { makeLogger } from '../../../loadgen/src/log';
import { goldenQueries, type GoldenQuery } from '../../static/deploy/golden-queries';
import { child } from '../bpf-exporter/helpers';
import { kernelSkipReason, removeChainNftTables, unattachedProbes } from '../fullstack/support';
import { chat, havePrometheus, startPrometheus, waitFor } from '../loadgen/support';

const root = join(import.meta.dirname, '..', '..', '..');
const skip = havePrometheus() ? false : 'the Debian prometheus binary (/usr/bin/prometheus) is not installed';
const kernelWhy = skip ? undefined : kernelSkipReason();
const kernelSkip = kernelWhy
  ? `no eBPF here (${kernelWhy}): the kernel row needs the real bpf-exporter's probes`
  : false;
const DEADLINE_MS = 40_000;
const KERNEL_DEADLINE_MS = 30_000;
/** Per-event records per probe per second: the client's connects alone exceed it, so some are suppressed. */
const EVENT_BUDGET = 5;
const CLIENT_POD = 'golden-client-0';

const deployConfig = (): { scrape_configs: Array<Record<string, any>> } =>
  parse(readFileSync(join(root, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8'));

/** The deploy Prometheus's chain job relabelling; its `chain:` host (the compose service) becomes our loopback. */
function deployChainRelabel(): unknown[] {
  const job = deployConfig().scrape_configs.find((j) => j.job_name === 'hopscope-chain');
  assert.ok(job?.http_sd_configs?.length, 'deploy/prometheus/prometheus.yml: the hopscope-chain job uses http_sd');
  return (job.relabel_configs ?? []).map((r: Record<string, unknown>) =>
    typeof r.replacement === 'string' ? { ...r, replacement: r.replacement.replace(/^chain:/, '127.0.0.1:') } : r
  );
}

/**
 * The deploy Prometheus's bpf-exporter job as it is (its static labels, and relabelling or honor_labels should it get
 * some), aimed at our exporter instead of the compose service `bpf-exporter:3302`, at the test's 1 s interval.
 */
function deployExporterJob(exporterUrl: string): Record<string, unknown> {
  const job = deployConfig().scrape_configs.find((j) => j.job_name === 'hopscope-bpf-exporter');
  assert.ok(
    job?.static_configs?.length,
    'deploy/prometheus/prometheus.yml: the hopscope-bpf-exporter job has static targets'
  );
  const { scrape_interval: _i, scrape_timeout: _t, ...rest } = job;
  const host = new URL(exporterUrl).host;
  return {
    ...rest,
    static_configs: job.static_configs.map((s: { targets: string[] }) => ({
      ...s,
      targets: s.targets.map(() => host),
    })),
  };
}

/** Titles of the panels of the dashboard's kernel row (the eBPF exporter's metrics), collapsed or not. */
function kernelRowPanels(): Set<string> {
  const dash = JSON.parse(readFileSync(join(root, 'provisioning', 'dashboards', 'hopscope-golden.json'), 'utf8')) as {
    panels: Array<{ type: string; title: string; panels?: Array<{ title: string }> }>;
  };
  const out = new Set<string>();
  let inKernel = false;
  for (const p of dash.panels) {
    if (p.type === 'row') {
      inKernel = /^kernel\b/i.test(p.title);
      if (inKernel) for (const c of p.panels ?? []) out.add(c.title);
    } else if (inKernel) out.add(p.title);
  }
  return out;
}

/** Metric names an expression selects (`name[`, `name{…}[`). */
const metricsOf = (promql: string): string[] => [
  ...new Set([...promql.matchAll(/([a-zA-Z_:][\w:]*)\s*(?:\{[^}]*\})?\s*\[/g)].map((m) => m[1])),
];

type Outcome = { ok: true; note?: string } | { ok: false; why: string };
type Series = Array<{ metric: Record<string, string>; value: [number, string] }>;

/** Labels the expression groups by (`by (a, b)`, bar `le`): the legend needs them on every series it returns. */
const groupLabels = (promql: string): string[] => [
  ...new Set(
    [...promql.matchAll(/\bby\s*\(([^)]*)\)/g)]
      .flatMap((m) => m[1].split(',').map((l) => l.trim()))
      .filter((l) => l && l !== 'le')
  ),
];

async function answer(query: (q: string) => Promise<any[]>, q: GoldenQuery): Promise<Series | string> {
  try {
    return (await query(q.promql)) as Series;
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

/**
 * One instant query. Fails on a Prometheus error, an empty vector, only NaN/Inf samples (0/0, a quantile of no
 * increase), or a series missing a label the expression groups by (a target label the scrape config did not set).
 */
async function check(query: (q: string) => Promise<any[]>, q: GoldenQuery): Promise<Outcome> {
  const result = await answer(query, q);
  if (typeof result === 'string') return { ok: false, why: result };
  if (!result.length) return { ok: false, why: 'empty result' };
  if (!result.some((s) => Number.isFinite(Number(s.value[1]))))
    return { ok: false, why: `no finite sample (${result.map((s) => s.value[1]).join(', ')})` };
  const missing = groupLabels(q.promql).filter((l) => result.some((s) => !s.metric[l]));
  if (missing.length)
    return {
      ok: false,
      why: `series without ${missing.join(', ')}: ${result.map((s) => JSON.stringify(s.metric)).join(' ')}`,
    };
  return { ok: true };
}

/**
 * A kernel-row instant query, as `check`, except for `pod`: the exporter sees the whole node, and exports what
 * processes outside any pod do (Prometheus's own scrapes, other programs on this machine) with pod="", so a series
 * without `pod` is allowed; but a series labelled with one of the pods registered with the exporter (the chain's, the
 * client's) must be there, with a value above 0: the kernel activity this test causes, inside the rate window (not
 * just a counter that rose once before). Every other grouping label (probe, error) must be on every series.
 */
async function checkKernel(query: (q: string) => Promise<any[]>, q: GoldenQuery, pods: Set<string>): Promise<Outcome> {
  const result = await answer(query, q);
  if (typeof result === 'string') return { ok: false, why: result };
  if (!result.length) return { ok: false, why: 'empty result' };
  const finite = result.filter((s) => Number.isFinite(Number(s.value[1])));
  if (!finite.length)
    return {
      ok: false,
      why: `no finite sample (${result.map((s) => `${JSON.stringify(s.metric)} ${s.value[1]}`).join(', ')})`,
    };
  const labels = groupLabels(q.promql);
  const missing = labels.filter((l) => l !== 'pod' && result.some((s) => !s.metric[l]));
  if (missing.length)
    return {
      ok: false,
      why: `series without ${missing.join(', ')}: ${result.map((s) => JSON.stringify(s.metric)).join(' ')}`,
    };
  const active = finite.filter((s) => Number(s.value[1]) > 0 && (!labels.includes('pod') || pods.has(s.metric.pod)));
  if (!active.length) {
    return {
      ok: false,
      why: `no series ${labels.includes('pod') ? 'of a registered pod ' : ''}above 0; series: ${result.map((s) => `${JSON.stringify(s.metric)} ${s.value[1]}`).join(', ')}`,
    };
  }
  return {
    ok: true,
    note: finite
      .map((s) => `${labels.map((l) => `${l}=${s.metric[l] ?? ''}`).join(',')} ${Number(s.value[1]).toPrecision(3)}`)
      .join('; '),
  };
}

/**
 * A registered client of the chain: fresh TCP connections to the gateway (an HTTP GET /healthz each, `burst` per tick)
 * and one connect per tick to a port nobody listens on (refused: a failed connect), after "go" on stdin.
 */
const CLIENT = `
const http = require('node:http'), net = require('node:net');
const [host, port, burst, everyMs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
const closedPort = () => new Promise((res) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const get = () => new Promise((res) => { const q = http.get({ host, port, path: '/healthz', agent: false }, (r) => { r.resume(); r.on('end', () => res(r.statusCode)); }); q.on('error', () => res(-1)); });
const refused = (p) => new Promise((res) => { const c = net.connect(p, '127.0.0.1'); c.on('connect', () => { c.destroy(); res(false); }); c.on('error', (e) => res(e.code === 'ECONNREFUSED')); });
(async () => {
  let closed = await closedPort();
  console.log('ready');
  await new Promise((r) => process.stdin.once('data', r));
  let ok = 0, failed = 0;
  for (;;) {
    for (let i = 0; i < burst; i++) if ((await get()) === 200) ok++;
    if (await refused(closed)) failed++; else closed = await closedPort();
    console.log('tick ' + ok + ' ' + failed);
    await new Promise((r) => setTimeout(r, everyMs));
  }
})();
`;

describe('golden dashboard PromQL against a real Prometheus scraping the chain and the bpf-exporter', { skip }, () => {
  let chain: RunningChain | undefined;
  let exp: Exporter | undefined;
  let prom: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  let client: ReturnType<typeof child> | undefined;
  let standIn: StandInResult | undefined;
  const token = randomBytes(24).toString('hex');
  const auth = { authorization: `Bearer ${token}` };
  let trafficStop = false;
  let traffic: Promise<void> | undefined;
  const statuses = new Map<number, number>();
  const queries = goldenQueries(root);
  const kernelPanels = kernelRowPanels();
  const kernelQueries = queries.filter((q) => kernelPanels.has(q.panel));
  const chainQueries = queries.filter((q) => !kernelPanels.has(q.panel));
  const faultIds: string[] = [];

  before(async () => {
    const chainOpts = {
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent' as const,
      tracing: false,
      vectorCacheHitRate: 0.3,
    };
    if (kernelSkip) {
      chain = await startChain(chainOpts);
    } else {
      // The library the chain's LLM driver processes will map, named so the GPU probe attaches to it from the start.
      standIn = ensureCudaStandIn();
      exp = await startExporter(
        loadConfig({
          HOPSCOPE_BPF_PORT: '0',
          HOPSCOPE_BPF_NODE: 'golden-node',
          HOPSCOPE_BPF_TOKEN: token,
          HOPSCOPE_BPF_NODE_BINARY: process.execPath,
          HOPSCOPE_BPF_LIBCUDA: standIn.ok ? standIn.library : '',
          HOPSCOPE_BPF_EVENT_BUDGET: String(EVENT_BUDGET),
        }),
        pino({ level: 'warn' })
      );
      const cfg = loadChainConfig({ ...chainOpts, exporterUrl: exp.url, exporterToken: token });
      // Split mode picks its ports before forking the replicas: on a shared machine one may be taken meanwhile.
      const split = async (): Promise<RunningChain> => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await startSplitChain(cfg, makeLogger('silent'));
          } catch (err) {
            if (attempt >= 3) throw err;
          }
        }
      };
      [chain] = await Promise.all([split(), exp.pipeline.settled(60_000)]);
    }
    prom = await startPrometheus(`${chain.controlUrl}/targets`, {
      relabelConfigs: deployChainRelabel(),
      scrapeConfigs: exp ? [deployExporterJob(exp.url)] : [],
    });
    const expected = chain.hops.length + chain.dcgm.length + (exp ? 1 : 0);
    await waitFor('every target up', async () => {
      const t = await prom!.api('/api/v1/targets?state=active');
      return t.activeTargets.length === expected && t.activeTargets.every((x: { health: string }) => x.health === 'up');
    });
    // Traffic only after the first scrapes, so counters and histograms rise inside the rate window. Every round:
    // both backends × both 8B versions × streaming or not, through the gateway, plus one agent request (the agent
    // calls the tool over TLS, a fresh connection and handshake each time).
    const gw = chain.gatewayUrl;
    traffic = (async () => {
      for (let round = 0; !trafficStop; round++) {
        const reqs = [];
        for (const backend of ['vllm', 'tgi']) {
          for (const model of ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2']) {
            for (const stream of [false, true]) {
              reqs.push(
                chat(
                  gw,
                  {
                    model,
                    stream,
                    messages: [
                      { role: 'system', content: 'You answer SRE questions.' },
                      { role: 'user', content: `round ${round}: why is ${model} slow on ${backend}?` },
                    ],
                  },
                  { 'x-hopscope-backend': backend }
                )
              );
            }
          }
        }
        reqs.push(
          chat(
            gw,
            { messages: [{ role: 'user', content: `round ${round}: look up the on-call rota and summarise it` }] },
            { 'x-hopscope-route': 'agent' }
          )
        );
        for (const r of await Promise.allSettled(reqs)) {
          const code = r.status === 'fulfilled' ? r.value.status : -1;
          statuses.set(code, (statuses.get(code) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    if (exp) {
      const u = new URL(gw);
      client = child(process.execPath, ['-e', CLIENT, u.hostname, u.port, '10', '250']);
      await client.waitLine(/^ready/);
      const reg = await fetch(`${exp.url}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({
          pid: client.pid,
          pod: CLIENT_POD,
          namespace: chain.config.namespace,
          service: 'golden-client',
        }),
      });
      assert.equal(reg.status, 201, `registering the client: ${await reg.text()}`);
      client.stdin!.write('go\n');
    }
  });

  after(async () => {
    trafficStop = true;
    client?.kill();
    for (const id of faultIds) await fetch(`${chain!.controlUrl}/faults/${id}`, { method: 'DELETE' }).catch(() => {});
    await traffic?.catch(() => {});
    await prom?.stop();
    await chain?.stop();
    await exp?.stop();
    if (exp) removeChainNftTables();
  });

  it('the dashboard has PromQL targets to check, and a kernel row', () => {
    assert.ok(queries.length >= 10, `${queries.length} expressions`);
    for (const q of queries)
      assert.doesNotMatch(q.promql, /\$\w|\$\{/, `${q.panel} ${q.refId}: a variable left unsubstituted: ${q.promql}`);
    assert.ok(kernelQueries.length >= 5, `kernel row expressions: ${kernelQueries.map((q) => q.panel).join(', ')}`);
    for (const q of kernelQueries)
      assert.ok(metricsOf(q.promql).length, `${q.panel} ${q.refId}: selects no metric: ${q.promql}`);
  });

  it('every chain expression answers without error and not empty (polled until data or 40 s)', async () => {
    const pending = new Map(chainQueries.map((q) => [q, { ok: false, why: 'not queried' } as Outcome]));
    const deadline = Date.now() + DEADLINE_MS;
    while (pending.size && Date.now() < deadline) {
      await Promise.all(
        [...pending.keys()].map(async (q) => {
          const o = await check(prom!.query, q);
          if (o.ok) pending.delete(q);
          else pending.set(q, o);
        })
      );
      if (pending.size) await new Promise((r) => setTimeout(r, 1000));
    }
    const failing = [...pending].map(
      ([q, o]) => `  - [${q.panel}] ${q.refId}: ${o.ok ? '' : o.why}\n      ${q.promql}`
    );
    assert.equal(
      failing.length,
      0,
      `${failing.length} of ${chainQueries.length} golden-dashboard chain expressions failed (gateway statuses ${JSON.stringify(Object.fromEntries(statuses))}):\n${failing.join('\n')}`
    );
    assert.ok((statuses.get(200) ?? 0) > 0, 'the chain served traffic');
  });

  it(
    "every kernel-row expression answers with a registered pod's data from the real bpf-exporter (polled until data or 30 s)",
    { skip: kernelSkip },
    async (t) => {
      const e = exp!;
      const c = chain!;
      // The probes attached (the GPU ones need the stand-in library; NCCL's a tensor-parallel group, which this chain
      // does not run: HOPSCOPE_TP 1), and every chain pod registered its pid.
      const unattached = (await unattachedProbes(e)).filter(
        (p) =>
          !(/^gpu_(alloc_fail|memory_held):/.test(p) && standIn && !standIn.ok) &&
          !(p.startsWith('nccl_collective:') && c.config.tensorParallel < 2)
      );
      assert.deepEqual(unattached, [], 'every probe attached');
      const registered = await waitFor('every chain pod registered with the exporter', async () => {
        const { registrations } = (await (await fetch(`${e.url}/register`, { headers: auth })).json()) as {
          registrations: Array<{ pid: number; pod: string }>;
        };
        return c.hops.every((h) => registrations.some((r) => r.pod === h.pod && r.pid === c.pids[h.pod])) &&
          registrations.some((r) => r.pod === CLIENT_POD)
          ? registrations
          : undefined;
      });
      const pods = new Set(registered.map((r) => r.pod));
      // The exporter's target carries the deploy job's labels.
      const targets = (await prom!.api('/api/v1/targets?state=active')).activeTargets as Array<{
        labels: Record<string, string>;
        scrapeUrl: string;
      }>;
      const expTarget = targets.find((x) => x.labels.job === 'hopscope-bpf-exporter');
      assert.equal(
        expTarget?.labels.service,
        'bpf-exporter',
        `the deploy job's labels on the exporter's target: ${JSON.stringify(expTarget)}`
      );
      // Every kernel-row metric is one the exporter declares (HELP/TYPE), histograms by their _bucket series.
      const declared = new Set(
        [...(await (await fetch(`${e.url}/metrics`)).text()).matchAll(/^# TYPE (\S+) (\w+)/gm)].flatMap((m) =>
          m[2] === 'histogram' ? [`${m[1]}_bucket`, `${m[1]}_sum`, `${m[1]}_count`] : [m[1]]
        )
      );
      for (const q of kernelQueries)
        for (const m of metricsOf(q.promql))
          assert.ok(
            declared.has(m),
            `[${q.panel}] ${q.refId}: ${m} is not a metric the bpf-exporter declares in /metrics`
          );

      // The chain's own faults, now that the chain expressions are checked: packets to rag dropped (retransmits), and
      // GPU allocations of llm-tgi failing in its CUDA driver processes (cuMemAlloc_v2 → CUDA_ERROR_OUT_OF_MEMORY).
      // A fault this machine cannot inject is reported with its reason; its panel is then checked differently.
      const cannot = new Map<string, string>();
      if (standIn && !standIn.ok)
        cannot.set(
          'hopscope_gpu_alloc_failures_total',
          `no stand-in libcuda.so.1 for the GPU probe: ${standIn.reason}`
        );
      const inject = async (body: Record<string, unknown>, metric: string): Promise<void> => {
        if (cannot.has(metric)) return;
        const res = await fetch(`${c.controlUrl}/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...body, durationS: 120 }),
        });
        const f = (await res.json()) as { id?: string; error?: { message: string } };
        if (res.status === 201 && f.id) faultIds.push(f.id);
        else if (res.status === 409)
          cannot.set(metric, `the chain cannot inject ${JSON.stringify(body)} here: ${f.error?.message}`);
        else assert.fail(`fault ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(f)}`);
      };
      await inject({ target: 'rag', kind: 'tcp_retransmit', magnitude: 20 }, 'hopscope_tcp_retransmits_total');
      await inject({ target: 'llm-tgi', kind: 'gpu_oom', magnitude: 0.5 }, 'hopscope_gpu_alloc_failures_total');
      const t0 = Date.now();

      const fallback = new Map(
        kernelQueries.flatMap((q) => {
          const why = metricsOf(q.promql)
            .map((m) => cannot.get(m))
            .find(Boolean);
          return why ? [[q, why] as const] : [];
        })
      );
      for (const [q, why] of fallback)
        t.diagnostic(`[${q.panel}] ${q.refId}: checked for answering without error and a declared metric only: ${why}`);
      const pending = new Map(kernelQueries.map((q) => [q, { ok: false, why: 'not queried' } as Outcome]));
      const deadline = Date.now() + KERNEL_DEADLINE_MS;
      while (pending.size && Date.now() < deadline) {
        await Promise.all(
          [...pending.keys()].map(async (q) => {
            const why = fallback.get(q);
            let o: Outcome;
            if (why) {
              // The metric is declared (checked above); the query must answer, empty or not.
              const r = await answer(prom!.query, q);
              o = typeof r === 'string' ? { ok: false, why: `${r} (checked differently: ${why})` } : { ok: true };
            } else o = await checkKernel(prom!.query, q, pods);
            if (o.ok) {
              pending.delete(q);
              t.diagnostic(`[${q.panel}] ${q.refId}: ${o.note ?? 'answered'}`);
            } else pending.set(q, o);
          })
        );
        if (pending.size) await new Promise((r) => setTimeout(r, 1000));
      }
      t.diagnostic(
        `kernel row answered ${Date.now() - t0} ms after the faults; client ${client?.lines.at(-1) ?? 'silent'} (connects ok, refused)`
      );
      const failing = [...pending].map(
        ([q, o]) => `  - [${q.panel}] ${q.refId}: ${o.ok ? '' : o.why}\n      ${q.promql}`
      );
      assert.equal(
        failing.length,
        0,
        `${failing.length} of ${kernelQueries.length} golden-dashboard kernel-row expressions failed (registered pods ${[...pods].join(', ')}; client ${client?.lines.at(-1) ?? 'silent'}; faults not injectable: ${JSON.stringify(Object.fromEntries(cannot))}; /health ${JSON.stringify(await (await fetch(`${e.url}/health`)).json()).slice(0, 1500)}):\n${failing.join('\n')}`
      );
    }
  );
});
