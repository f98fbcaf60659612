import { SceneApp, useSceneApp } from '@grafana/scenes';
import React from 'react';

import { alertsPage } from '../../features/alerts/alertsPage';
import { comparePage } from '../../features/compare/comparePage';
import { explainPage } from '../../features/explain/explainPage';
import { runsPage } from '../../features/runs/runsPage';
import { servicesPage } from '../../features/services/servicesPage';
import { tracesPage } from '../../features/traces/tracesPage';
import { registerHopscopePanels } from '../../panels/register';
import { SCENE_APP_URL_SYNC } from './sceneAppOptions';

// The app's own visualisations (kernel lanes, trace icicle), before these pages' scenes render.
registerHopscopePanels();

/** Services, Traces, Compare, Alerts, Runs and Explain this window: one SceneApp in its own chunk (see App.tsx), unknown app URLs included. */
function buildOtherPagesApp(): SceneApp {
  return new SceneApp({
    name: 'hopscope',
    pages: [servicesPage(), tracesPage(), comparePage(), alertsPage(), runsPage(), explainPage()],
    urlSyncOptions: SCENE_APP_URL_SYNC,
  });
}

/** The data source's kinds for these pages: fetched with them (datasource/kinds/index.ts). */
export { OTHER_KINDS } from '../../datasource/kinds/otherKinds';

export function OtherPages() {
  const app = useSceneApp(buildOtherPagesApp);
  return <app.Component model={app} />;
}
