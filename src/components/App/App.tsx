import type { AppRootProps } from '@grafana/data';
import { SceneApp, useSceneApp } from '@grafana/scenes';
import React from 'react';
import { Navigate, Route, Routes } from 'react-router-dom';

import { ROUTES } from '../../constants';
import { alertsPage } from '../../pages/Alerts/alertsPage';
import { comparePage } from '../../pages/Compare/comparePage';
import { overviewPage } from '../../pages/Overview/overviewPage';
import { servicesPage } from '../../pages/Services/servicesPage';
import { tracesPage } from '../../pages/Traces/tracesPage';

/** The whole app as one SceneApp: one SceneAppPage per route of plugin.json. Built once (useSceneApp caches it). */
function buildApp(): SceneApp {
  return new SceneApp({
    name: 'hopscope',
    pages: [overviewPage(), servicesPage(), tracesPage(), comparePage(), alertsPage()],
    urlSyncOptions: { updateUrlOnInit: true, createBrowserHistorySteps: true },
  });
}

function HopscopeScenes() {
  const app = useSceneApp(buildApp);
  return <app.Component model={app} />;
}

/** The app root Grafana renders under `/a/hopscope-rca-app/*`; the bare app URL opens the Overview. */
export function App(_props: AppRootProps) {
  return (
    <Routes>
      <Route index element={<Navigate to={ROUTES.Overview} replace />} />
      <Route path="*" element={<HopscopeScenes />} />
    </Routes>
  );
}
