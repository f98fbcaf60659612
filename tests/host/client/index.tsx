/**
 * The host page's entry: Grafana's boot sequence, reduced. `window.grafanaBootData` is already set by the page (as
 * Grafana's index.html does), so @grafana/runtime's config reads it when first evaluated. Then: runtime services,
 * i18n, the plugin settings, the plugin's AMD module.js, and the React tree Grafana renders around an app plugin.
 */
import type { AppPlugin, AppPluginMeta, KeyValue } from '@grafana/data';
import { PluginContextProvider } from '@grafana/data';
import { config, getBackendSrv, LocationServiceProvider, locationService } from '@grafana/runtime';
import { Alert, ErrorBoundaryAlert, GlobalStyles, ThemeContext } from '@grafana/ui';
import { initializeI18n } from 'grafana-i18n-internal';
import React, { useLayoutEffect, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { Route, Router, Routes, useLocation } from 'react-router';

import { loadAmdModule } from './amdLoader';
import { HostChrome, HostPluginPage, navFromMeta } from './chrome';
import { ExtensionPointPage } from './ExtensionPointPage';
import { registerAddedLinks, setupPluginExtensions } from './extensions';
import { interceptLinkClicks } from './interceptLinkClicks';
import { setupRuntimeServices } from './services';
import { sharedModules } from './sharedModules';
import { registerStandInExposedComponents } from './standInExposedComponents';

interface HostWindow {
  hopscopeHost: { pluginId: string; standInExposedComponents?: boolean };
}
const { pluginId, standInExposedComponents } = (window as unknown as HostWindow).hopscopeHost;

/** react-router v6 on Grafana's history object, the same copy of react-router the plugin gets. */
function HostRouter({ children }: { children: ReactNode }) {
  const history = locationService.getHistory();
  const [location, setLocation] = useState(history.location);
  useLayoutEffect(() => history.listen((loc: typeof history.location) => setLocation(loc)), [history]);
  return (
    <Router location={location} navigator={history}>
      {children}
    </Router>
  );
}

function AppRootPage({ plugin }: { plugin: AppPlugin }) {
  const location = useLocation();
  const Root = plugin.root;
  if (!Root) {
    return <Alert title="This app has no root page" severity="error" />;
  }
  return (
    // As Grafana: a crash of the plugin shows an error box in the page instead of a blank screen.
    <ErrorBoundaryAlert style="page">
      <PluginContextProvider meta={plugin.meta}>
        <Root
          meta={plugin.meta}
          basename={`/a/${pluginId}`}
          path={location.pathname}
          query={locationService.getSearchObject() as KeyValue}
          onNavChanged={() => undefined}
        />
      </PluginContextProvider>
    </ErrorBoundaryAlert>
  );
}

/** Grafana's plugin details page, reduced to its Configuration tab. */
function PluginConfigPage({ plugin }: { plugin: AppPlugin }) {
  const page = plugin.configPages?.[0];
  const meta = plugin.meta;
  return (
    <HostPluginPage
      pageNav={{
        text: meta.name,
        img: meta.info.logos.small,
        children: (plugin.configPages ?? []).map((p) => ({
          text: p.title,
          url: `/plugins/${pluginId}`,
          active: p === page,
        })),
      }}
      subTitle={meta.info.description}
    >
      <PluginContextProvider meta={meta}>
        {page ? (
          <page.body plugin={plugin} query={locationService.getSearchObject() as KeyValue} />
        ) : (
          <Alert title="This app has no config page" severity="info" />
        )}
      </PluginContextProvider>
    </HostPluginPage>
  );
}

function NotFound() {
  return (
    <Alert title="Page not found" severity="warning">
      This host serves only the app plugin pages and its configuration.
    </Alert>
  );
}

async function boot(): Promise<void> {
  setupRuntimeServices();
  setupPluginExtensions(pluginId);
  if (standInExposedComponents) {
    registerStandInExposedComponents();
  }
  await initializeI18n({ language: 'en-US' });
  const meta = await getBackendSrv().get<AppPluginMeta>(`/api/plugins/${pluginId}/settings`);
  const exported = await loadAmdModule(`/${meta.module}`, sharedModules);
  const plugin = exported.plugin as AppPlugin | undefined;
  if (!plugin || typeof plugin.init !== 'function') {
    throw new Error(`${meta.module} does not export an AppPlugin as "plugin"`);
  }
  // What Grafana's importAppPlugin does.
  plugin.init(meta);
  plugin.meta = meta;
  registerAddedLinks(pluginId, plugin);

  document.addEventListener('click', interceptLinkClicks);
  const root = createRoot(document.getElementById('reactRoot')!);
  root.render(
    <ThemeContext.Provider value={config.theme2}>
      <GlobalStyles />
      <LocationServiceProvider service={locationService}>
        <HostRouter>
          <HostChrome appName={meta.name} logoUrl={`/${meta.baseUrl}/${meta.info.logos.small}`} nav={navFromMeta(meta)}>
            <Routes>
              <Route path={`/a/${pluginId}/*`} element={<AppRootPage plugin={plugin} />} />
              <Route path={`/plugins/${pluginId}`} element={<PluginConfigPage plugin={plugin} />} />
              <Route path="/host/extension-point" element={<ExtensionPointPage />} />
              <Route path="*" element={<NotFound />} />
            </Routes>
          </HostChrome>
        </HostRouter>
      </LocationServiceProvider>
    </ThemeContext.Provider>
  );
  document.body.dataset.hostState = 'ready';
}

boot().catch((err: unknown) => {
  document.body.dataset.hostState = 'error';
  const message = err instanceof Error ? err.message : String(err);
  const el = document.getElementById('reactRoot');
  if (el) {
    el.textContent = `The host could not load the plugin: ${message}`;
  }
  console.error('host boot failed', err);
});
