import type { AppRootProps } from '@grafana/data';
import { SceneApp, useSceneApp } from '@grafana/scenes';
import { LoadingPlaceholder } from '@grafana/ui';
import React, { Suspense, lazy } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router-dom';

import { appPaths } from '../../../contract/app-urls';
import { registerHopscopeDataSource } from '../../datasource/register';
import { registerVariableValuesDataSource } from '../../datasource/variables';
import { isOverviewPath } from '../../features/overview/queries';
import { overviewPage } from '../../features/overview/overviewPage';
import { loadOtherPages } from './lazyPages';
import { setAppSettings, type HopscopeJsonData } from '../../settings';
import { SCENE_APP_URL_SYNC } from './sceneAppOptions';

// Every panel queries the proxy through this data source; registered once, before any page's scene runs a query.
// The other pages' query kinds come with those pages' chunk.
registerHopscopeDataSource(() => loadOtherPages().then((m) => m.OTHER_KINDS));
// The values the service and model variables offer (their own small data source: Grafana's variable query API).
registerVariableValuesDataSource();

/**
 * The Overview, the page the app opens on, as its own SceneApp: this chunk holds only what it draws. The other pages
 * (Services, Traces, Compare, Alerts: their scenes, d3-hierarchy, the icicle…) are a second SceneApp in a lazy chunk
 * (OtherPages.tsx), fetched when one of them is opened or once the Overview is ready. Each page has its own time
 * range and variables in the URL, so two SceneApps behave as one. Built once (useSceneApp caches it).
 */
function buildOverviewApp(): SceneApp {
  return new SceneApp({ name: 'hopscope-overview', pages: [overviewPage()], urlSyncOptions: SCENE_APP_URL_SYNC });
}

function OverviewScenes() {
  const app = useSceneApp(buildOverviewApp);
  return <app.Component model={app} />;
}

const LazyOtherPages = lazy(() => loadOtherPages().then((m) => ({ default: m.OtherPages })));

function HopscopeScenes() {
  const { pathname } = useLocation();
  return isOverviewPath(pathname) ? (
    <OverviewScenes />
  ) : (
    <Suspense fallback={<LoadingPlaceholder text="Loading…" />}>
      <LazyOtherPages />
    </Suspense>
  );
}

/** The app root Grafana renders under `/a/hopscope-rca-app/*`; the bare app URL opens the Overview. */
export function App({ meta }: AppRootProps<HopscopeJsonData>) {
  setAppSettings(meta.jsonData);
  return (
    <Routes>
      <Route index element={<Navigate to={appPaths.overview()} replace />} />
      <Route path="*" element={<HopscopeScenes />} />
    </Routes>
  );
}

/** For module.js: opened on another page than the Overview, its chunk is fetched right after this one. */
export { loadOtherPages };
