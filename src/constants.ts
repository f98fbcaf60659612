import pluginJson from '../plugin.json';

/** The plugin id, read from plugin.json so the two never disagree. */
export const PLUGIN_ID = pluginJson.id;

/** Where Grafana mounts the app: every page lives under this path. */
export const PLUGIN_BASE_URL = `/a/${PLUGIN_ID}`;

/** The data proxy prefix: Grafana forwards `${PROXY_BASE_URL}/...` to `{{ .JsonData.proxyUrl }}/api/...`. */
export const PROXY_BASE_URL = `/api/plugin-proxy/${PLUGIN_ID}/api`;

/** Route segments of the app (relative to PLUGIN_BASE_URL), as named in the design handout. */
export enum ROUTES {
  Overview = 'overview',
  Services = 'services',
  Traces = 'traces',
  Compare = 'compare',
  Alerts = 'alerts',
}

/** The inference backends the `backend` variable offers (its query, and what a URL may select). */
export const BACKENDS = ['vllm', 'tgi'] as const;
