/**
 * Traces → frames: a list (each id linking to its root cause), one trace's spans in Grafana's trace frame shape
 * (traceID, spanID, parentSpanID, operationName, serviceName, startTime, duration, tags — what Grafana's traces panel
 * and the icicle read), and a root-cause answer as its ranked candidates and the engine's critical path.
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import { appPaths } from '../../../contract/app-urls';
import {
  EVIDENCE_KINDS,
  type Candidate,
  type KernelEvidenceUsed,
  type RcaAnswer,
  type SavedRcaAnswerMeta,
  type Span,
  type TraceDetail,
  type TraceSummary,
} from '../../../contract';
import { partRefId } from '../query';
import { columns, frame, NUMBER, OTHER, STRING, TIME } from './frame';
import { appPathLink, HIDDEN } from './links';
import { ENGINE_STATE_PART, engineStateFrame, LLM_PHASES_PART, llmPhasesFrame } from './llm';

export function traceListFrame(traces: TraceSummary[], name = 'traces'): DataFrame {
  return frame(
    columns(traces, [
      [
        'traceId',
        STRING,
        (t) => t.traceId,
        { displayName: 'Trace', links: [appPathLink('Root cause of this trace', 'tracePath')] },
      ],
      ['tracePath', STRING, (t) => appPaths.trace(t.traceId), HIDDEN],
      ['root', STRING, (t) => `${t.rootService} ${t.rootName}`, { displayName: 'Root' }],
      ['start', TIME, (t) => t.startMs, { displayName: 'Start' }],
      ['duration', NUMBER, (t) => t.durationMs, { displayName: 'Duration', unit: 'ms' }],
      ['status', STRING, (t) => t.status, { displayName: 'Status' }],
      ['spans', NUMBER, (t) => t.spanCount ?? null, { displayName: 'Spans', decimals: 0 }],
    ]),
    { name }
  );
}

/** The `n` slowest traces, errors and timeouts first among equals (they are what an SRE opens first). */
export function slowestTraces(traces: TraceSummary[], n: number): TraceSummary[] {
  const bad = (t: TraceSummary): number => (t.status === 'error' || t.status === 'timeout' ? 1 : 0);
  return [...traces].sort((a, b) => b.durationMs - a.durationMs || bad(b) - bad(a)).slice(0, n);
}

const TRACE = 'trace' as const;
const STATUS_CODE: Record<Span['status'], number> = { unset: 0, ok: 1, error: 2, timeout: 2 };
const kv = (o: Record<string, string | number | boolean>) => Object.entries(o).map(([key, value]) => ({ key, value }));

/** One trace's spans as Grafana's trace frame, plus `pod` and the raw `status` Hopscope reads. */
export function traceFrame(trace: TraceDetail): DataFrame {
  const s = trace.spans;
  return frame(
    columns(s, [
      ['traceID', STRING, (x) => x.traceId],
      ['spanID', STRING, (x) => x.spanId],
      ['parentSpanID', STRING, (x) => x.parentSpanId ?? ''],
      ['operationName', STRING, (x) => x.name],
      ['serviceName', STRING, (x) => x.service],
      ['kind', STRING, (x) => x.kind],
      ['statusCode', NUMBER, (x) => STATUS_CODE[x.status]],
      ['status', STRING, (x) => x.status],
      ['statusMessage', STRING, (x) => x.statusMessage ?? ''],
      ['startTime', NUMBER, (x) => x.startMs, { unit: 'dateTimeAsIso' }],
      ['duration', NUMBER, (x) => x.endMs - x.startMs, { unit: 'ms' }],
      ['pod', STRING, (x) => podOf(x) ?? ''],
      ['serviceTags', OTHER, (x) => kv(x.resource)],
      ['tags', OTHER, (x) => kv(x.attributes)],
    ]),
    {
      name: `trace ${trace.traceId}`,
      meta: { preferredVisualisationType: TRACE, custom: { partial: trace.partial ?? false } },
    }
  );
}

/** The trace frame back to spans (the icicle panel builds its tree from these). */
export function spansOfFrame(f: DataFrame): Span[] {
  const col = (name: string) => f.fields.find((x) => x.name === name)?.values ?? [];
  const [traceId, spanId, parent, name, service, kind, status, msg, start, duration, serviceTags, tags] = [
    'traceID',
    'spanID',
    'parentSpanID',
    'operationName',
    'serviceName',
    'kind',
    'status',
    'statusMessage',
    'startTime',
    'duration',
    'serviceTags',
    'tags',
  ].map(col);
  const obj = (pairs: Array<{ key: string; value: string | number | boolean }> | undefined) =>
    Object.fromEntries((pairs ?? []).map((p) => [p.key, p.value]));
  return Array.from({ length: f.length }, (_, i) => ({
    traceId: traceId[i],
    spanId: spanId[i],
    ...(parent[i] ? { parentSpanId: parent[i] } : {}),
    name: name[i],
    service: service[i],
    kind: kind[i],
    startMs: start[i],
    endMs: start[i] + duration[i],
    status: status[i],
    ...(msg[i] ? { statusMessage: msg[i] } : {}),
    resource: obj(serviceTags[i]),
    attributes: obj(tags[i]),
  }));
}

/** The pod of a span, from its resource attributes (k8s.pod.name), if the exporter set it. */
export function podOf(span: Span): string | undefined {
  const v = span.resource['k8s.pod.name'] ?? span.attributes['k8s.pod.name'];
  return typeof v === 'string' ? v : undefined;
}

/** A candidate's evidence as one line per item, each labelled from the evidence catalogue. */
export function evidenceText(c: Candidate): string {
  return c.evidence.map((e) => `${EVIDENCE_KINDS[e.kind].label}: ${e.summary}`).join('\n');
}

/** What a root-cause answer says about itself beyond its rows (the trace page reads it from the candidates' frame). */
export interface RcaAbout {
  traceId?: string;
  tookMs: number;
  /** Where the kernel events came from (live answers), and the sentence a reader gets for it. */
  kernelEvidence?: KernelEvidenceUsed;
  kernelEvidenceText?: string;
  /** What the engine could not see (retention, gaps, sources down…), one line each. */
  missing: string[];
  /** Some calls were inferred from the trace tree (its spans carry no kind). */
  inferredCalls: number;
  /** When the answer shown is a saved one: which, and when it was saved. */
  savedAnswer?: SavedRcaAnswerMeta;
  /** The answer's one-sentence verdict (absent when the engine gave none). */
  verdict?: string;
  /** How many inference-server spans the answer split into phases. */
  llmSpans: number;
}

const clock = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** Where the kernel events of a root cause came from, as one plain sentence. */
export function kernelEvidenceText(k: KernelEvidenceUsed | undefined): string | undefined {
  if (!k) {
    return undefined;
  }
  const rings = k.ringsFromMs !== undefined ? ` (their oldest event: ${clock(k.ringsFromMs)})` : '';
  switch (k.source) {
    case 'rings':
      return "Kernel evidence from the exporters' rings: every event they recorded in this trace's window.";
    case 'kept':
      return `Kernel evidence from the notable events the proxy kept in its database: the exporters' rings no longer reach back to this trace${rings}, so routine events (quick connects and handshakes) are not in it.`;
    case 'rings+kept':
      return `Kernel evidence from the exporters' rings, and from the notable events the proxy kept for the part of the window the rings no longer reach${rings}.`;
    case 'none':
      return `No kernel evidence: neither the exporters' rings nor the events kept in the database cover this trace's window${k.retainedFromMs !== undefined ? ` (evidence is kept from ${clock(k.retainedFromMs)})` : ''}.`;
  }
}

/** The answer's own facts (kernel evidence, missing lines, inferred calls, which saved answer), as the trace page shows them. */
export function rcaAbout(answer: RcaAnswer, savedAnswer?: SavedRcaAnswerMeta): RcaAbout {
  return {
    traceId: answer.traceId,
    tookMs: answer.tookMs,
    ...(answer.kernelEvidence
      ? { kernelEvidence: answer.kernelEvidence, kernelEvidenceText: kernelEvidenceText(answer.kernelEvidence) }
      : {}),
    missing: answer.missing,
    inferredCalls: answer.candidates.filter((c) => c.evidence.some((e) => e.kind === 'inferred_call')).length,
    ...(savedAnswer ? { savedAnswer } : {}),
    ...(answer.verdict ? { verdict: answer.verdict } : {}),
    llmSpans: answer.llmPhases?.length ?? 0,
  };
}

/** The facts `rcaFrames` put on the candidates' frame, back (undefined: not a root-cause frame). */
export function rcaAboutOfFrame(f: DataFrame | undefined): RcaAbout | undefined {
  return f?.meta?.custom?.rca as RcaAbout | undefined;
}

/**
 * Ranked candidates (table) and the critical path (part `criticalPath`), with what evidence was missing; the answer's
 * own facts (`rcaAbout`) on the candidates' frame (`meta.custom.rca`).
 */
export function rcaFrames(answer: RcaAnswer, refId: string, savedAnswer?: SavedRcaAnswerMeta): DataFrame[] {
  const c = answer.candidates;
  const candidates = frame(
    columns(c, [
      ['rank', NUMBER, (x) => x.rank, { displayName: '#', decimals: 0, custom: { width: 50 } }],
      ['service', STRING, (x) => x.service, { displayName: 'Service', custom: { width: 120 } }],
      [
        'pod',
        STRING,
        (x) => x.pod,
        { displayName: 'Pod', links: [appPathLink('Kernel evidence of this pod', 'podPath')], custom: { width: 170 } },
      ],
      ['podPath', STRING, (x) => (x.pod ? appPaths.pod(x.service, x.pod) : appPaths.service(x.service)), HIDDEN],
      [
        'operation',
        STRING,
        (x) => x.operation ?? '',
        {
          displayName: 'Operation',
          links: [
            {
              title: 'Show this span',
              url: '${__url.path}${__url.params:exclude:span}&span=${__data.fields.spanId:raw}',
            },
          ],
          custom: { width: 170 },
        },
      ],
      ['score', NUMBER, (x) => x.score, { displayName: 'Score', decimals: 2, custom: { width: 70 } }],
      ['selfMs', NUMBER, (x) => x.selfMs ?? null, { displayName: 'Own time', unit: 'ms', custom: { width: 90 } }],
      [
        'baselineMs',
        NUMBER,
        (x) => x.baselineMs ?? null,
        { displayName: 'Baseline', unit: 'ms', custom: { width: 90 } },
      ],
      [
        'evidence',
        STRING,
        evidenceText,
        { displayName: 'Evidence', custom: { cellOptions: { type: 'auto', wrapText: true } } },
      ],
      ['evidenceKinds', STRING, (x) => x.evidence.map((e) => e.kind).join(','), HIDDEN],
      ['spanId', STRING, (x) => x.spanId ?? '', HIDDEN],
    ]),
    {
      name: 'ranked causes',
      refId,
      meta: { custom: { tookMs: answer.tookMs, traceId: answer.traceId, rca: rcaAbout(answer, savedAnswer) } },
    }
  );
  const p = answer.criticalPath;
  const path = frame(
    columns(p, [
      ['spanId', STRING, (x) => x.spanId],
      ['parentSpanId', STRING, (x) => x.parentSpanId ?? ''],
      ['depth', NUMBER, (x) => x.depth],
      ['service', STRING, (x) => x.service],
      ['pod', STRING, (x) => x.pod],
      ['operation', STRING, (x) => x.operation],
      ['start', TIME, (x) => x.startMs],
      ['durationMs', NUMBER, (x) => x.durationMs, { unit: 'ms' }],
      ['selfMs', NUMBER, (x) => x.selfMs, { unit: 'ms' }],
      ['onPathMs', NUMBER, (x) => x.onPathMs, { unit: 'ms' }],
      ['gapMs', NUMBER, (x) => x.gapMs ?? null, { unit: 'ms' }],
      ['baselineSelfMs', NUMBER, (x) => x.baselineSelfMs ?? null, { unit: 'ms' }],
      ['skewCorrectedMs', NUMBER, (x) => x.skewCorrectedMs ?? null, { unit: 'ms' }],
    ]),
    { name: 'critical path', refId: partRefId(refId, 'criticalPath') }
  );
  const llm = answer.llmPhases ?? [];
  return [
    candidates,
    path,
    llmPhasesFrame(llm, partRefId(refId, LLM_PHASES_PART)),
    engineStateFrame(llm, partRefId(refId, ENGINE_STATE_PART)),
  ];
}

export function rcaNotices(answer: RcaAnswer): QueryResultMetaNotice[] {
  const kernel = kernelEvidenceText(answer.kernelEvidence);
  return [
    { severity: 'info', text: `Ranked in ${answer.tookMs.toFixed(1)} ms` },
    ...(kernel
      ? [
          {
            severity: answer.kernelEvidence?.source === 'rings' ? ('info' as const) : ('warning' as const),
            text: kernel,
          },
        ]
      : []),
    ...answer.missing.map((m) => ({ severity: 'warning' as const, text: `Missing evidence: ${m}` })),
  ];
}

/** The engine's critical path back from its frame (the icicle marks these spans). */
export function criticalPathOfFrame(
  f: DataFrame | undefined
): Array<{ spanId: string; onPathMs: number; skewCorrectedMs: number | null }> {
  if (!f) {
    return [];
  }
  const col = (name: string) => f.fields.find((x) => x.name === name)?.values ?? [];
  const [spanId, onPath, skew] = ['spanId', 'onPathMs', 'skewCorrectedMs'].map(col);
  return Array.from({ length: f.length }, (_, i) => ({
    spanId: spanId[i],
    onPathMs: onPath[i],
    skewCorrectedMs: skew[i] ?? null,
  }));
}
