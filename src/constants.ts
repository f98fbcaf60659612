import { APP_PLUGIN_ID } from '../contract/app-urls';

/** The plugin id (contract/app-urls.ts, checked against plugin.json by tests/static/foundation/plugin-json.test.ts). */
export const PLUGIN_ID = APP_PLUGIN_ID;

/** The data proxy prefix: Grafana forwards `${PROXY_BASE_URL}/...` to `{{ .JsonData.proxyUrl }}/api/...`. */
export const PROXY_BASE_URL = `/api/plugin-proxy/${PLUGIN_ID}/api`;

/** The inference backends the `backend` variable offers (its query, and what a URL may select). */
export const BACKENDS = ['vllm', 'tgi', 'sglang'] as const;
