/**
 * Typed access to the Hopscope backend proxy through Grafana's data proxy (`/api/plugin-proxy/<id>/api/...`, a route
 * of plugin.json that adds the bearer token server-side). Every answer is parsed with the shared zod schemas of
 * `contract/`, so a page gets either typed data or a typed error, never an unchecked `any`.
 */
import { getBackendSrv, isFetchError } from '@grafana/runtime';
import { lastValueFrom } from 'rxjs';
import { z } from 'zod';

import {
  ErrorBody,
  AlertRules,
  AlertRulesExport,
  AlertsAnswer,
  AnnotationsAnswer,
  CompareAnswer,
  formatZodError,
  GoldenAnswer,
  HeatmapAnswer,
  PodKernelEventsAnswer,
  PodsAnswer,
  RcaAnswer,
  RcaRangeAnswer,
  RunCompareAnswer,
  RunList,
  RunRecord,
  RunTtftAnswer,
  RunSaturationAnswer,
  RunTtftRequestsAnswer,
  SavedRcaAnswer,
  SavedRcaAnswerMeta,
  ServicesAnswer,
  SourceStatus,
  TraceDetail,
  TraceList,
  type AlertRule,
} from '../../contract';
import { ENDPOINTS } from './endpoints';
import { cleanParams, proxyUrl, rawFetch, type QueryParams } from './http';
import { takePrefetched } from './prefetch';

export { proxyUrl, type QueryParams };

/** Why a call failed: `http` (the proxy answered 4xx/5xx), `network` (nothing answered), `invalid` (wrong shape). */
export type ApiErrorKind = 'http' | 'network' | 'invalid';

export interface ApiError {
  kind: ApiErrorKind;
  /** HTTP status, when there was one. */
  status?: number;
  /** The `error.code` of the proxy's `{error: {code, message}}` body, or a code of our own. */
  code: string;
  message: string;
}

export type ApiResult<T> = { ok: true; data: T } | { ok: false; error: ApiError };

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  params?: QueryParams;
  body?: unknown;
  /** Cancels an older request with the same id (Grafana's backendSrv semantics), e.g. one per panel. */
  requestId?: string;
}

/** Turns whatever backendSrv rejected with into an ApiError, keeping the proxy's own error code when it sent one. */
export function toApiError(err: unknown): ApiError {
  if (isFetchError(err)) {
    const parsed = ErrorBody.safeParse(err.data);
    if (parsed.success) {
      return { kind: 'http', status: err.status, code: parsed.data.error.code, message: parsed.data.error.message };
    }
    if (!err.status) {
      return { kind: 'network', code: 'network', message: err.statusText || 'The request did not reach the proxy' };
    }
    const message = typeof err.data?.message === 'string' ? err.data.message : err.statusText || `HTTP ${err.status}`;
    return { kind: 'http', status: err.status, code: `http_${err.status}`, message };
  }
  return { kind: 'network', code: 'network', message: err instanceof Error ? err.message : String(err) };
}

/** Calls one proxy endpoint and validates the answer with `schema`. Never throws. */
export async function request<S extends z.ZodType>(
  path: string,
  schema: S,
  options: RequestOptions = {}
): Promise<ApiResult<z.infer<S>>> {
  const params = cleanParams(options.params);
  // A GET the page's module started early (prefetch.ts) is taken instead of asking again; validated the same way.
  const early =
    (options.method ?? 'GET') === 'GET' && options.body === undefined ? takePrefetched(path, params) : undefined;
  const outcome = await (early ??
    rawFetch(path, { method: options.method, params, body: options.body, requestId: options.requestId }));
  if (!outcome.ok) {
    return { ok: false, error: toApiError(outcome.error) };
  }
  const data = outcome.data;
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      error: {
        kind: 'invalid',
        code: 'invalid_response',
        message: `Unexpected answer from ${path}: ${formatZodError(parsed.error, { root: 'answer', max: 3 })}`,
      },
    };
  }
  return { ok: true, data: parsed.data };
}

// ---- The app views' endpoints (issue 6). Times are epoch ms; optional filters are dropped when undefined. ----

export interface TimeWindow {
  from: number;
  to: number;
}

export interface GoldenFilter extends TimeWindow {
  /** A Prometheus duration (`15s`); a bare number would be read as seconds. */
  step?: string;
  service?: string;
  backend?: string;
  model?: string;
}

const seg = (s: string): string => encodeURIComponent(s);

/** A trace's root cause as the proxy answers it: the engine's answer, and the answers saved of this trace (newest first). */
export const TraceRootCause = RcaAnswer.extend({
  saved: z.array(SavedRcaAnswerMeta).optional(),
  partial: z.boolean().optional(),
  sources: z.array(SourceStatus).optional(),
});

/** POST /rca/answers: the saved answer's id and trace, and its links (the JSON through Grafana, the app's view). */
export const SavedRcaAnswerCreated = SavedRcaAnswerMeta.extend({
  links: z.object({ api: z.string(), app: z.string() }).partial().optional(),
});

export const SavedRcaAnswerList = z.object({ answers: z.array(SavedRcaAnswerMeta) });

/** A PUT or an import of the rule set: the rules, and the version they were read at (a concurrent save is a 409). */
export interface RulesChange {
  rules: AlertRule[];
  expectedVersion?: number;
}

/**
 * The proxy's endpoints. No fixed request ids: a panel's query runner drops the answer of a query it has re-run, and
 * one id shared by two panels would cancel the other's call; pass `requestId` to cancel an older call on purpose.
 */
export const api = {
  golden: (f: GoldenFilter, requestId?: string) =>
    request(ENDPOINTS.golden, GoldenAnswer, { params: { ...f }, requestId }),
  heatmap: (w: TimeWindow, requestId?: string) =>
    request(ENDPOINTS.heatmap, HeatmapAnswer, { params: { ...w }, requestId }),
  annotations: (w: TimeWindow, requestId?: string) =>
    request(ENDPOINTS.annotations, AnnotationsAnswer, { params: { ...w }, requestId }),
  services: (w: TimeWindow, requestId?: string) =>
    request(ENDPOINTS.services, ServicesAnswer, { params: { ...w }, requestId }),
  pods: (service: string, w: TimeWindow, requestId?: string) =>
    request(`/services/${seg(service)}/pods`, PodsAnswer, { params: { ...w }, requestId }),
  kernelEvents: (pod: string, w: TimeWindow & { type?: string }, requestId?: string) =>
    request(`/pods/${seg(pod)}/kernel-events`, PodKernelEventsAnswer, { params: { ...w }, requestId }),
  /** `sort: 'duration'`: the slowest traces of the whole range (the default is the newest). */
  traces: (
    f: TimeWindow & {
      service?: string;
      minDurationMs?: number;
      status?: string;
      limit?: number;
      sort?: 'recent' | 'duration';
    },
    requestId?: string
  ) => request('/traces', TraceList, { params: { ...f }, requestId }),
  trace: (traceId: string, requestId?: string) => request(`/traces/${seg(traceId)}`, TraceDetail, { requestId }),
  traceRca: (traceId: string, requestId?: string) =>
    request(`/traces/${seg(traceId)}/rca`, TraceRootCause, { requestId }),
  /** GET /rca: the window root cause of a range's traces, against the hour before `from` (the proxy's baseline). */
  windowRca: (w: TimeWindow & { service?: string }, requestId?: string) =>
    request('/rca', RcaRangeAnswer, { params: { ...w }, requestId }),
  /** Saves a trace's root cause as the proxy computes it now, for a postmortem to link to. */
  saveTraceRca: (traceId: string) =>
    request('/rca/answers', SavedRcaAnswerCreated, { method: 'POST', body: { traceId } }),
  savedRca: (id: string, requestId?: string) => request(`/rca/answers/${seg(id)}`, SavedRcaAnswer, { requestId }),
  /** The answers saved of a trace, newest first (without the answers). */
  savedRcaOfTrace: (traceId: string, requestId?: string) =>
    request('/rca/answers', SavedRcaAnswerList, { params: { traceId, limit: 20 }, requestId }),
  compare: (a: string, b: string, w: TimeWindow, requestId?: string) =>
    request('/compare', CompareAnswer, { params: { a, b, ...w }, requestId }),
  alertRules: () => request('/alerts/rules', AlertRules),
  putAlertRules: (change: RulesChange) => request('/alerts/rules', AlertRules, { method: 'PUT', body: change }),
  /** The rule set as a file (the format HOPSCOPE_ALERT_RULES_FILE and the import read). */
  exportAlertRules: () => request('/alerts/rules/export', AlertRulesExport),
  importAlertRules: (change: RulesChange) =>
    request('/alerts/rules/import', AlertRules, { method: 'POST', body: change }),
  alerts: (w: TimeWindow, requestId?: string) => request('/alerts', AlertsAnswer, { params: { ...w }, requestId }),
  /** Load-test runs overlapping the window, newest first. */
  runs: (
    f: Partial<TimeWindow> & { scenario?: string; status?: string; limit?: number; offset?: number },
    requestId?: string
  ) => request('/runs', RunList, { params: { ...f }, requestId }),
  run: (runId: string, requestId?: string) => request(`/runs/${seg(runId)}`, RunRecord, { requestId }),
  runCompare: (runId: string, baselineRunId: string, requestId?: string) =>
    request(`/runs/${seg(runId)}/compare/${seg(baselineRunId)}`, RunCompareAnswer, { requestId }),
  runTtft: (runId: string, requestId?: string) => request(`/runs/${seg(runId)}/ttft`, RunTtftAnswer, { requestId }),
  runSaturation: (runId: string, requestId?: string) =>
    request(`/runs/${seg(runId)}/saturation`, RunSaturationAnswer, { requestId }),
  runTtftRequests: (runId: string, requestId?: string) =>
    request(`/runs/${seg(runId)}/ttft/requests`, RunTtftRequestsAnswer, { requestId }),
};

/** `GET /api/export/postmortem`: the PNG or the Markdown of a view, as a Blob to download. Never throws. */
export async function downloadPostmortem(params: QueryParams & { format: 'png' | 'md' }): Promise<ApiResult<Blob>> {
  try {
    const response = await lastValueFrom(
      getBackendSrv().fetch<Blob>({
        url: proxyUrl('/export/postmortem'),
        method: 'GET',
        params: cleanParams(params),
        responseType: 'blob',
        showErrorAlert: false,
        showSuccessAlert: false,
      })
    );
    return { ok: true, data: response.data };
  } catch (err) {
    // An error body arrives as a Blob too: read it to keep the proxy's own message.
    const e = err as { data?: unknown };
    if (e && e.data instanceof Blob) {
      try {
        e.data = JSON.parse(await e.data.text());
      } catch {
        // not JSON: keep the status text
      }
    }
    return { ok: false, error: toApiError(err) };
  }
}
