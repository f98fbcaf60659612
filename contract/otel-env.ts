/**
 * The OpenTelemetry environment's list format, as the SDK specification defines it for OTEL_EXPORTER_OTLP_HEADERS
 * and OTEL_RESOURCE_ATTRIBUTES: `key1=value1,key2=value2`, values URL-encoded. The proxy and the chain read it the
 * same way; `fail` builds each part's own configuration error, naming the variable.
 */
export function parseOtelList(
  name: string,
  v: string,
  fail: (message: string) => Error = (m) => new Error(m)
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of v.split(',')) {
    if (!part.trim()) continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!key) throw fail(`${name}: "${part.trim().slice(0, 40)}" is not key=value (expected key1=value1,key2=value2)`);
    try {
      out[key] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw fail(`${name}: the value of ${key} is not URL-encoded correctly`);
    }
  }
  return out;
}
