import { SceneApp, useSceneApp } from '@grafana/scenes';
import React from 'react';

import { alertsPage } from '../../pages/Alerts/alertsPage';
import { comparePage } from '../../pages/Compare/comparePage';
import { servicesPage } from '../../pages/Services/servicesPage';
import { tracesPage } from '../../pages/Traces/tracesPage';
import { SCENE_APP_URL_SYNC } from './sceneAppOptions';

/** Services, Traces, Compare and Alerts: one SceneApp in its own chunk (see App.tsx), unknown app URLs included. */
function buildOtherPagesApp(): SceneApp {
  return new SceneApp({
    name: 'hopscope',
    pages: [servicesPage(), tracesPage(), comparePage(), alertsPage()],
    urlSyncOptions: SCENE_APP_URL_SYNC,
  });
}

export function OtherPages() {
  const app = useSceneApp(buildOtherPagesApp);
  return <app.Component model={app} />;
}
