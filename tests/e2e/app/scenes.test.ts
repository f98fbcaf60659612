/**
 * Scene factories and the URL state of the view scenes. @grafana/scenes and @grafana/ui only run in a browser, so the
 * factories are bundled with esbuild and constructed in Chromium (no server, no host): what each page declares
 * (URL, route, drill-downs, preserved keys, variables, controls) and the URL keys each scene object owns round-trip.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';

import { CHROMIUM_PATH, launchBrowser } from '../../support/browser';

const skip = existsSync(CHROMIUM_PATH) ? false : `no Chromium at ${CHROMIUM_PATH}`;
let browser: Browser;
let report: Record<string, any>;

before(async () => {
  if (skip) {
    return;
  }
  const out = await build({
    entryPoints: [join(import.meta.dirname, 'support/scenesEntry.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    loader: { '.css': 'empty', '.svg': 'empty', '.png': 'empty', '.woff2': 'empty' },
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    logLevel: 'silent',
    plugins: [
      {
        // @grafana/scenes imports a table-panel default that @grafana/schema 12.4 no longer exports (webpack only
        // warns); the table panel builder is unused here, so it gets an empty default.
        name: 'missing-table-defaults',
        setup(b) {
          b.onResolve({ filter: /TablePanelCfg_types\.gen$/ }, (args) => ({ path: args.path, namespace: 'stub' }));
          b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
            contents: 'export const defaultOptions = {};',
            loader: 'js',
          }));
        },
      },
    ],
  });
  browser = await launchBrowser();
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // A real origin (served by Playwright itself, no server) so localStorage exists as in Grafana.
  await page.route('http://hopscope.test/**', (r) =>
    r.fulfill({ contentType: 'text/html', body: '<!doctype html><html><head></head><body></body></html>' })
  );
  await page.goto('http://hopscope.test/a/hopscope-rca-app/overview');
  await page.evaluate(
    'window.grafanaBootData = { settings: { buildInfo: {}, featureToggles: {}, datasources: {}, panels: {}, apps: {} }, user: { theme: "dark", timezone: "utc" }, navTree: [] };'
  );
  await page.addScriptTag({ content: out.outputFiles[0].text });
  assert.deepEqual(errors, [], 'the bundle loads without errors');
  report = (await page.evaluate('window.__hopscopeScenes()')) as Record<string, any>;
});

after(async () => {
  await browser?.close();
});

const KEYS = ['from', 'to', 'timezone', 'refresh', 'var-backend', 'var-model', 'var-service', 'var-prometheus'];

test(
  'every page is a SceneAppPage at its route with a URL-synced time range, variables and the export control',
  { skip },
  () => {
    for (const name of ['overview', 'services', 'traces', 'compare', 'alerts']) {
      const p = report[name];
      assert.equal(p.url, `/a/hopscope-rca-app/${name}`);
      assert.equal(p.routePath, `${name}/*`);
      assert.deepEqual(p.preserveUrlKeys, KEYS, `${name} keeps the time range and variables`);
      assert.deepEqual(p.variables, ['backend', 'model', 'service', 'prometheus']);
      assert.equal(p.timeRange, 'now-1h..now');
      assert.ok(p.controls.includes('ExportButton'), `${name} has the export button`);
    }
    for (const name of ['overview', 'services', 'traces', 'compare', 'alerts', 'service', 'pod', 'trace']) {
      const p = report[name];
      assert.deepEqual(p.behaviors, ['CursorSync'], `${name}: one crosshair for its panels`);
      assert.equal(p.inspector, true, `${name} opens its panels in the inspector`);
      assert.deepEqual(p.panelsWithoutChrome, [], `${name}: every panel has the app's menu and notices`);
    }
    assert.ok(report.overview.controls.includes('VariableValueSelectors'));
    assert.ok(!report.compare.controls.includes('VariableValueSelectors'), 'compare has its own A/B selectors');
  }
);

test(
  'the Overview is Grafana panels on the data source: the latest golden values, a time series per metric, the GPU heatmap, the services P99 bars; faults as annotations',
  { skip },
  () => {
    const metrics = ['rps', 'output_tokens_per_s', 'e2e_p99_s', 'ttft_p99_s', 'kv_cache_hit_rate', 'error_rate'];
    assert.deepEqual(report.overview.panels, [
      'stat:golden-latest',
      ...metrics.map((m) => `timeseries:timeseries-${m}`),
      'heatmap:gpu-heatmap',
      'bargauge:overview-services',
    ]);
    assert.ok(
      report.overview.layers.includes('AnnotationsDataLayer:Faults'),
      'the faults are annotations on its charts'
    );
  }
);

test(
  'Explain this window: its own page and link (the range in the URL), the window answer, LLM phases and the slowest traces as panels',
  { skip },
  () => {
    const p = report.explain;
    assert.equal(p.url, '/a/hopscope-rca-app/explain');
    assert.equal(p.routePath, 'explain/*');
    assert.deepEqual(p.preserveUrlKeys, KEYS, 'the time range is in its link');
    assert.ok(p.controls.includes('ExportButton'), 'it exports for the postmortem');
    assert.ok(!p.controls.includes('VariableValueSelectors'));
    assert.deepEqual(p.panels, [
      'table:window-rca',
      'table:llm-phases',
      'table:llm-engine-state',
      'table:window-traces',
    ]);
    assert.deepEqual(p.panelsWithoutChrome, []);
    assert.equal(p.inspector, true);
  }
);

test(
  'drill-downs: services/:service → pods/:pod and traces/:traceId, each a URL with its parent for breadcrumbs',
  { skip },
  () => {
    assert.deepEqual(report.services.drilldowns, [':service/*']);
    assert.deepEqual(report.traces.drilldowns, [':traceId/*']);
    assert.equal(report.service.url, '/a/hopscope-rca-app/services/llm%20vllm');
    assert.deepEqual(report.service.panels, ['table:pods', 'table:service-traces']);
    assert.deepEqual(report.service.drilldowns, ['pods/:pod/*']);
    assert.equal(report.service.parent, '/a/hopscope-rca-app/services');
    assert.equal(report.pod.url, '/a/hopscope-rca-app/services/llm%20vllm/pods/rag-0');
    assert.deepEqual(report.pod.panels, [
      'hopscope-kernel-lanes:kernel-evidence',
      'histogram:tls-histogram',
      'table:kernel-events',
      'table:pod-traces',
    ]);
    assert.equal(report.pod.parent, report.service.url);
    assert.equal(
      report.trace.url,
      `/a/hopscope-rca-app/traces/${'ab'.repeat(16)}`,
      'trace ids are normalised to lower case'
    );
    assert.deepEqual(report.trace.panels, [
      'table:rca',
      'table:llm-phases',
      'table:llm-engine-state',
      'hopscope-trace-icicle:trace-tree',
      'hopscope-kernel-lanes:trace-kernel',
    ]);
    assert.deepEqual(report.services.panels, ['table:services']);
    assert.deepEqual(report.compare.panels, [
      'table:compare-stats',
      'histogram:compare-histogram',
      'timeseries:compare-latency',
      'state-timeline:compare-hot-zones',
    ]);
    assert.deepEqual(report.alerts.panels, ['table:alerts', 'table:alert-history']);
    assert.deepEqual(report.traces.panels, ['table:trace-list']);
    assert.deepEqual(report.pod.preserveUrlKeys, KEYS);
  }
);

test('scene objects declare their URL keys and round-trip their state', { skip }, () => {
  const u = report.urlState;
  assert.deepEqual(u.searchKeys, ['service', 'minDurationMs', 'status']);
  assert.deepEqual(u.search, { service: 'rag', minDurationMs: '2100', status: 'timeout' });
  assert.deepEqual(u.searchBad, { service: undefined, minDurationMs: undefined, status: undefined });
  assert.deepEqual(u.compareKeys, ['a', 'b']);
  assert.deepEqual(u.compareDefault, { a: 'backend=vllm', b: 'backend=tgi' });
  assert.deepEqual(u.compare, { a: 'backend=vllm,model=v1', b: 'backend=vllm,model=v2' });
  assert.deepEqual(u.spanKeys, ['span', 'answer']);
  assert.deepEqual(u.span, { span: '00f067aa0ba902b7', answer: undefined });
  assert.deepEqual(u.answer, { span: '00f067aa0ba902b7', answer: 'a1b2c3' }, 'a saved answer is URL state');
});
