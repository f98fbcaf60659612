/**
 * A pod's kernel events → an events frame (time, signal, duration, process, detail, trace id linking to its root
 * cause) that the kernel lanes and the events table both draw, and the TLS handshake latency distribution as a
 * histogram frame (`xMin`/`xMax`/count, log-spaced bins). What the exporter could not record is said as a notice.
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import { appPaths } from '../../../contract/app-urls';
import { KERNEL_EVENT_TYPES, type KernelEvent, type PodKernelEventsAnswer } from '../../../contract';
import { sharedHistograms, quantile } from '../../transforms/histogram';
import { partRefId } from '../query';
import { columns, field, frame, NUMBER, STRING, TIME } from './frame';
import { appPathLink, HIDDEN } from './links';

/** A one-line description of an event's detail for tables (`dst=10.0.0.7:443 retrans=3`). */
export function describeDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

/** Events, oldest first; `type` is the catalogue id (lanes group by it), `signal` its label. */
export function kernelEventsFrame(events: KernelEvent[], refId: string): DataFrame {
  const e = [...events].sort((a, b) => a.ts - b.ts);
  return frame(
    columns(e, [
      ['time', TIME, (x) => x.ts, { displayName: 'Time' }],
      ['signal', STRING, (x) => KERNEL_EVENT_TYPES[x.type].label, { displayName: 'Signal' }],
      ['type', STRING, (x) => x.type, HIDDEN],
      ['duration', NUMBER, (x) => x.durationMs ?? null, { displayName: 'Duration', unit: 'ms' }],
      ['pod', STRING, (x) => x.pod ?? '', { displayName: 'Pod' }],
      ['process', STRING, (x) => `${x.comm} (${x.pid})`, { displayName: 'Process' }],
      ['detail', STRING, (x) => describeDetail(x.detail), { displayName: 'Detail' }],
      [
        'traceId',
        STRING,
        (x) => x.traceId ?? '',
        { displayName: 'Trace', links: [appPathLink('Root cause of this trace', 'tracePath')] },
      ],
      ['tracePath', STRING, (x) => (x.traceId ? appPaths.trace(x.traceId) : ''), HIDDEN],
      ['mode', STRING, (x) => x.mode, { displayName: 'Mode' }],
    ]),
    { name: 'kernel events', refId }
  );
}

/** TLS handshake durations on log-spaced bins, in Grafana's histogram frame shape. */
export function tlsHistogramFrame(events: KernelEvent[], refId: string, bins = 24): DataFrame {
  const ms = events.filter((x) => x.type === 'tls_handshake' && x.durationMs !== undefined).map((x) => x.durationMs!);
  const [h] = sharedHistograms([ms], bins);
  const n = ms.length ? h.counts.length : 0;
  return frame(
    [
      field('xMin', NUMBER, h.edges.slice(0, n), { unit: 'ms', displayName: 'From' }),
      field('xMax', NUMBER, h.edges.slice(1, n + 1), { unit: 'ms', displayName: 'To' }),
      field('count', NUMBER, h.counts.slice(0, n), { displayName: 'TLS handshakes', decimals: 0 }),
    ],
    { name: 'TLS handshake latency', refId: partRefId(refId, 'tls') }
  );
}

/** What a reader must know about these events: replayed data, what the exporter dropped, a one-line summary. */
export function kernelNotices(answer: PodKernelEventsAnswer): QueryResultMetaNotice[] {
  const notices: QueryResultMetaNotice[] = [];
  if (answer.events.some((e) => e.mode === 'replay')) {
    notices.push({ severity: 'warning', text: 'Replayed data, not live.' });
  }
  if (answer.truncated || answer.dropped) {
    notices.push({ severity: 'warning', text: `Truncated: ${answer.dropped} events dropped by the exporter.` });
  }
  const tls = answer.events
    .filter((e) => e.type === 'tls_handshake' && e.durationMs !== undefined)
    .map((e) => e.durationMs!);
  const connect = answer.events
    .filter((e) => e.type === 'tcp_connect' && e.durationMs !== undefined)
    .map((e) => e.durationMs!);
  const fmt = (v: number | undefined) => (v === undefined ? '—' : `${v.toFixed(v < 10 ? 1 : 0)} ms`);
  const withTrace = answer.events.filter((e) => e.traceId).length;
  notices.push({
    severity: 'info',
    text: `TLS P50 ${fmt(quantile(tls, 0.5))}, P99 ${fmt(quantile(tls, 0.99))} · connect P99 ${fmt(quantile(connect, 0.99))} · ${withTrace} events carry a trace id`,
  });
  return notices;
}
