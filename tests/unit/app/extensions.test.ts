/**
 * "Root cause in Hopscope" (src/extensions/links.ts), against the contexts Grafana 12.4 passes to a link's
 * `configure`: the trace view header's `{ ...trace, datasource }` (TracePageHeader, times in microseconds) and the
 * dashboard panel menu's PluginExtensionPanelContext (PanelMenuBehavior's createExtensionContext: a raw time range of
 * strings or DateTimes, the panel's targets, repeat variables as scopedVars). And plugin.json declares the link as
 * module.tsx registers it (Grafana refuses undeclared links).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import moment from 'moment';

import { pathToFileURL } from 'node:url';

import {
  panelMenuPath,
  ROOT_CAUSE_LINK,
  rootCausePath,
  TRACE_PAD_MS,
  traceViewPath,
} from '../../../src/extensions/links';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** A Trace as Grafana's trace view builds it (transformTraceData): µs times, spans, processes, services. */
const traceContext = (over: Record<string, unknown> = {}) => ({
  traceID: TRACE,
  traceName: 'gateway: POST /v1/chat/completions',
  startTime: 1_760_000_000_000_000,
  endTime: 1_760_000_004_250_000,
  duration: 4_250_000,
  spans: [],
  processes: {},
  services: [{ name: 'gateway', numberOfSpans: 12 }],
  datasource: { name: 'Tempo', uid: 'hopscope-tempo', type: 'tempo' },
  ...over,
});

/** PluginExtensionPanelContext of a dashboard time series panel. */
const panelContext = (over: Record<string, unknown> = {}) => ({
  pluginId: 'timeseries',
  id: 4,
  title: 'End-to-end latency P99',
  timeRange: { from: 'now-6h', to: 'now' },
  timeZone: 'browser',
  dashboard: { uid: 'hopscope-golden', title: 'Hopscope — golden metrics', tags: ['hopscope'] },
  targets: [
    { refId: 'A', datasource: { type: 'prometheus', uid: '${datasource}' }, expr: 'histogram_quantile(0.99, …)' },
  ],
  scopedVars: {},
  ...over,
});

const query = (path: string) => Object.fromEntries(new URL(path, 'http://grafana').searchParams);

describe('Root cause in Hopscope: the trace view (grafana/traceview/header/actions)', () => {
  it('opens the trace page of that trace, the range its µs times ± the pad, in ms', () => {
    const path = traceViewPath(traceContext())!;
    assert.equal(path.split('?')[0], `/a/hopscope-rca-app/traces/${TRACE}`);
    assert.deepEqual(query(path), {
      from: String(1_760_000_000_000 - TRACE_PAD_MS),
      to: String(1_760_000_004_250 + TRACE_PAD_MS),
    });
    assert.ok(path.startsWith('/a/hopscope-rca-app/'), "Grafana's isLinkPathValid: under the app's own path");
  });

  it('upper-case ids are the same trace; without endTime the duration gives the end', () => {
    const path = traceViewPath(traceContext({ traceID: TRACE.toUpperCase(), endTime: undefined }))!;
    assert.match(path, new RegExp(`/traces/${TRACE}\\?`));
    assert.equal(query(path).to, String(1_760_000_004_250 + TRACE_PAD_MS));
  });

  it('hides itself (undefined) for a trace id that is no trace id', () => {
    assert.equal(traceViewPath(traceContext({ traceID: 'not-a-trace' })), undefined);
    assert.equal(traceViewPath(traceContext({ traceID: '' })), undefined);
    assert.equal(rootCausePath(undefined), undefined, 'no context (the trace view before its trace loaded)');
  });
});

describe('Root cause in Hopscope: a dashboard panel menu (grafana/dashboard/panel/menu)', () => {
  it("opens the Overview on the panel's relative range", () => {
    const path = panelMenuPath(panelContext())!;
    assert.equal(path, '/a/hopscope-rca-app/overview?from=now-6h&to=now');
  });

  it('an absolute range (DateTimes, as a zoomed dashboard passes) becomes epoch ms', () => {
    // Grafana's DateTime is a moment.
    const from = moment(1_760_000_000_000);
    const to = moment(1_760_000_600_000);
    assert.deepEqual(query(rootCausePath(panelContext({ timeRange: { from, to } }))!), {
      from: '1760000000000',
      to: '1760000600000',
    });
  });

  it("carries the dashboard's service and model when each has one value; All, several or unresolved values are left out", () => {
    const vars = [
      { name: 'service', current: { value: 'rag' } },
      { name: 'model', current: { value: ['llama-3-8b'] } },
      { name: 'datasource', current: { value: 'hopscope-prometheus' } },
    ];
    assert.deepEqual(query(panelMenuPath(panelContext(), vars)!), {
      from: 'now-6h',
      to: 'now',
      'var-service': 'rag',
      'var-model': 'llama-3-8b',
    });
    const all = [
      { name: 'model', current: { value: ['$__all'] } },
      { name: 'service', current: { value: ['a', 'b'] } },
    ];
    assert.deepEqual(query(panelMenuPath(panelContext(), all)!), { from: 'now-6h', to: 'now' });
    assert.deepEqual(query(panelMenuPath(panelContext(), [{ name: 'service', current: { value: '$service' } }])!), {
      from: 'now-6h',
      to: 'now',
    });
  });

  it("a repeated panel's own value (scopedVars) wins over the dashboard's", () => {
    const path = panelMenuPath(panelContext({ scopedVars: { service: { value: 'embedding', text: 'embedding' } } }), [
      { name: 'service', current: { value: '$__all' } },
    ])!;
    assert.equal(query(path)['var-service'], 'embedding');
  });

  it('a trace panel showing one trace opens that trace on the panel range', () => {
    const c = panelContext({
      pluginId: 'traces',
      targets: [
        { refId: 'A', datasource: { type: 'tempo', uid: 't' }, queryType: 'traceql', query: TRACE.toUpperCase() },
      ],
    });
    assert.equal(rootCausePath(c), `/a/hopscope-rca-app/traces/${TRACE}?from=now-6h&to=now`);
    const search = panelContext({ pluginId: 'traces', targets: [{ refId: 'A', query: '{ status = error }' }] });
    assert.match(rootCausePath(search)!, /^\/a\/hopscope-rca-app\/overview\?/, 'a TraceQL search is no one trace');
  });

  it('hides itself without a usable time range', () => {
    assert.equal(panelMenuPath(panelContext({ timeRange: { from: '', to: 'now' } })), undefined);
    assert.equal(panelMenuPath(panelContext({ timeRange: { from: moment(NaN), to: 'now' } })), undefined);
  });
});

describe('plugin.json declares the link module.tsx registers', () => {
  const root = join(import.meta.dirname, '..', '..', '..');
  const plugin = JSON.parse(readFileSync(join(root, 'plugin.json'), 'utf8'));
  // @grafana/data's entry needs a browser; its extension ids are one plain module of the package, read as such.
  let PluginExtensionPoints: Record<string, string>;
  let PluginExtensionExposedComponents: Record<string, string>;
  before(async () => {
    ({ PluginExtensionPoints, PluginExtensionExposedComponents } = await import(
      pathToFileURL(join(root, 'node_modules/@grafana/data/dist/esm/types/pluginExtensions.mjs')).href
    ));
  });

  it('same title, description and targets in extensions.addedLinks', () => {
    const declared = plugin.extensions.addedLinks as Array<{ title: string; description: string; targets: string[] }>;
    assert.deepEqual(declared, [
      { title: ROOT_CAUSE_LINK.title, description: ROOT_CAUSE_LINK.description, targets: [...ROOT_CAUSE_LINK.targets] },
    ]);
  });

  it('the targets are extension points Grafana 12.4 defines (PluginExtensionPoints)', () => {
    for (const t of ROOT_CAUSE_LINK.targets) {
      assert.ok(Object.values(PluginExtensionPoints).includes(t), t);
    }
  });

  it('the exposed components the panel menu uses are declared as dependencies, by the ids Grafana exposes', () => {
    assert.deepEqual(plugin.dependencies.extensions.exposedComponents, [
      PluginExtensionExposedComponents.AddToDashboardFormV1,
      PluginExtensionExposedComponents.CreateAlertFromPanelV1,
    ]);
  });
});
