import { APP_BASE } from '../../contract/app-urls';

/**
 * What the postmortem export asks the proxy for: the view (app path + query, with the time range made absolute so the
 * PNG shows the same window the reader of the postmortem will open), the window, and the trace id when the view is one.
 */
export interface ExportParams {
  [key: string]: string | number | undefined;
  view: string;
  from: number;
  to: number;
  traceId?: string;
  service?: string;
  pod?: string;
  /** `1` on the Explain page: the Markdown carries the window root cause of the range. */
  window?: number;
}

export function exportParams(pathname: string, search: string, fromMs: number, toMs: number): ExportParams {
  const q = new URLSearchParams(search);
  q.set('from', String(fromMs));
  q.set('to', String(toMs));
  const view = `${pathname}?${q.toString()}`;
  const out: ExportParams = { view, from: fromMs, to: toMs };
  const trace = /\/traces\/([0-9a-fA-F]{32})(?:\/|$)/.exec(pathname);
  if (trace) {
    out.traceId = trace[1].toLowerCase();
  }
  const svc = /\/services\/([^/?]+)/.exec(pathname);
  if (svc) {
    out.service = decodeURIComponent(svc[1]);
  }
  if (/\/explain(?:\/|$)/.test(pathname)) {
    out.window = 1;
  }
  const pod = /\/pods\/([^/?]+)/.exec(pathname);
  if (pod) {
    out.pod = decodeURIComponent(pod[1]);
  }
  return out;
}

/** `hopscope-services-rag-2026-11-30T03-20.png`: says which view and when, sorts by time. */
export function exportFileName(view: string, fromMs: number, ext: 'png' | 'md'): string {
  const path = view
    .split('?')[0]
    .slice(view.startsWith(APP_BASE) ? APP_BASE.length : 0)
    .replace(/^\//, '');
  const slug =
    path
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'overview';
  const when = new Date(fromMs).toISOString().slice(0, 16).replace(/:/g, '-');
  return `hopscope-${slug}-${when}.${ext}`;
}
