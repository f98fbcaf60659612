/**
 * Checks the proxy URL typed on the config page. Returns the message to show inline, or undefined when it is good.
 * Grafana renders the route as `{{ .JsonData.proxyUrl }}/api/...`, so the URL must be absolute http(s), without a
 * query or fragment, and is stored without a trailing slash.
 */
export function validateProxyUrl(raw: string): string | undefined {
  const value = raw.trim();
  if (!value) {
    return 'Enter the URL of the Hopscope proxy, e.g. http://127.0.0.1:3301';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not a valid URL. Use the form http://host:port`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `The URL must start with http:// or https:// (got ${url.protocol})`;
  }
  if (!url.hostname) {
    return 'The URL needs a host name, e.g. http://hopscope-proxy:3301';
  }
  if (url.search || url.hash) {
    return 'The URL must not contain a query (?) or fragment (#)';
  }
  if (url.username || url.password) {
    return 'Put credentials in the access token field, not in the URL';
  }
  return undefined;
}

/** The stored form: trimmed, no trailing slash (the route appends `/api`). */
export function normalizeProxyUrl(raw: string): string {
  return raw.trim().replace(/\/+$/, '');
}
