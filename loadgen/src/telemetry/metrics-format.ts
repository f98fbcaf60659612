/**
 * /metrics content negotiation, as Python's prometheus_client does it (vLLM): OpenMetrics when the scrape's Accept asks
 * for `application/openmetrics-text` (Prometheus does by default; only OpenMetrics carries exemplars), the Prometheus
 * text format otherwise. A registry that must stay text-only (TGI's exporter: its counters have no `_total`, which
 * OpenMetrics would add) is served with `openMetrics: false`.
 *
 * prom-client lets exemplar-enabled metrics register only on an OpenMetrics registry, renders one format per registry,
 * and renaming counters for OpenMetrics mutates the shared metric objects (`_total` stripped for good). So a hop's
 * registry is of the OpenMetrics type (podRegistry) and both formats are rendered here from read-only views of its
 * metrics: never call `.metrics()` on such a registry.
 */
import { Registry, type MetricObject, type OpenMetricsContentType } from 'prom-client';

export const OPENMETRICS_CONTENT_TYPE = Registry.OPENMETRICS_CONTENT_TYPE;
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export function wantsOpenMetrics(accept: string | string[] | undefined): boolean {
  const a = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  return a.includes('application/openmetrics-text');
}

/** A hop replica's registry: accepts metrics with exemplars; render it with renderMetrics. */
export function podRegistry(): Registry {
  const r = new Registry<OpenMetricsContentType>();
  r.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return r as unknown as Registry;
}

interface MetricData {
  name: string;
  type: string;
  help: string;
  values: unknown[];
}
interface Renderable {
  type?: string;
  get(): Promise<MetricData>;
  getForPromString?: () => Promise<MetricData>;
}
/** prom-client renders one metric with this (untyped) method, in the rendering registry's content type. */
interface RenderingRegistry {
  getMetricsAsString(m: Pick<Renderable, 'get' | 'getForPromString'>): Promise<string>;
}

const renderer = (contentType: typeof OPENMETRICS_CONTENT_TYPE | typeof PROMETHEUS_CONTENT_TYPE): RenderingRegistry => {
  const r = new Registry<OpenMetricsContentType>();
  r.setContentType(contentType as OpenMetricsContentType);
  return r as unknown as RenderingRegistry;
};
const OM = renderer(OPENMETRICS_CONTENT_TYPE);
const TEXT = renderer(PROMETHEUS_CONTENT_TYPE);

function view(m: MetricObject, openMetrics: boolean): Pick<Renderable, 'get' | 'getForPromString'> {
  const metric = m as unknown as Renderable;
  // OpenMetrics names a counter family without `_total`; prom-client adds `_total` to its samples.
  if (openMetrics && metric.type === 'counter')
    return {
      get: async () => {
        const d = await metric.get();
        return { ...d, name: d.name.replace(/_total$/, '') };
      },
    };
  return metric.getForPromString
    ? { get: () => metric.get(), getForPromString: () => metric.getForPromString!() }
    : { get: () => metric.get() };
}

/** The registry's metrics in the OpenMetrics text format (exemplars included) or the Prometheus text format. */
export async function metricsText(registry: Registry, openMetrics: boolean): Promise<string> {
  const parts = await Promise.all(
    registry.getMetricsAsArray().map((m) => (openMetrics ? OM : TEXT).getMetricsAsString(view(m, openMetrics)))
  );
  return openMetrics ? `${parts.join('\n')}\n# EOF\n` : `${parts.join('\n\n')}\n`;
}

/** What to answer a scrape with. */
export async function renderMetrics(
  registry: Registry,
  accept: string | string[] | undefined,
  opts: { openMetrics: boolean }
): Promise<{ contentType: string; body: string }> {
  const om = opts.openMetrics && wantsOpenMetrics(accept);
  return {
    contentType: om ? OPENMETRICS_CONTENT_TYPE : PROMETHEUS_CONTENT_TYPE,
    body: await metricsText(registry, om),
  };
}
