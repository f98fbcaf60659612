/**
 * A real Prometheus scrapes the running chain (through the control API's http_sd /targets) while it serves traffic;
 * every metric family the chain exposes must match the vLLM, TGI, DCGM and GenAI catalogs (name, type, labels, buckets).
 * Prometheus asks for OpenMetrics: the hops answer it (with trace exemplars) except TGI, which stays text as TGI does.
 * In OpenMetrics a counter family is named without `_total` (its samples keep it), so Prometheus's metadata lists
 * `vllm:generation_tokens` for the series `vllm:generation_tokens_total`, as it does for a real vLLM.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import {
  dcgmCatalog,
  genAiPrometheusNames,
  tgiCatalog,
  tgiDurationBuckets,
  vllmBuckets,
  vllmCatalog,
} from './catalogs';
import { chat, havePrometheus, otlpCollector, startPrometheus, waitFor } from './support';

const skip = havePrometheus() ? false : 'the Debian prometheus binary (/usr/bin/prometheus) is not installed';

describe('chain metrics scraped by a real Prometheus', { skip }, () => {
  let chain: RunningChain;
  let prom: Awaited<ReturnType<typeof startPrometheus>>;
  let collector: Awaited<ReturnType<typeof otlpCollector>>;
  let metadata: Record<string, Array<{ type: string }>>;
  /** A family's sample name: OpenMetrics counters carry `_total` on their samples only. */
  const exposed = (f: string): string =>
    metadata[f][0].type === 'counter' && !f.endsWith('_total') && !f.startsWith('tgi_') && !f.startsWith('DCGM_')
      ? `${f}_total`
      : f;

  before(async () => {
    collector = await otlpCollector();
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      // A deadline, not a figure under test: on a busy machine an agent request can take longer than the default 15 s.
      hopTimeoutMs: 60_000,
      logLevel: 'silent',
      otlpEndpoint: collector.url,
      otlpProtocol: 'http/json',
      vectorCacheHitRate: 0.3,
    });
    prom = await startPrometheus(`${chain.controlUrl}/targets`);
    // Traffic on every path: both backends, both model versions, each backend streaming and not, agent and RAG.
    const reqs = [];
    for (let i = 0; i < 24; i++) {
      reqs.push(
        chat(
          chain.gatewayUrl,
          {
            model: i % 3 ? 'hopscope-llama-8b-v1' : 'hopscope-llama-8b-v2',
            stream: i % 4 < 2,
            messages: [{ role: 'user', content: `question ${i} about prefix caching` }],
          },
          { 'x-hopscope-backend': i % 2 ? 'tgi' : 'vllm', ...(i % 6 === 0 ? { 'x-hopscope-route': 'agent' } : {}) }
        )
      );
    }
    const res = await Promise.all(reqs);
    assert.ok(
      res.every((r) => r.status === 200),
      `statuses ${res.map((r) => r.status)}`
    );
    const expected = chain.hops.length + chain.dcgm.length;
    await waitFor('every target up', async () => {
      const t = await prom.api('/api/v1/targets?state=active');
      return t.activeTargets.length === expected && t.activeTargets.every((x: { health: string }) => x.health === 'up');
    });
    await waitFor(
      'LLM series scraped',
      async () =>
        (await prom.query('sum(vllm:e2e_request_latency_seconds_count) > 0')).length &&
        (await prom.query('sum(tgi_request_success) > 0')).length
    );
    metadata = await prom.api('/api/v1/metadata');
  });

  after(async () => {
    await prom?.stop();
    await chain?.stop();
    await collector?.close();
  });

  it('scrapes every hop replica and dcgm-exporter with service/pod/node target labels', async () => {
    const t = await prom.api('/api/v1/targets?state=active');
    const pods = t.activeTargets
      .map((x: { labels: Record<string, string> }) => x.labels.pod)
      .filter(Boolean)
      .sort();
    assert.deepEqual(pods, chain.hops.map((h) => h.pod).sort());
    assert.equal(
      (await prom.query('count(count by (pod) (hopscope_requests_total{service="rag"}))'))[0].value[1],
      '2',
      'two rag replicas'
    );
    assert.equal((await prom.query('count(count by (pod) (up{service="llm-vllm"}))'))[0].value[1], '2');
    assert.equal((await prom.query('count(count by (pod) (up{service="llm-tgi"}))'))[0].value[1], '2');
  });

  it('every vllm:* family is in the vLLM catalog with its type and labels model_name, engine', async () => {
    const cat = vllmCatalog();
    const families = Object.keys(metadata)
      .filter((n) => n.startsWith('vllm:'))
      .map(exposed);
    assert.ok(families.length >= 20, `${families.length} vLLM families`);
    assert.ok(
      families.includes('vllm:generation_tokens_total') &&
        !Object.keys(metadata).includes('vllm:generation_tokens_total'),
      'vLLM scraped as OpenMetrics (counter family without _total)'
    );
    for (const f of families) {
      // The catalog lists exposed (sample) names.
      assert.ok(cat.has(f), `${f} is not in the vLLM catalog`);
      const family = Object.keys(metadata).find((n) => exposed(n) === f)!;
      assert.equal(metadata[family][0].type, cat.get(f)!.type, `${f} type`);
    }
    assert.ok((await prom.query('sum(vllm:generation_tokens_total) > 0')).length, 'the series keep their _total names');
    for (const must of [
      'vllm:time_to_first_token_seconds',
      'vllm:e2e_request_latency_seconds',
      'vllm:generation_tokens_total',
      'vllm:prefix_cache_hits_total',
      'vllm:prefix_cache_queries_total',
      'vllm:kv_cache_usage_perc',
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:request_success_total',
      'vllm:inter_token_latency_seconds',
    ]) {
      assert.ok(families.includes(must), `${must} missing`);
    }
    const missingLabels = await prom.query(
      'count({__name__=~"vllm:.+", __name__!="vllm:cache_config_info", model_name=""}) or count({__name__=~"vllm:.+", engine=""})'
    );
    assert.equal(missingLabels.length, 0, 'every vLLM series has model_name and engine');
    assert.ok((await prom.query('vllm:request_success_total{finished_reason=~"stop|length"} > 0')).length > 0);
    const les = (
      await prom.api(`/api/v1/label/le/values?match[]=${encodeURIComponent('vllm:time_to_first_token_seconds_bucket')}`)
    )
      .map(Number)
      .filter((n: number) => Number.isFinite(n))
      .sort((a: number, b: number) => a - b);
    assert.deepEqual(les, vllmBuckets('vllm:time_to_first_token_seconds'));
    const e2e = (
      await prom.api(`/api/v1/label/le/values?match[]=${encodeURIComponent('vllm:e2e_request_latency_seconds_bucket')}`)
    )
      .map(Number)
      .filter((n: number) => Number.isFinite(n))
      .sort((a: number, b: number) => a - b);
    assert.equal(e2e[0], 0.3, 'vLLM request-latency buckets start at 0.3 s');
  });

  it('every tgi_* family is in the TGI catalog: no _total, no model label, no TTFT, TGI buckets', async () => {
    const cat = tgiCatalog();
    const families = Object.keys(metadata).filter((n) => n.startsWith('tgi_'));
    assert.ok(families.length >= 20, `${families.length} TGI families`);
    for (const f of families) {
      assert.ok(cat.has(f), `${f} is not in the TGI catalog`);
      assert.equal(metadata[f][0].type, cat.get(f)!.type, `${f} type`);
      assert.ok(!f.endsWith('_total'), `${f} must not end in _total`);
      assert.ok(!/first_token|ttft/.test(f), 'TGI has no TTFT metric');
    }
    assert.equal(
      (await prom.query('count({__name__=~"tgi_.+", model_name!=""})')).length,
      0,
      'no model label on TGI series'
    );
    assert.equal(
      (await prom.query('count({__name__=~"tgi_.+_total"})')).length,
      0,
      'no TGI series ends in _total (TGI pods answer in the text format)'
    );
    assert.ok((await prom.query('sum(tgi_request_count) > 0')).length);
    const les = (await prom.api(`/api/v1/label/le/values?match[]=${encodeURIComponent('tgi_request_duration_bucket')}`))
      .map(Number)
      .filter((n: number) => Number.isFinite(n))
      .sort((a: number, b: number) => a - b);
    const want = tgiDurationBuckets();
    assert.equal(want.length, 35);
    assert.equal(les.length, 35);
    les.forEach((v: number, i: number) =>
      assert.ok(Math.abs(v - want[i]) / want[i] < 1e-4, `bucket ${i}: ${v} vs ${want[i]}`)
    );
  });

  it('every DCGM_FI_* family is in the dcgm-exporter CSVs with dcgm-exporter labels, blank sentinels included', async () => {
    const cat = dcgmCatalog();
    const families = Object.keys(metadata).filter((n) => n.startsWith('DCGM_FI_'));
    assert.ok(families.length >= 20, `${families.length} DCGM families`);
    for (const f of families) {
      assert.ok(cat.has(f), `${f} is not in the DCGM CSVs`);
      assert.equal(metadata[f][0].type, cat.get(f)!.type, `${f} type`);
    }
    assert.ok(cat.get('DCGM_FI_PROF_SM_ACTIVE')?.commentedOut, 'SM_ACTIVE is commented out in the default CSV');
    const util = await prom.query('DCGM_FI_DEV_GPU_UTIL');
    assert.equal(util.length, chain.config.gpuNodes * chain.config.gpusPerNode);
    for (const s of util)
      for (const l of ['gpu', 'UUID', 'Hostname', 'modelName'])
        assert.ok(s.metric[l], `${l} label on ${JSON.stringify(s.metric)}`);
    // As dcgm-exporter does, a GPU no pod holds has no pod label; every LLM replica holds at least one.
    const held = new Set(util.filter((s) => s.metric.pod && s.metric.namespace).map((s) => s.metric.pod));
    const llmPods = chain.hops.filter((h) => h.hop.startsWith('llm-')).map((h) => h.pod);
    assert.deepEqual(
      llmPods.filter((p) => !held.has(p)),
      [],
      'every LLM replica holds a GPU (pod and namespace labels)'
    );
    const blank = await prom.query('DCGM_FI_DEV_MEMORY_TEMP');
    assert.ok(
      blank.every((s: { value: [number, string] }) => Number(s.value[1]) >= 9.2e18),
      'memory temperature carries the blank sentinel'
    );
    // The traffic ran once, before this test: the latest sample may already be idle again (a GPU's activity is per
    // scrape interval), so look for the load anywhere in the run, once the interval that held it has been scraped.
    await waitFor(
      'SM activity follows the LLM load',
      async () => (await prom.query('max(max_over_time(DCGM_FI_PROF_SM_ACTIVE[10m])) > 0')).length > 0,
      15_000
    );
  });

  it('gen_ai_* families use the GenAI semconv names; hopscope_* cover the other hops', async () => {
    const sem = genAiPrometheusNames();
    const families = Object.keys(metadata).filter((n) => n.startsWith('gen_ai_'));
    assert.ok(families.length >= 4, families.join(','));
    for (const f of families) {
      assert.ok(sem.has(f), `${f} is not a GenAI semconv metric`);
      assert.equal(metadata[f][0].type, sem.get(f));
    }
    for (const f of Object.keys(metadata).filter(
      (n) =>
        !/^(vllm:|sglang:|tgi_|DCGM_FI_|gen_ai_|hopscope_|up$|scrape_|prometheus_|go_|net_|process_|promhttp_)/.test(n)
    )) {
      assert.fail(`unprefixed metric ${f}`);
    }
    for (const svc of ['gateway', 'embedding', 'vector-cache', 'rag', 'agent', 'tool']) {
      assert.ok(
        (await prom.query(`sum(hopscope_requests_total{service="${svc}"}) > 0`)).length,
        `${svc} served requests`
      );
    }
    assert.ok((await prom.query('hopscope_sampler_rate{service="gateway"} == 1')).length, 'sampler rate exported');
    assert.ok((await prom.query('sum(hopscope_vector_cache_lookups_total{result="miss"}) > 0')).length);
  });

  it("faults move the right hop's numbers in Prometheus (latency on rag, gpu_oom on llm-vllm)", async () => {
    const snapshot = async () => {
      const q = async (metric: string, more = '') =>
        Object.fromEntries(
          (await prom.query(`sum by (service) (${metric}{route!="unknown"${more}})`)).map(
            (r: { metric: { service: string }; value: [number, string] }) => [r.metric.service, Number(r.value[1])]
          )
        );
      return {
        count: await q('hopscope_request_duration_seconds_count'),
        fast: await q('hopscope_request_duration_seconds_bucket', ',le="0.25"'),
      };
    };
    /**
     * Waits until Prometheus has scraped everything served so far: for every service, its summed count equals what the
     * service's own pods count. Each hop records a request when its answer ends, so a caller (vector-cache) records
     * after its callee (rag): waiting for one service alone races the others' scrapes.
     */
    const settled = async () => {
      const want: Record<string, number> = {};
      for (const h of chain.hops) {
        const text = await (await fetch(h.metricsUrl)).text();
        for (const m of text.matchAll(/^hopscope_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
          if (m[1].includes('route="unknown"')) continue;
          want[h.hop] = (want[h.hop] ?? 0) + Number(m[2]);
        }
      }
      return waitFor('scrape', async () => {
        const s = await snapshot();
        return Object.entries(want).every(([svc, n]) => (s.count[svc] ?? 0) === n) ? s : undefined;
      });
    };
    const a = await settled();
    const post = (b: unknown) =>
      fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(b),
      }).then((r) => r.json() as Promise<{ id: string }>);
    const lat = await post({ target: 'rag', kind: 'latency', magnitude: 400 });
    const oom = await post({ target: 'llm-vllm', kind: 'gpu_oom', magnitude: 1 });
    chain.settings.vectorCacheHitRate = 0;
    for (let i = 0; i < 4; i++)
      await chat(
        chain.gatewayUrl,
        { messages: [{ role: 'user', content: `prom fault ${i}` }] },
        { 'x-hopscope-backend': 'vllm' }
      );
    const b = await settled();
    chain.settings.vectorCacheHitRate = 0.3;
    for (const f of [lat, oom]) await fetch(`${chain.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
    // What was counted, not a mean (which any other request in the window moves): the requests each hop served
    // slower than 0.25 s (the histogram's bucket below the fault's 400 ms) between the two snapshots. Each of the 4
    // requests crosses rag and its caller vector-cache once with 400 ms added; embedding, before them, gains none.
    const slow = (svc: string) => b.count[svc] - a.count[svc] - ((b.fast[svc] ?? 0) - (a.fast[svc] ?? 0));
    assert.ok(slow('rag') >= 4, `rag: ${slow('rag')} of ${b.count.rag - a.count.rag} requests slower than 0.25 s`);
    assert.ok(slow('vector-cache') >= 4, `its caller vector-cache: ${slow('vector-cache')} slower than 0.25 s`);
    assert.ok(slow('embedding') < 4, `embedding: ${slow('embedding')} slower than 0.25 s (the fault is not on it)`);
    await waitFor(
      'allocation failures scraped',
      async () => (await prom.query('sum(hopscope_llm_gpu_oom_total{service="llm-vllm"}) >= 4')).length > 0
    );
    assert.ok((await prom.query('sum(vllm:request_success_total{finished_reason="abort"}) >= 4')).length > 0);
    assert.ok(
      (await prom.query('max by (pod) (max_over_time(DCGM_FI_DEV_FB_USED{pod=~"llm-vllm-.*"}[30s])) > 80000')).length >
        0,
      'framebuffer full on the vLLM GPUs'
    );
    assert.equal(
      (await prom.query('max(max_over_time(DCGM_FI_DEV_FB_USED{pod=~"llm-tgi-.*"}[30s])) > 80000')).length,
      0,
      'not on the TGI GPUs'
    );
  });

  it("latency histograms carry trace exemplars of exported traces (gateway, vLLM, client-side TTFT of TGI); TGI's own none", async () => {
    const now = Date.now() / 1000;
    const exemplars = async (
      q: string
    ): Promise<
      Array<{
        seriesLabels: Record<string, string>;
        exemplars: Array<{ labels: Record<string, string>; value: string }>;
      }>
    > => prom.api(`/api/v1/query_exemplars?query=${encodeURIComponent(q)}&start=${now - 600}&end=${now + 60}`);
    const check = async (q: string) => {
      const got = await waitFor(`exemplars of ${q}`, async () => {
        const e = await exemplars(q);
        return e.length ? e : undefined;
      });
      const all = got.flatMap((s) => s.exemplars);
      for (const e of all) assert.match(e.labels.trace_id, /^[0-9a-f]{32}$/);
      await chain.forceFlush();
      const exported = new Set(collector.spans.map((s) => s.traceId));
      const missing = all.filter((e) => !exported.has(e.labels.trace_id));
      assert.deepEqual(missing, [], `every exemplar of ${q} names an exported trace`);
    };
    await check('hopscope_request_duration_seconds_bucket{service="gateway"}');
    await check('vllm:e2e_request_latency_seconds_bucket');
    await check('vllm:time_to_first_token_seconds_bucket');
    await check('gen_ai_client_operation_time_to_first_chunk_seconds_bucket{gen_ai_provider_name="tgi"}');
    assert.deepEqual(
      await exemplars('tgi_request_duration_bucket'),
      [],
      'TGI exposes no exemplars (text format, as TGI)'
    );
    const text = await (await fetch(chain.hops.find((h) => h.hop === 'gateway')!.metricsUrl)).text();
    assert.ok(
      !text.includes('# {') && !text.includes('# EOF'),
      'a plain scrape gets the text format without exemplars'
    );
  });

  it('switches: removing DCGM_FI_PROF_SM_ACTIVE and the lowercase hostname label', async () => {
    const put = (b: unknown) =>
      fetch(`${chain.controlUrl}/config`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(b),
      });
    assert.equal((await put({ dcgmSmActive: false, dcgmHostnameLabel: 'hostname' })).status, 200);
    const text = await (await fetch(chain.dcgm[0].metricsUrl)).text();
    assert.ok(!text.includes('DCGM_FI_PROF_SM_ACTIVE'));
    assert.ok(text.includes('DCGM_FI_PROF_GR_ENGINE_ACTIVE{'));
    assert.match(text, /DCGM_FI_DEV_GPU_UTIL\{[^}]*hostname="gpu-node-0"/);
    assert.ok(!/Hostname=/.test(text));
    assert.equal((await put({ dcgmHostnameLabel: 'HOSTNAME' })).status, 400);
    await put({ dcgmSmActive: true, dcgmHostnameLabel: 'Hostname' });
  });
});
