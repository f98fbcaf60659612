/**
 * The PromQL of the golden dashboard template, ready to send to a Prometheus: Grafana's macros and the dashboard's
 * variables replaced as Grafana would send them. Used by the static checks (promtool), and meant for a live check
 * against a Prometheus scraping the chain (issue 6: every expression answers without error and not empty).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GoldenQuery {
  panel: string;
  refId: string;
  expr: string;
  promql: string;
}

/** Grafana macros → a fixed window; dashboard variables → match-all (`.*`, as the "All" value sends). */
export function substituteForPrometheus(expr: string, window = '1m'): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, window)
    .replace(/\$\{__(rate_interval|interval|range)\}/g, window)
    .replace(/\$\{(\w+)(:\w+)?\}|\$(\w+)/g, '.*');
}

export function goldenQueries(root = join(import.meta.dirname, '..', '..', '..')): GoldenQuery[] {
  const dash = JSON.parse(readFileSync(join(root, 'provisioning', 'dashboards', 'hopscope-golden.json'), 'utf8'));
  const panels = dash.panels.flatMap((p: { panels?: unknown[] }) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p: { title: string; targets?: Array<{ refId: string; expr: string }> }) =>
    (p.targets ?? []).map((t) => ({
      panel: p.title,
      refId: t.refId,
      expr: t.expr,
      promql: substituteForPrometheus(t.expr),
    }))
  );
}
