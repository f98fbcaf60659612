/**
 * Grafana Explore links for what a panel shows: its PromQL on the user's Prometheus data source, or a trace id on
 * their Tempo data source — the URL Grafana's own "Explore" panel action opens (`/explore?schemaVersion=1&panes=…`).
 * Plain functions (no Grafana import), unit-tested in Node.
 */

/** The pages' data source variable of the user's Prometheus (`var-prometheus`): Explore and the panel actions use it. */
export const PROMETHEUS_VARIABLE = 'prometheus';

export interface ExploreTarget {
  /** Data source uid and type, as configured on the app's config page. */
  datasource: { uid: string; type: 'prometheus' | 'tempo' };
  /** One query per expression (PromQL `expr`) or trace id (TraceQL `query`). */
  queries: string[];
  /** The panel's raw time range (`now-1h`, or epoch ms). */
  range: { from: string; to: string };
}

/** `${appSubUrl}/explore?…` opening the queries in one pane, as Grafana's panel "Explore" action does. */
export function exploreUrl(appSubUrl: string, target: ExploreTarget): string {
  const { datasource, queries, range } = target;
  const key = datasource.type === 'prometheus' ? 'expr' : 'query';
  const pane = {
    datasource: datasource.uid,
    queries: queries.map((q, i) => ({
      refId: String.fromCharCode(65 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : ''),
      datasource: { ...datasource },
      [key]: q,
      ...(datasource.type === 'tempo' ? { queryType: 'traceql' } : {}),
    })),
    range,
  };
  const params = new URLSearchParams({ schemaVersion: '1', panes: JSON.stringify({ hopscope: pane }), orgId: '1' });
  return `${appSubUrl.replace(/\/+$/, '')}/explore?${params}`;
}

/**
 * The distinct PromQL expressions a panel's frames were computed from, in order: a frame's `executedQueryString`,
 * or for a frame combined from several series the `meta.custom.queries` it was combined from.
 */
export function promqlOf(
  frames: Array<{ meta?: { executedQueryString?: string; custom?: Record<string, unknown> } }>
): string[] {
  const all = frames.flatMap((f) => {
    const combined = f.meta?.custom?.queries;
    return [f.meta?.executedQueryString, ...(Array.isArray(combined) ? combined : [])];
  });
  return [...new Set(all.filter((q): q is string => typeof q === 'string' && q !== ''))];
}
