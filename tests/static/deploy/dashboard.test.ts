/**
 * The golden dashboard (src/dashboards/hopscope-golden.json, bundled with the plugin and provisioned from it; the
 * provisioning/dashboards/ entry links to the same file): valid JSON, unique ids, every panel on the Prometheus
 * datasource variable, every PromQL expression parsed by promtool, only metric names that the real vLLM, TGI and
 * DCGM exporters expose (fixture catalogs), the simulated chain or — in the kernel row — Hopscope's eBPF exporter
 * registers, exemplars where the series carry them, and data links that open existing app pages.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_URL_KEYS, VIEW_URL_KEYS } from '../../../contract/app-urls';
import { goldenQueries, substituteForPrometheus } from './golden-queries';
import { fixtures, readJson, repo, which, type Doc } from './support';
import { readdirSync } from 'node:fs';

/** All TypeScript under a folder, concatenated (to look for metric names the code registers). */
function sourcesUnder(dir: string): string {
  return readdirSync(repo(dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

const dash = readJson('src', 'dashboards', 'hopscope-golden.json');
const panels: Doc[] = dash.panels.flatMap((p: Doc) => [p, ...(p.panels ?? [])]);
/** The row a panel sits in: the last row above it (rows and panels laid out top to bottom). */
const rowOf = (panel: Doc): Doc | undefined =>
  dash.panels
    .filter((r: Doc) => r.type === 'row' && (r.panels?.includes(panel) || r.gridPos.y < panel.gridPos.y))
    .sort((a: Doc, b: Doc) => b.gridPos.y - a.gridPos.y)[0];
const inKernelRow = (panel: Doc): boolean => /^Kernel\b/.test(rowOf(panel)?.title ?? '');
const dataPanels = panels.filter((p) => p.type !== 'row' && p.type !== 'text');
const targets: Array<{ panel: Doc; target: Doc }> = dataPanels.flatMap((panel) =>
  (panel.targets ?? []).map((target: Doc) => ({ panel, target }))
);
const exprs = targets.map(({ target }) => target.expr as string);
const variables: Doc[] = dash.templating.list;

/** Runs `promtool check rules` on the expressions (each wrapped as a recording rule); returns its complaint or ''. */
function promtoolErrors(list: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-promql-'));
  try {
    const rules = list
      .map((e, i) => `      - record: hopscope:check_${i}\n        expr: ${JSON.stringify(substituteForPrometheus(e))}`)
      .join('\n');
    const file = join(dir, 'rules.yml');
    writeFileSync(file, `groups:\n  - name: golden-dashboard\n    rules:\n${rules}\n`);
    try {
      execFileSync('promtool', ['check', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
      return '';
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || 'promtool failed';
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Metric names each real exporter exposes, from the fixture catalogs (histograms also as _bucket/_sum/_count). */
function catalog(): Set<string> {
  const names = new Set<string>();
  const add = (name: string, type: string): void => {
    names.add(name);
    if (/histogram/.test(type)) for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (/summary/i.test(type)) for (const s of ['_sum', '_count']) names.add(name + s);
  };
  for (const file of [
    fixtures('metrics', 'vllm', 'metrics-catalog.tsv'),
    fixtures('metrics', 'tgi', 'metric-catalog-from-source.tsv'),
  ]) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const [name, type] = line.split('\t');
      if (/^(vllm:|tgi_)[a-z0-9_:]+$/.test(name)) add(name, type ?? '');
    }
  }
  // DCGM: fields listed in the exporter's CSVs, including the ones the default CSV ships commented out (SM_ACTIVE).
  for (const f of ['default-counters.csv', 'dcp-metrics-included.csv']) {
    for (const m of readFileSync(fixtures('metrics', 'dcgm', f), 'utf8').matchAll(/^#?\s*(DCGM_FI_[A-Z0-9_]+)\s*,/gm))
      names.add(m[1]);
  }
  return names;
}

/** Metric names of an expression: label lists (`by (…)`, `on (…)`) and matchers (`{…}`) removed first. */
const metricNames = (expr: string): string[] => {
  const bare = expr
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\{[^}]*\}/g, ' ');
  return [
    ...bare.matchAll(/\b(vllm:[a-z0-9_:]+|tgi_[a-z0-9_]+|DCGM_FI_[A-Z0-9_]+|gen_ai_[a-z0-9_]+|hopscope_[a-z0-9_]+)/g),
  ].map((m) => m[1]);
};
const exporterMetric = (m: string): boolean => /^(vllm:|tgi_|DCGM_FI_)/.test(m);

/** Every link of the dashboard: dashboard links, panel links, field links and override links. */
function allLinks(): Array<{ where: string; url: string }> {
  const out = dash.links.map((l: Doc) => ({ where: `dashboard link ${l.title}`, url: l.url }));
  for (const p of dataPanels) {
    for (const l of p.links ?? []) out.push({ where: `${p.title}: panel link`, url: l.url });
    for (const l of p.fieldConfig?.defaults?.links ?? []) out.push({ where: `${p.title}: field link`, url: l.url });
    for (const o of p.fieldConfig?.overrides ?? []) {
      for (const prop of o.properties ?? [])
        if (prop.id === 'links')
          for (const l of prop.value) out.push({ where: `${p.title}: ${o.matcher.options} link`, url: l.url });
    }
  }
  return out;
}

/** The app's pages (DESIGN.md names) as path patterns under /a/hopscope-rca-app/. */
const APP_PAGES = [
  /^overview$/,
  /^services$/,
  /^services\/[^/]+$/,
  /^services\/[^/]+\/pods\/[^/]+$/,
  /^traces$/,
  /^traces\/[^/]+$/,
  /^compare$/,
  /^alerts$/,
];

describe('golden dashboard template', () => {
  it('is a classic dashboard with a fixed uid and unique panel ids', () => {
    assert.equal(dash.uid, 'hopscope-golden');
    assert.ok(dash.uid.length <= 40, 'Grafana uids are at most 40 characters');
    assert.ok(dash.schemaVersion >= 36);
    const ids = panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    const refs = dataPanels.map((p) => (p.targets ?? []).map((t: Doc) => t.refId));
    for (const r of refs) assert.equal(new Set(r).size, r.length, 'refIds are unique within a panel');
  });

  it('uses only core panel types', () => {
    for (const p of panels)
      assert.ok(
        ['row', 'timeseries', 'stat', 'heatmap', 'text', 'table', 'bargauge', 'gauge'].includes(p.type),
        `${p.title}: ${p.type}`
      );
  });

  it('has a Prometheus datasource variable, and every panel and query uses it', () => {
    const ds = variables.find((v) => v.type === 'datasource');
    assert.ok(ds);
    assert.equal(ds.query, 'prometheus');
    const ref = `\${${ds.name}}`;
    assert.ok(dataPanels.length >= 7);
    for (const p of dataPanels) {
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: ref }, `${p.title}: panel datasource`);
      for (const t of p.targets)
        assert.deepEqual(t.datasource, { type: 'prometheus', uid: ref }, `${p.title} ${t.refId}: query datasource`);
    }
    for (const v of variables.filter((x) => x.type === 'query'))
      assert.equal(v.datasource.uid, ref, `variable ${v.name}`);
  });

  it('every PromQL expression parses (promtool check rules)', (t) => {
    if (!which('promtool')) return t.skip('promtool not installed (Debian package prometheus)');
    assert.ok(exprs.length >= 10);
    assert.deepEqual(
      goldenQueries().map((q) => q.expr),
      exprs,
      "the shared query list is this dashboard's"
    );
    assert.equal(promtoolErrors(exprs), '');
    // The same check fails on a broken expression, so a pass above means something.
    assert.match(
      promtoolErrors(['sum(rate(vllm:generation_tokens_total[$__rate_interval])']),
      /parse error|could not parse/
    );
  });

  it('names only metrics the real vLLM, TGI and DCGM exporters expose', (t) => {
    if (!existsSync(fixtures('metrics')))
      return t.skip('fixtures not found beside the repository (../shared/fixtures)');
    const known = catalog();
    assert.ok(!known.has('vllm:invented_metric'));
    for (const e of exprs)
      for (const m of metricNames(e).filter(exporterMetric)) assert.ok(known.has(m), `${m} is in the fixture catalogs`);
    assert.deepEqual(
      metricNames('sum by (gen_ai_provider_name) (rate(x_total{hopscope_y="1"}[1m]))'),
      [],
      'labels are not taken for metrics'
    );
  });

  it('names GenAI client metrics as the OpenTelemetry semantic conventions define them (Prometheus form)', (t) => {
    if (!existsSync(fixtures('semconv-genai')))
      return t.skip('fixtures not found beside the repository (../shared/fixtures)');
    const model = readFileSync(fixtures('semconv-genai', 'model', 'gen-ai', 'metrics.yaml'), 'utf8');
    const defined = new Set([...model.matchAll(/metric_name:\s*(gen_ai\.[a-z0-9_.]+)/g)].map((m) => m[1]));
    const used = [...new Set(exprs.flatMap(metricNames).filter((m) => m.startsWith('gen_ai_')))];
    assert.ok(used.length > 0);
    for (const m of used) {
      // Prometheus form of an OTel histogram in seconds: dots → underscores, unit suffix, then _bucket/_sum/_count.
      const base = m.replace(/_(bucket|sum|count)$/, '').replace(/_seconds$/, '');
      assert.ok(
        [...defined].some((d) => d.replaceAll('.', '_') === base),
        `${m} ← a gen_ai.* metric of the semantic conventions`
      );
    }
  });

  it("is one file: bundled from src/dashboards/, named by plugin.json, provisioning links to it; a revision for Grafana's re-import", () => {
    assert.equal(
      realpathSync(repo('provisioning', 'dashboards', 'hopscope-golden.json')),
      realpathSync(repo('src', 'dashboards', 'hopscope-golden.json'))
    );
    const plugin = readJson('plugin.json');
    assert.deepEqual(
      plugin.includes.filter((i: Doc) => i.type === 'dashboard').map((i: Doc) => i.path),
      ['dashboards/hopscope-golden.json']
    );
    assert.ok(
      Number.isInteger(dash.revision) && dash.revision >= 1,
      'Grafana updates an imported plugin dashboard when its revision changes'
    );
  });

  it('queries only metric families the simulated chain registers, so the demo fills every panel (the kernel row: the eBPF exporter)', () => {
    const chainSources = sourcesUnder('loadgen/src');
    const chainExprs = targets.filter(({ panel }) => !inKernelRow(panel)).map(({ target }) => target.expr as string);
    for (const m of new Set(chainExprs.flatMap(metricNames))) {
      const family = m.replace(/_(bucket|sum|count)$/, '');
      assert.ok(
        chainSources.includes(`'${m}'`) || chainSources.includes(`'${family}'`),
        `${m} is registered somewhere under loadgen/src`
      );
    }
  });

  it("has a kernel row of the eBPF exporter's signals, by pod, each metric one the exporter's code registers", () => {
    const kernel = dataPanels.filter(inKernelRow);
    const exporterSources = sourcesUnder('bpf-exporter/src');
    const registered = (family: string): boolean => exporterSources.includes(`name: '${family}'`);
    assert.ok(!registered('hopscope_tcp_invented_total'), 'the check can fail');
    const used = new Set(kernel.flatMap((p) => p.targets.flatMap((t: Doc) => metricNames(t.expr))));
    for (const m of used)
      assert.ok(registered(m.replace(/_(bucket|sum|count)$/, '')), `${m} is registered under bpf-exporter/src`);
    // TCP retransmits, connect latency, TLS handshake latency, GPU allocation failures, events over the budget.
    for (const family of [
      'hopscope_tcp_retransmits_total',
      'hopscope_tcp_connect_seconds',
      'hopscope_tls_handshake_seconds',
      'hopscope_gpu_alloc_failures_total',
      'hopscope_bpf_events_suppressed_total',
    ]) {
      assert.ok(
        [...used].some((m) => m.startsWith(family)),
        `the kernel row shows ${family}`
      );
    }
    for (const p of kernel) {
      for (const t of p.targets.filter((x: Doc) => !/hopscope_bpf_/.test(x.expr)))
        assert.match(t.expr, /\bby \([^)]*\bpod\b/, `${p.title} ${t.refId}: by pod`);
    }
    assert.ok(
      kernel.every((p) => p.links?.length),
      'each kernel panel links into the app'
    );
  });

  it('asks for exemplars exactly on the latency histograms whose series carry trace ids (the chain registers them with exemplars)', () => {
    const chainSources = sourcesUnder('loadgen/src');
    /** Whether the chain's histogram `family` is created with exemplars (`enableExemplars: true`, or vLLM's `h(…, true)`). */
    const withExemplars = (family: string): boolean => {
      const at = chainSources.indexOf(`'${family}'`);
      const call = at < 0 ? '' : chainSources.slice(at, chainSources.indexOf(');', at) + 2);
      return /enableExemplars: true|,\s*true\);$/.test(call);
    };
    assert.equal(withExemplars('vllm:e2e_request_latency_seconds'), true, "the check sees vLLM's h(…, true)");
    assert.equal(withExemplars('tgi_request_duration'), false, 'TGI has no exemplars');
    const flagged = targets.filter(({ target }) => target.exemplar === true);
    assert.ok(flagged.length >= 3);
    for (const { panel, target } of targets) {
      const families = metricNames(target.expr)
        .filter((m) => m.endsWith('_bucket'))
        .map((m) => m.replace(/_bucket$/, ''));
      const carries = families.length > 0 && families.every(withExemplars);
      assert.equal(
        target.exemplar === true,
        carries,
        `${panel.title} ${target.refId}: exemplar ${target.exemplar === true} (${families.join(', ') || 'no histogram'})`
      );
    }
    // TGI's latency comes with the gateway's client-side time to first chunk, which does carry trace ids.
    assert.ok(flagged.some(({ target }) => /gen_ai_client_operation_time_to_first_chunk_seconds/.test(target.expr)));
  });

  it('covers the golden metrics for vLLM and TGI, and the GPU heatmap with the DCGM fallback chain', () => {
    const all = exprs.join('\n');
    for (const m of [
      'vllm:request_success_total',
      'vllm:generation_tokens_total',
      'vllm:e2e_request_latency_seconds_bucket',
      'vllm:time_to_first_token_seconds_bucket',
      'vllm:prefix_cache_hits_total',
      'vllm:prefix_cache_queries_total',
      'tgi_request_success',
      'tgi_request_generated_tokens_sum',
      'tgi_request_duration_bucket',
      'tgi_request_failure',
    ]) {
      assert.ok(all.includes(m), `uses ${m}`);
    }
    const heat = dataPanels.filter((p) => p.type === 'heatmap');
    assert.equal(heat.length, 1);
    assert.match(heat[0].title, /per GPU/i, 'says honestly that rows are GPUs, not SMs');
    const e = heat[0].targets[0].expr as string;
    const order = ['DCGM_FI_PROF_SM_ACTIVE', 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'DCGM_FI_DEV_GPU_UTIL'].map((m) =>
      e.indexOf(m)
    );
    assert.ok(
      order.every((i) => i >= 0) && order[0] < order[1] && order[1] < order[2],
      'SM_ACTIVE → GR_ENGINE_ACTIVE → GPU_UTIL'
    );
    assert.match(heat[0].targets[0].legendFormat, /\{\{Hostname\}\}/);
    assert.match(heat[0].targets[0].legendFormat, /\{\{hostname\}\}/);
  });

  it('keeps TGI queries true to TGI: no model label, no _total suffix', () => {
    for (const e of exprs.filter((x) => x.includes('tgi_'))) {
      assert.doesNotMatch(e, /tgi_[a-z_]+_total/, e);
      assert.doesNotMatch(e, /model_name/, e);
    }
  });

  it('links into existing app pages, carrying the time range and only the variables the app reads', () => {
    // The keys the app reads: those every link carries, and each view's own (contract/app-urls.ts, the one URL scheme).
    const appKeys = new Set<string>([...APP_URL_KEYS, ...Object.values(VIEW_URL_KEYS).flat()]);
    const links = allLinks();
    assert.ok(links.length >= 10);
    for (const { where, url } of links) {
      const m = /^\/a\/hopscope-rca-app\/([^?]*)(?:\?(.*))?$/.exec(url);
      assert.ok(m, `${where}: ${url} opens the app`);
      assert.ok(
        APP_PAGES.some((re) => re.test(m[1])),
        `${where}: ${m[1]} is an app page`
      );
      for (const part of (m[2] ?? '').split('&').filter(Boolean)) {
        if (/^\$\{__url_time_range\}$|^\$\{\w+:queryparam\}$/.test(part)) continue;
        const key = part.split('=')[0];
        assert.ok(appKeys.has(key), `${where}: query key ${key} is read by the app`);
      }
      const panelLink = !where.startsWith('dashboard link');
      if (panelLink) assert.match(url, /\$\{__url_time_range\}/, `${where}: keeps the time range`);
    }
    for (const l of dash.links) assert.equal(l.keepTime, true, `${l.title}: keeps the time range`);
    // Every golden panel offers a way into the app.
    for (const p of dataPanels) {
      const n =
        (p.links ?? []).length +
        (p.fieldConfig?.overrides ?? []).filter((o: Doc) => o.properties.some((x: Doc) => x.id === 'links')).length;
      assert.ok(n > 0, `${p.title} links into the app`);
    }
  });

  it('variables named in links exist (var-model ↔ $model)', () => {
    const names = new Set(variables.map((v) => v.name));
    for (const { url } of allLinks())
      for (const m of url.matchAll(/\$\{(\w+):queryparam\}/g)) assert.ok(names.has(m[1]), m[1]);
    assert.ok(names.has('model'));
  });
});
