import './publicPath';

import { AppPlugin, type AppRootProps } from '@grafana/data';
import { initPluginTranslations } from '@grafana/i18n';
import { LoadingPlaceholder } from '@grafana/ui';
import React, { Suspense, lazy } from 'react';

import pluginJson from '../plugin.json';
import type { AppConfigProps, HopscopeJsonData } from './pages/AppConfig/AppConfig';

// As Grafana's app template: set up @grafana/i18n (used by @grafana/scenes) before anything renders. The top-level
// await makes module.js's define() resolve to a Promise, which Grafana awaits.
await initPluginTranslations(pluginJson.id);

// The pages and the config page load on demand, as Grafana's app template does: module.js stays small and Grafana
// fetches the chunks from `public/plugins/hopscope-rca-app/` (see src/publicPath.ts).
const LazyApp = lazy(() => import('./components/App/App').then((m) => ({ default: m.App })));
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

export const plugin = new AppPlugin<HopscopeJsonData>().setRootPage(AppRoot).addConfigPage({
  title: 'Configuration',
  icon: 'cog',
  body: AppConfigRoot,
  id: 'configuration',
});
