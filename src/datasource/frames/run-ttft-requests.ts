/**
 * The client TTFT of a run's slowest and failed requests, part by part (GET /runs/:runId/ttft/requests): one row per
 * request (part `requests`, the trace cell opening its root cause) and each part's mean over the requests that have
 * it (part `average`). A part not known for a request is empty, and the notices say why.
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import { appPaths, withQuery } from '../../../contract/app-urls';
import type { RunTtftRequest, RunTtftRequestsAnswer, TtftRequestPartName } from '../../../contract/runs';
import { partRefId } from '../query';
import { columns, frame, NUMBER, STRING, TIME } from './frame';
import { HIDDEN } from './links';
import { rowLink } from './runs';

const PART_COLUMNS: Array<[TtftRequestPartName, string]> = [
  ['client_to_gateway', 'Client → gateway'],
  ['before_llm', 'Hops before the LLM'],
  ['engine_queue', 'Engine queue'],
  ['engine_prefill', 'Prefill'],
  ['way_back', 'First chunk back'],
];

const partMs = (r: RunTtftRequest, part: TtftRequestPartName): number | null =>
  r.parts.find((p) => p.part === part)?.ms ?? null;

export function runTtftRequestsFrames(a: RunTtftRequestsAnswer, refId: string): DataFrame[] {
  const requests = frame(
    columns(a.requests, [
      [
        'trace',
        STRING,
        (r) => r.traceId,
        { displayName: 'Trace', custom: { width: 280 }, links: [rowLink('Root cause of this trace', 'traceUrl')] },
      ],
      [
        'traceUrl',
        STRING,
        (r) =>
          withQuery(appPaths.trace(r.traceId), {
            from: Math.floor(r.startMs - 1000),
            to: Math.ceil(r.startMs + r.e2eMs + 1000),
          }),
        HIDDEN,
      ],
      ['list', STRING, (r) => r.list, { displayName: 'List', custom: { width: 70 } }],
      ['start', TIME, (r) => r.startMs, { displayName: 'Sent', unit: 'time:HH:mm:ss.SSS', custom: { width: 100 } }],
      ['ttft', NUMBER, (r) => r.ttftMs, { displayName: 'Client TTFT', unit: 'ms', decimals: 0, custom: { width: 95 } }],
      ...PART_COLUMNS.map(
        ([part, label]) =>
          [
            part,
            NUMBER,
            (r: RunTtftRequest) => partMs(r, part),
            { displayName: label, unit: 'ms', decimals: 1 },
          ] as const
      ),
      [
        'engine',
        STRING,
        (r) => (r.llm ? `${r.llm.engine} · ${r.llm.pod}` : 'no engine span'),
        { displayName: 'Engine' },
      ],
    ]),
    { name: 'TTFT per request', refId: partRefId(refId, 'requests') }
  );
  const average = frame(
    columns(a.average, [
      ['part', STRING, (x) => x.label, { displayName: "Part of the client's TTFT", custom: { width: 360 } }],
      ['mean', NUMBER, (x) => x.meanMs, { displayName: 'Mean', unit: 'ms', decimals: 1, custom: { width: 90 } }],
      ['n', NUMBER, (x) => x.n, { displayName: 'Requests', decimals: 0 }],
    ]),
    { name: 'TTFT per request, on average', refId: partRefId(refId, 'average') }
  );
  return [requests, average];
}

export function runTtftRequestsNotices(a: RunTtftRequestsAnswer): QueryResultMetaNotice[] {
  return [
    ...a.notes.map((text) => ({ severity: 'info' as const, text })),
    ...a.missing.map((m) => ({ severity: 'warning' as const, text: `Missing: ${m}` })),
  ];
}
