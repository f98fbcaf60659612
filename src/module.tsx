import './publicPath';

import { AppPlugin, type AppRootProps } from '@grafana/data';
import { initPluginTranslations } from '@grafana/i18n';
import { getTemplateSrv, locationService } from '@grafana/runtime';
import { LoadingPlaceholder } from '@grafana/ui';
import React, { Suspense, lazy } from 'react';

import pluginJson from '../plugin.json';
import { APP_BASE, appPaths } from '../contract/app-urls';
import { ROOT_CAUSE_LINK, rootCausePath, type DashboardVariable } from './extensions/links';
import { prefetchOverview } from './features/overview/prefetch';
import { isOverviewPath } from './features/overview/queries';
import type { AppConfigProps, HopscopeJsonData } from './pages/AppConfig/AppConfig';

// The pages and the config page load on demand, as Grafana's app template does: module.js stays small and Grafana
// fetches the chunks from `public/plugins/hopscope-rca-app/` (see src/publicPath.ts).
let appChunk: Promise<typeof import('./components/App/App')> | undefined;
const loadApp = () => (appChunk ??= import('./components/App/App'));
const LazyApp = lazy(() => loadApp().then((m) => ({ default: m.App })));

// Opened on an app page (Grafana also loads module.js for other reasons, e.g. the config page): fetch the app's chunks
// and, on the Overview, its first data now, while i18n initialises and Grafana renders, instead of one after the other.
startEarly();

function startEarly(): void {
  let location: { pathname: string; search: string };
  try {
    location = locationService.getLocation();
  } catch {
    return;
  }
  const path = location?.pathname ?? '';
  if (path !== APP_BASE && !path.startsWith(`${APP_BASE}/`)) {
    return;
  }
  const app = loadApp();
  app.catch(() => undefined); // a failure shows when the page renders (React.lazy)
  if (isOverviewPath(path)) {
    prefetchOverview(location);
  } else {
    // Another page: its code is in a second chunk, fetched as soon as the first has loaded.
    app.then((m) => m.loadOtherPages()).catch(() => undefined);
  }
}

// As Grafana's app template: set up @grafana/i18n (used by @grafana/scenes) before anything renders. The top-level
// await makes module.js's define() resolve to a Promise, which Grafana awaits.
await initPluginTranslations(pluginJson.id);
const LazyAppConfig = lazy(() => import('./pages/AppConfig/AppConfig').then((m) => ({ default: m.AppConfig })));

function AppRoot(props: AppRootProps<HopscopeJsonData>) {
  return (
    <Suspense fallback={<LoadingPlaceholder text="Loading Hopscope…" />}>
      <LazyApp {...props} />
    </Suspense>
  );
}

function AppConfigRoot(props: AppConfigProps) {
  return (
    <Suspense fallback={<LoadingPlaceholder text="Loading configuration…" />}>
      <LazyAppConfig {...props} />
    </Suspense>
  );
}

/** The dashboard's variables where Grafana renders the panel menu (none elsewhere, or when the service is missing). */
function dashboardVariables(): DashboardVariable[] {
  try {
    return getTemplateSrv().getVariables() as unknown as DashboardVariable[];
  } catch {
    return [];
  }
}

export const plugin = new AppPlugin<HopscopeJsonData>()
  .setRootPage(AppRoot)
  .addConfigPage({
    title: 'Configuration',
    icon: 'cog',
    body: AppConfigRoot,
    id: 'configuration',
  })
  // Links in from Grafana (declared in plugin.json `extensions.addedLinks`): Grafana calls `configure` with each trace
  // view's or panel menu's context, so it stays a few plain functions (src/extensions/links.ts). `path` is required
  // at registration; `configure` always replaces it, or hides the link (undefined) when the context has no trace or range.
  .addLink({
    ...ROOT_CAUSE_LINK,
    targets: [...ROOT_CAUSE_LINK.targets],
    icon: 'search',
    path: appPaths.traces(),
    configure: (context) => {
      const path = rootCausePath(context, dashboardVariables());
      return path ? { path } : undefined;
    },
  });
