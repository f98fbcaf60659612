/**
 * The app's settings (plugin.json jsonData, edited on the config page), read where scenes build links: the app root
 * stores them once per render of Grafana's AppRootProps.meta, before any page scene is built.
 */
export interface HopscopeJsonData {
  proxyUrl?: string;
  /** The uid of the user's Prometheus data source: panels backed by PromQL offer "Explore" on it. */
  prometheusDatasourceUid?: string;
  /** The uid of the user's Tempo data source: a trace offers "Explore" on it. */
  tempoDatasourceUid?: string;
}

let current: HopscopeJsonData = {};

export function setAppSettings(jsonData: HopscopeJsonData | undefined): void {
  current = { ...(jsonData ?? {}) };
}

export function getAppSettings(): HopscopeJsonData {
  return current;
}
