/**
 * Bundled for the browser by scenes.test.ts: constructs every page factory and view scene of the app and reports what
 * they declare (URLs, routes, drill-downs, preserved keys, variables, URL state), so the test can assert on it.
 */
import { SceneAppPage, VizPanel, sceneGraph, type SceneObject, type SceneRouteMatch } from '@grafana/scenes';

import { alertsPage } from '../../../../src/features/alerts/alertsPage';
import { comparePage } from '../../../../src/features/compare/comparePage';
import { CompareScene } from '../../../../src/features/compare/CompareScene';
import { explainPage } from '../../../../src/features/explain/explainPage';
import { overviewPage } from '../../../../src/features/overview/overviewPage';
import { servicesPage } from '../../../../src/features/services/servicesPage';
import { tracesPage } from '../../../../src/features/traces/tracesPage';
import { TraceScene } from '../../../../src/features/traces/TraceScene';
import { TraceSearchScene } from '../../../../src/features/traces/TraceSearchScene';
import { InspectDrawer } from '../../../../src/scenes/InspectDrawer';
import { PanelMenu } from '../../../../src/scenes/PanelMenu';
import { PanelNotices } from '../../../../src/scenes/PanelNotices';

interface PageReport {
  url: string;
  routePath: string;
  preserveUrlKeys: string[];
  drilldowns: string[];
  variables: string[];
  timeRange: string;
  body: string;
  controls: string[];
  /** Every VizPanel of the page: `<plugin id>:<key>`, and whether it has the app's menu and notices. */
  panels: string[];
  panelsWithoutChrome: string[];
  behaviors: string[];
  /** The page's scene holds the panel inspector (`?inspect=`). */
  inspector: boolean;
  /** The page's data layers (e.g. fault annotations). */
  layers: string[];
}

const match = (params: Record<string, string>): SceneRouteMatch => ({ params, isExact: true, path: '', url: '' });

function describe(page: SceneAppPage): PageReport {
  const scene = page.getScene(match({}));
  const body = (scene.state.body.state as { children: Array<{ state: { body: SceneObject } }> }).children[0].state.body;
  const panels = sceneGraph.findAllObjects(scene, (o) => o instanceof VizPanel) as VizPanel[];
  const layers = (scene.state.$data?.state as { layers?: SceneObject[] } | undefined)?.layers ?? [];
  return {
    url: page.state.url,
    routePath: page.state.routePath,
    preserveUrlKeys: page.state.preserveUrlKeys ?? [],
    drilldowns: (page.state.drilldowns ?? []).map((d) => d.routePath),
    variables: (scene.state.$variables?.state.variables ?? []).map((v) => v.state.name),
    timeRange: `${scene.state.$timeRange?.state.from}..${scene.state.$timeRange?.state.to}`,
    body: body.constructor.name,
    controls: (scene.state.controls ?? []).map((c) => c.constructor.name),
    panels: panels.map((p) => `${p.state.pluginId}:${p.state.key}`),
    panelsWithoutChrome: panels
      .filter(
        (p) =>
          !(p.state.menu instanceof PanelMenu) ||
          !(Array.isArray(p.state.titleItems) && p.state.titleItems.some((t) => t instanceof PanelNotices))
      )
      .map((p) => String(p.state.key)),
    behaviors: (scene.state.$behaviors ?? []).map((b) =>
      typeof b === 'function' ? b.name || 'function' : b.constructor.name
    ),
    inspector: Boolean(sceneGraph.findObject(scene, (o) => o instanceof InspectDrawer)),
    layers: layers.map((l) => `${l.constructor.name}:${(l.state as { name?: string }).name ?? ''}`),
  };
}

function run(): unknown {
  const pages = {
    overview: overviewPage(),
    services: servicesPage(),
    traces: tracesPage(),
    compare: comparePage(),
    alerts: alertsPage(),
    explain: explainPage(),
  };
  const report: Record<string, unknown> = {};
  for (const [name, page] of Object.entries(pages)) {
    report[name] = describe(page);
  }
  const services = pages.services;
  const service = services.state.drilldowns![0].getPage(match({ service: 'llm%20vllm' }), services) as SceneAppPage;
  const pod = service.state.drilldowns![0].getPage(match({ pod: 'rag-0' }), service) as SceneAppPage;
  const trace = pages.traces.state.drilldowns![0].getPage(
    match({ traceId: 'AB'.repeat(16) }),
    pages.traces
  ) as SceneAppPage;
  report.service = { ...describe(service), parent: service.state.getParentPage?.().state.url };
  report.pod = { ...describe(pod), parent: pod.state.getParentPage?.().state.url };
  report.trace = describe(trace);

  const search = new TraceSearchScene();
  search.updateFromUrl({ service: 'rag', minDurationMs: '2100', status: 'timeout' });
  const searchState = search.getUrlState();
  const bad = new TraceSearchScene();
  bad.updateFromUrl({ minDurationMs: '-1', status: 'nope' });
  const compare = new CompareScene();
  const compareDefault = compare.getUrlState();
  compare.updateFromUrl({ a: 'backend=vllm,model=v1', b: 'backend=vllm,model=v2' });
  const traceScene = new TraceScene('ab'.repeat(16));
  traceScene.updateFromUrl({ span: '00f067aa0ba902b7' });
  const span = traceScene.getUrlState();
  traceScene.updateFromUrl({ answer: 'a1b2c3' });
  report.urlState = {
    search: searchState,
    searchBad: bad.getUrlState(),
    searchKeys: search.urlSync?.getKeys(),
    compareDefault,
    compare: compare.getUrlState(),
    compareKeys: compare.urlSync?.getKeys(),
    span,
    answer: traceScene.getUrlState(),
    spanKeys: traceScene.urlSync?.getKeys(),
  };
  return report;
}

(window as unknown as { __hopscopeScenes: () => unknown }).__hopscopeScenes = run;
