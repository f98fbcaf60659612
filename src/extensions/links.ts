/**
 * "Root cause in Hopscope", the link the app adds to Grafana outside it (plugin.json `extensions.addedLinks`,
 * registered in module.tsx): on Grafana's trace view (`grafana/traceview/header/actions`) it opens the trace's ranked
 * root cause; in a dashboard panel's menu (`grafana/dashboard/panel/menu`) it opens the Overview on the panel's time
 * range (a trace panel: that trace) with the dashboard's `service` / `model` values. The context shapes are the ones
 * Grafana builds (TracePageHeader's `{ ...trace, datasource }`, PanelMenuBehavior's createExtensionContext).
 * Plain functions, no Grafana import: module.js carries them, and unit tests run them in Node.
 */
import { appPaths, withQuery, type AppQuery } from '../../contract/app-urls';

/** plugin.json `extensions.addedLinks[0]`: Grafana registers a link only as declared there. */
export const ROOT_CAUSE_LINK = {
  title: 'Root cause in Hopscope',
  description: "Open Hopscope at this trace's ranked root cause, or at this panel's time range",
  targets: ['grafana/traceview/header/actions', 'grafana/dashboard/panel/menu'],
} as const;

/** Around a trace, the page's window: its kernel events and baselines are looked up in it. */
export const TRACE_PAD_MS = 5 * 60_000;

/**
 * Grafana core's TraceViewPluginExtensionContext (public/app/features/explore/TraceView/components/types/trace.ts):
 * a `Trace` — times in microseconds — and the data source it came from.
 */
export interface TraceViewContext {
  traceID: string;
  startTime: number;
  endTime?: number;
  duration?: number;
  datasource?: { name?: string; uid?: string; type?: string };
}

/** A moment of a raw time range: a string (`now-6h`, or epoch ms as text) or a DateTime (moment), as Grafana passes. */
type RawTime = string | { valueOf(): number };

/** @grafana/data's PluginExtensionPanelContext, the fields this link reads. */
export interface PanelContext {
  pluginId: string;
  timeRange: { from: RawTime; to: RawTime };
  targets?: Array<Record<string, unknown>>;
  scopedVars?: Record<string, { value?: unknown } | undefined>;
}

/** A dashboard variable as Grafana's template service lists it (`getTemplateSrv().getVariables()`). */
export interface DashboardVariable {
  name: string;
  current?: { value?: unknown };
}

const TRACE_ID = /^(?:[0-9a-f]{16}|[0-9a-f]{32})$/i;

export function isTraceViewContext(c: unknown): c is TraceViewContext {
  const t = c as Partial<TraceViewContext> | undefined;
  return typeof t?.traceID === 'string' && typeof t.startTime === 'number';
}

export function isPanelContext(c: unknown): c is PanelContext {
  const p = c as Partial<PanelContext> | undefined;
  return typeof p?.pluginId === 'string' && typeof p.timeRange === 'object' && p.timeRange !== null;
}

/** The trace's root cause, the page pinned to the trace's time ± TRACE_PAD_MS; undefined for no valid trace id. */
export function traceViewPath(c: TraceViewContext): string | undefined {
  if (!TRACE_ID.test(c.traceID) || !Number.isFinite(c.startTime)) {
    return undefined;
  }
  const startMs = c.startTime / 1000;
  const endUs = Number.isFinite(c.endTime) ? c.endTime! : c.startTime + (Number.isFinite(c.duration) ? c.duration! : 0);
  const endMs = Math.max(startMs, endUs / 1000);
  return withQuery(appPaths.trace(c.traceID.toLowerCase()), {
    from: Math.floor(startMs - TRACE_PAD_MS),
    to: Math.ceil(endMs + TRACE_PAD_MS),
  });
}

/** A raw time as the app's `from`/`to` key: relative strings kept, a DateTime as epoch ms. */
function urlTime(t: RawTime | undefined): string | number | undefined {
  if (typeof t === 'string') {
    return t || undefined;
  }
  const ms = t && typeof t.valueOf === 'function' ? Number(t.valueOf()) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** One concrete value of a variable (not All, not several, not an unresolved reference), else undefined. */
function singleValue(value: unknown): string | undefined {
  const v = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (typeof v !== 'string' || v === '' || v === '$__all' || v === 'All' || v.includes('$')) {
    return undefined;
  }
  return v;
}

/** A trace panel's trace id: its query when that is one trace id (Tempo's trace-id query). */
function traceIdOfPanel(c: PanelContext): string | undefined {
  if (c.pluginId !== 'traces') {
    return undefined;
  }
  const ids = (c.targets ?? [])
    .map((t) => (typeof t.query === 'string' ? t.query.trim() : ''))
    .filter((q) => TRACE_ID.test(q));
  return ids.length === 1 ? ids[0].toLowerCase() : undefined;
}

/**
 * The Overview on the panel's time range, with the dashboard's `service` and `model` when each has one value (a
 * repeated panel's own value first); a trace panel opens its trace on that range. Undefined without a usable range.
 */
export function panelMenuPath(c: PanelContext, variables: readonly DashboardVariable[] = []): string | undefined {
  const from = urlTime(c.timeRange.from);
  const to = urlTime(c.timeRange.to);
  if (from === undefined || to === undefined) {
    return undefined;
  }
  const valueOf = (name: string): string | undefined =>
    singleValue(c.scopedVars?.[name]?.value) ?? singleValue(variables.find((v) => v.name === name)?.current?.value);
  const query: AppQuery = { from, to };
  const traceId = traceIdOfPanel(c);
  if (traceId) {
    return withQuery(appPaths.trace(traceId), query);
  }
  return withQuery(appPaths.overview(), { ...query, 'var-service': valueOf('service'), 'var-model': valueOf('model') });
}

/** The link's path for whichever context Grafana passed (the link hides itself on undefined). */
export function rootCausePath(context: unknown, variables: readonly DashboardVariable[] = []): string | undefined {
  if (isTraceViewContext(context)) {
    return traceViewPath(context);
  }
  if (isPanelContext(context)) {
    return panelMenuPath(context, variables);
  }
  return undefined;
}
