/**
 * Load-test runs → frames: the runs list (each run linking to its page over its own window, verdict coloured, live
 * figures while it runs), one run's record in parts (summary, threshold and regression verdicts, faults as annotations
 * and as a table, the quality/baseline row, the slowest and the failed requests, each one click from its trace's root
 * cause), the compare with another run (ranked hops with their evidence, per-hop deltas with a bar per hop, the
 * client's figures side by side) and client vs server TTFT (series per side, figures per clock, the gap part by part).
 */
import type { DataFrame, DataLink, DataTopic, FieldConfig, QueryResultMetaNotice, ValueMapping } from '@grafana/data';

import { appPaths, withQuery } from '../../../contract/app-urls';
import { appliedAs } from './fault-applied-as';
import type {
  Capacity,
  AppliedFault,
  RunCompareAnswer,
  RunList,
  RunListItem,
  RunRecord,
  RunRequest,
  RunStatus,
  RunTtftAnswer,
  TtftLayerName,
} from '../../../contract';
import { partRefId } from '../query';
import { columns, field, frame, NUMBER, OTHER, STRING, TIME } from './frame';
import { HIDDEN } from './links';
import { evidenceText } from './traces';

/** The window a run's page and its links are pinned to: start … end, or … now while it runs. */
export function runWindow(run: Pick<RunListItem, 'startMs' | 'endMs' | 'status'>): {
  from: number;
  to: number | 'now';
} {
  return { from: run.startMs, to: run.status === 'running' || run.endMs === null ? 'now' : run.endMs };
}

/** The run's page over the run's window (from/to in the link, so a pasted link opens the same view). */
export function runUrl(
  run: Pick<RunListItem, 'runId' | 'startMs' | 'endMs' | 'status'>,
  extra: Record<string, string | undefined> = {}
): string {
  const w = runWindow(run);
  return withQuery(appPaths.run(run.runId), { from: w.from, to: typeof w.to === 'number' ? w.to : 'now', ...extra });
}

/** A link whose URL is the row's own (a hidden field holding path and query), one click on the cell. */
export function rowLink(title: string, urlField: string): DataLink {
  return { title, url: `\${__data.fields.${urlField}:raw}`, oneClick: true } as DataLink;
}

/** A verdict coloured by the theme's named colours (Grafana's value mappings; the cell draws the colour). */
const VERDICT_MAPPINGS: ValueMapping[] = [
  {
    type: 'value' as never,
    options: {
      passed: { text: 'passed', color: 'green', index: 0 },
      failed: { text: 'failed', color: 'red', index: 1 },
      aborted: { text: 'aborted', color: 'orange', index: 2 },
      running: { text: 'running', color: 'blue', index: 3 },
      pass: { text: 'pass', color: 'green', index: 4 },
      FAIL: { text: 'FAIL', color: 'red', index: 5 },
    },
  } as ValueMapping,
];
const VERDICT: FieldConfig = { mappings: VERDICT_MAPPINGS, custom: { cellOptions: { type: 'color-text' } } };

const elapsedS = (r: RunListItem, now: number): number => Math.max(0, ((r.endMs ?? now) - r.startMs) / 1000);

/** What a running run has done so far, from its workers' latest heartbeats. */
function liveText(r: RunListItem, now: number): string {
  if (r.status !== 'running' || !r.live) {
    return '';
  }
  const ago = Math.max(0, Math.round((now - r.live.lastHeartbeatMs) / 1000));
  return `${r.live.sent} sent · ${r.live.completed} done · ${r.live.errors} errors · ${r.live.inFlight} in flight (${ago} s ago)`;
}

/** The runs list: one row per run, newest first; a running run's duration, rate and errors are its live figures. */
export function runsFrame(list: RunList, now: number, name = 'runs'): DataFrame {
  const r = list.runs;
  const running = (x: RunListItem) => x.status === 'running';
  return frame(
    columns(r, [
      [
        'runId',
        STRING,
        (x) => x.runId,
        { displayName: 'Run', custom: { width: 170 }, links: [rowLink('Open this run', 'runUrl')] },
      ],
      ['runUrl', STRING, (x) => runUrl(x), HIDDEN],
      ['scenario', STRING, (x) => x.scenario, { displayName: 'Scenario', custom: { width: 140 } }],
      [
        'status',
        STRING,
        (x) => x.status,
        { displayName: 'Verdict', ...VERDICT, custom: { ...VERDICT.custom, width: 85 } },
      ],
      ['start', TIME, (x) => x.startMs, { displayName: 'Start', unit: 'time:MM-DD HH:mm:ss', custom: { width: 130 } }],
      [
        'duration',
        NUMBER,
        (x) => (running(x) ? elapsedS(x, now) : (x.durationS ?? elapsedS(x, now))),
        { displayName: 'Duration', unit: 's', decimals: 0, custom: { width: 85 } },
      ],
      [
        'targetRps',
        NUMBER,
        (x) => x.targetRps,
        { displayName: 'Target', unit: 'reqps', decimals: 1, custom: { width: 85 } },
      ],
      [
        'achievedRps',
        NUMBER,
        (x) => (running(x) && x.live ? x.live.completed / Math.max(1, elapsedS(x, now)) : x.achievedRps),
        { displayName: 'Achieved', unit: 'reqps', decimals: 1, custom: { width: 90 } },
      ],
      [
        'ttftP99',
        NUMBER,
        (x) => x.ttftP99Ms,
        { displayName: 'Client TTFT P99', unit: 'ms', decimals: 0, custom: { width: 125 } },
      ],
      ['e2eP99', NUMBER, (x) => x.e2eP99Ms, { displayName: 'E2E P99', unit: 'ms', decimals: 0, custom: { width: 85 } }],
      [
        'goodput',
        NUMBER,
        (x) => x.goodputRatio,
        { displayName: 'Goodput', unit: 'percentunit', decimals: 1, custom: { width: 85 } },
      ],
      [
        'errors',
        NUMBER,
        (x) => (running(x) && x.live ? x.live.errors : x.errors),
        { displayName: 'Errors', decimals: 0, custom: { width: 70 } },
      ],
      [
        'errorRate',
        NUMBER,
        (x) => x.errorRate,
        { displayName: 'Error rate', unit: 'percentunit', decimals: 2, custom: { width: 85 } },
      ],
      ['live', STRING, (x) => liveText(x, now), { displayName: 'Live' }],
    ]),
    { name, meta: { custom: { total: list.total, running: r.filter(running).length } } }
  );
}

/** Each run's start … end (… now while it runs) as an annotation region, for the time series of other pages. */
export function runMarksFrame(list: RunList, now: number): DataFrame {
  const r = list.runs;
  const title = (x: RunListItem) => `run ${x.runId} (${x.scenario}): ${x.status}`;
  return frame(
    columns(r, [
      ['time', TIME, (x) => x.startMs],
      ['timeEnd', TIME, (x) => x.endMs ?? now],
      ['title', STRING, title],
      ['text', STRING, (x) => `${title(x)} — ${x.endMs === null ? 'started, still running' : 'start … end'}`],
      ['tags', OTHER, (x) => ['run', x.scenario, x.status]],
    ]),
    { name: 'runs', meta: { dataTopic: 'annotations' as unknown as DataTopic } }
  );
}

export function runsNotices(list: RunList): QueryResultMetaNotice[] {
  return list.total > list.runs.length
    ? [{ severity: 'info', text: `Showing the newest ${list.runs.length} of ${list.total} runs in this range` }]
    : [];
}

/** The part refIds of a run's record (`<refId>:<part>`; the summary is the query's own refId). */
export const RUN_PARTS = ['thresholds', 'faults', 'faultList', 'quality', 'slowest', 'failed'] as const;
export type RunPart = 'summary' | (typeof RUN_PARTS)[number];

const ANNOTATIONS = 'annotations' as unknown as DataTopic;

/** A fault's window: as applied (start/end the load generator saw), else as scheduled from the run's start. */
export function faultWindow(
  run: Pick<RunRecord, 'startMs' | 'endMs'>,
  f: AppliedFault
): { start: number; end: number } {
  const start = f.startMs ?? run.startMs + f.atS * 1000;
  const end = f.endMs ?? (f.forS !== undefined ? start + f.forS * 1000 : (run.endMs ?? start));
  return { start, end: Math.max(start, end) };
}

const faultTitle = (f: AppliedFault): string =>
  `fault ${f.kind} on ${f.target}${f.pod ? ` (${f.pod})` : ''}${f.magnitude !== undefined ? `, magnitude ${f.magnitude}` : ''}`;

/** The faults of the run's schedule as annotations (Scenes' annotations layer marks them on every time series). */
export function runFaultAnnotations(run: RunRecord): DataFrame {
  const f = run.faults;
  const w = f.map((x) => faultWindow(run, x));
  return frame(
    [
      ...columns(w, [
        ['time', TIME, (x) => x.start],
        ['timeEnd', TIME, (x) => x.end],
      ]),
      ...columns(f, [
        ['title', STRING, faultTitle],
        [
          'text',
          STRING,
          (x) => `${faultTitle(x)}${x.error ? ` — not applied: ${x.error}` : x.id ? ` (${appliedAs(x)})` : ''}`,
        ],
        ['tags', OTHER, (x) => ['fault', x.kind, x.target]],
      ]),
    ],
    { name: 'run faults', meta: { dataTopic: ANNOTATIONS } }
  );
}

/** Its trace was kept: a trace id whose trace was sampled (records before `traceSampled` was kept: as they linked). */
const traceKept = (q: RunRequest): q is RunRequest & { traceId: string } =>
  q.traceId !== null && q.traceSampled !== false;

const noTrace = (q: RunRequest): string => (q.traceId ? 'trace not sampled' : 'no trace id from the server');

/**
 * The request tables: the trace cell opens its root cause (keeping the run's window) only when its trace was sampled;
 * an untraced or unsampled request says so and opens the traces of its own window (an error's spans may be kept).
 */
export function requestsFrame(run: RunRecord, requests: RunRequest[], name: string, refId: string): DataFrame {
  const w = runWindow(run);
  const to = typeof w.to === 'number' ? w.to : 'now';
  const url = (q: RunRequest) =>
    traceKept(q)
      ? withQuery(appPaths.trace(q.traceId), { from: w.from, to })
      : // No kept trace: the traces of the request's own window, where it may still be found.
        withQuery(appPaths.traces(), { from: Math.floor(q.startMs - 1000), to: Math.ceil(q.startMs + q.e2eMs + 1000) });
  return frame(
    columns(requests, [
      [
        'trace',
        STRING,
        (q) => (traceKept(q) ? q.traceId : noTrace(q)),
        { displayName: 'Trace', custom: { width: 300 }, links: [rowLink('${__data.fields.linkTitle}', 'traceUrl')] },
      ],
      ['traceUrl', STRING, url, HIDDEN],
      [
        'linkTitle',
        STRING,
        (q) =>
          traceKept(q)
            ? 'Root cause of this trace'
            : `${noTrace(q).charAt(0).toUpperCase()}${noTrace(q).slice(1)}: the traces of its window`,
        HIDDEN,
      ],
      ['start', TIME, (q) => q.startMs, { displayName: 'Sent', unit: 'time:HH:mm:ss.SSS', custom: { width: 100 } }],
      ['e2e', NUMBER, (q) => q.e2eMs, { displayName: 'E2E', unit: 'ms', decimals: 0, custom: { width: 75 } }],
      ['ttft', NUMBER, (q) => q.ttftMs, { displayName: 'TTFT', unit: 'ms', decimals: 0, custom: { width: 75 } }],
      ['outcome', STRING, (q) => q.outcome, { displayName: 'Outcome', custom: { width: 80 } }],
      ['route', STRING, (q) => q.route ?? '', { displayName: 'Route', custom: { width: 60 } }],
      ['backend', STRING, (q) => q.backend ?? '', { displayName: 'Backend', custom: { width: 70 } }],
      ['model', STRING, (q) => q.model ?? '', { displayName: 'Model' }],
      ['detail', STRING, (q) => q.detail ?? '', { displayName: 'Detail' }],
      ['traceIdSource', STRING, (q) => q.traceIdSource, HIDDEN],
    ]),
    { name, refId }
  );
}

/** One run's record, part by part (see RUN_PARTS). */
/** A one-row column (the summary and quality parts are one row each). */
function one<T>(v: T): T[] {
  return [v];
}

export function runFrames(run: RunRecord, refId: string, now: number): DataFrame[] {
  const s = run.summary;
  const live = run.status === 'running' ? run.live : null;
  const elapsed = Math.max(0, ((run.endMs ?? now) - run.startMs) / 1000);
  const summary = frame(
    [
      field('status', STRING, one(run.status), { displayName: 'Verdict', ...VERDICT }),
      field('duration', NUMBER, one(run.durationS ?? elapsed), { displayName: 'Duration', unit: 's', decimals: 0 }),
      field('targetRps', NUMBER, one(run.targetRps), { displayName: 'Target rate', unit: 'reqps', decimals: 1 }),
      field('achievedRps', NUMBER, one(live ? live.completed / Math.max(1, elapsed) : run.achievedRps), {
        displayName: 'Achieved rate',
        unit: 'reqps',
        decimals: 1,
      }),
      field('ttftP99', NUMBER, one(run.ttftP99Ms), { displayName: 'Client TTFT P99', unit: 'ms', decimals: 0 }),
      field('e2eP99', NUMBER, one(run.e2eP99Ms), { displayName: 'E2E P99', unit: 'ms', decimals: 0 }),
      field('goodput', NUMBER, one(run.goodputRatio), { displayName: 'Goodput', unit: 'percentunit', decimals: 1 }),
      field('errors', NUMBER, one(live ? live.errors : run.errors), { displayName: 'Errors', decimals: 0 }),
      field('sent', NUMBER, one(live ? live.sent : (s?.sent ?? null)), { displayName: 'Requests sent', decimals: 0 }),
    ],
    { name: 'summary', refId }
  );
  const verdicts = [
    ...run.thresholds.map((t) => ({
      kind: 'threshold',
      rule: t.threshold,
      metric: t.metric,
      actual: t.actual,
      baseline: null as number | null,
      delta: null as number | null,
      pass: t.pass,
    })),
    ...run.regressions.map((g) => ({
      kind: `regression vs ${run.baselineRunId ?? 'baseline'}`,
      rule: `${g.metric}:${g.allowed}`,
      metric: g.metric,
      actual: g.actual,
      baseline: g.baseline,
      delta: g.deltaRatio ?? g.delta,
      pass: g.pass,
    })),
  ];
  const thresholds = frame(
    columns(verdicts, [
      [
        'verdict',
        STRING,
        (v) => (v.pass ? 'pass' : 'FAIL'),
        { displayName: 'Verdict', ...VERDICT, custom: { ...VERDICT.custom, width: 70 } },
      ],
      ['kind', STRING, (v) => v.kind, { displayName: 'Gate', custom: { width: 170 } }],
      ['rule', STRING, (v) => v.rule, { displayName: 'Rule', custom: { width: 130 } }],
      ['actual', NUMBER, (v) => v.actual, { displayName: 'Actual', decimals: 2, custom: { width: 90 } }],
      ['baseline', NUMBER, (v) => v.baseline, { displayName: 'Baseline', decimals: 2, custom: { width: 90 } }],
      ['delta', NUMBER, (v) => v.delta, { displayName: 'Change', decimals: 2 }],
    ]),
    { name: 'thresholds', refId: partRefId(refId, 'thresholds') }
  );
  const fw = run.faults.map((f) => faultWindow(run, f));
  const faultList = frame(
    [
      ...columns(run.faults, [
        ['target', STRING, (f) => f.target, { displayName: 'Hop', custom: { width: 100 } }],
        ['kind', STRING, (f) => f.kind, { displayName: 'Fault', custom: { width: 110 } }],
        ['magnitude', NUMBER, (f) => f.magnitude ?? null, { displayName: 'Magnitude', custom: { width: 90 } }],
      ]),
      ...columns(fw, [
        ['start', TIME, (w) => w.start, { displayName: 'From', unit: 'time:HH:mm:ss', custom: { width: 80 } }],
        ['end', TIME, (w) => w.end, { displayName: 'To', unit: 'time:HH:mm:ss', custom: { width: 80 } }],
      ]),
      field(
        'applied',
        STRING,
        run.faults.map((f) => (f.error ? `not applied: ${f.error}` : f.id ? `applied (${appliedAs(f)})` : 'scheduled')),
        { displayName: 'Applied' }
      ),
    ],
    { name: 'faults', refId: partRefId(refId, 'faultList') }
  );
  const q = s?.quality;
  const quality = frame(
    [
      field('scenario', STRING, one(run.scenario), { displayName: 'Scenario', custom: { width: 160 } }),
      field('run', STRING, one(run.runId), { displayName: 'Run', custom: { width: 160 } }),
      field('ttftMean', NUMBER, one(s?.ttftMs.mean ?? null), { displayName: 'Average TTFT', unit: 'ms', decimals: 1 }),
      field('ragRecall', NUMBER, one(q?.ragRecall.mean ?? null), {
        displayName: 'RAG recall',
        unit: 'percentunit',
        decimals: 1,
        noValue: 'no expected documents',
        custom: { width: 170 },
      }),
      field('ragN', NUMBER, one(q?.ragRecall.n ?? null), { displayName: 'Graded RAG answers', decimals: 0 }),
      field('agentCompletion', NUMBER, one(q?.agentTaskCompletion.rate ?? null), {
        displayName: 'Agent task completion',
        unit: 'percentunit',
        decimals: 1,
        noValue: 'no agent requests',
        custom: { width: 180 },
      }),
      field('agentN', NUMBER, one(q?.agentTaskCompletion.n ?? null), { displayName: 'Agent answers', decimals: 0 }),
    ],
    { name: 'quality', refId: partRefId(refId, 'quality') }
  );
  return [
    summary,
    thresholds,
    { ...runFaultAnnotations(run), refId: partRefId(refId, 'faults') },
    faultList,
    quality,
    requestsFrame(run, run.slowest, 'slowest requests', partRefId(refId, 'slowest')),
    requestsFrame(run, run.failed, 'failed requests', partRefId(refId, 'failed')),
  ];
}

export function runNotices(run: RunRecord): QueryResultMetaNotice[] {
  const n: QueryResultMetaNotice[] = [];
  if (run.status === 'running') {
    n.push({
      severity: 'info',
      text: "Running: figures are the workers' latest heartbeats; the summary comes when every worker has finished.",
    });
  }
  if (run.abortReason) {
    n.push({ severity: 'warning', text: `Aborted: ${run.abortReason}` });
  }
  if (run.merge) {
    n.push({
      severity: 'info',
      text: `${run.merge.workers} workers merged (${run.merge.percentiles} percentiles): ${run.merge.note}`,
    });
  }
  if (run.summary?.untraced) {
    n.push({ severity: 'info', text: `${run.summary.untraced} requests had no trace id from the server` });
  }
  return n;
}

/** Which hop changed: ranked candidates, per-hop deltas (a bar per hop in the table), the client's figures side by side. */
/**
 * Both runs' capacity for the side-by-side table (issue 19): each run's highest good rate and knee, from its own run
 * record (`capacity`; null for a run that is not a sweep or a ramp).
 */
export interface CompareCapacities {
  run: Capacity | null | undefined;
  baseline: Capacity | null | undefined;
}

export function runCompareFrames(a: RunCompareAnswer, refId: string, capacities?: CompareCapacities): DataFrame[] {
  const c = a.candidates;
  const candidates = frame(
    columns(c, [
      ['rank', NUMBER, (x) => x.rank, { displayName: '#', decimals: 0, custom: { width: 40 } }],
      ['service', STRING, (x) => x.service, { displayName: 'Hop', custom: { width: 110 } }],
      ['operation', STRING, (x) => x.operation ?? '', { displayName: 'Operation', custom: { width: 150 } }],
      ['score', NUMBER, (x) => x.score, { displayName: 'Score', decimals: 2, custom: { width: 70 } }],
      ['pod', STRING, (x) => x.pod, { displayName: 'Pod', custom: { width: 130 } }],
      [
        'selfMs',
        NUMBER,
        (x) => x.selfMs ?? null,
        { displayName: 'Own time, summed', unit: 'ms', decimals: 1, custom: { width: 120 } },
      ],
      [
        'baselineMs',
        NUMBER,
        (x) => x.baselineMs ?? null,
        { displayName: 'Its baseline, summed', unit: 'ms', decimals: 1, custom: { width: 140 } },
      ],
      ['evidence', STRING, evidenceText, { displayName: 'Evidence' }],
    ]),
    { name: 'ranked hops', refId, meta: { custom: { tookMs: a.tookMs } } }
  );
  const h = a.hops;
  const d99 = (x: RunCompareAnswer['hops'][number]) =>
    x.runP99Ms !== null && x.baselineP99Ms !== null ? x.runP99Ms - x.baselineP99Ms : null;
  const hops = frame(
    columns(h, [
      [
        'hop',
        STRING,
        (x) => `${x.service}${x.operation ? ` ${x.operation}` : ''}`,
        { displayName: 'Hop', custom: { width: 240 } },
      ],
      [
        'deltaP50',
        NUMBER,
        (x) => x.deltaP50Ms,
        {
          displayName: 'Δ own time P50',
          unit: 'ms',
          decimals: 1,
          custom: { width: 170, cellOptions: { type: 'gauge', mode: 'basic', valueDisplayMode: 'text' } },
          color: { mode: 'continuous-GrYlRd' as never },
          min: 0,
        },
      ],
      ['deltaP99', NUMBER, d99, { displayName: 'Δ own time P99', unit: 'ms', decimals: 1 }],
      ['runP50', NUMBER, (x) => x.runP50Ms, { displayName: 'This run P50', unit: 'ms', decimals: 1 }],
      ['baselineP50', NUMBER, (x) => x.baselineP50Ms, { displayName: 'Other run P50', unit: 'ms', decimals: 1 }],
      ['runP99', NUMBER, (x) => x.runP99Ms, { displayName: 'This run P99', unit: 'ms', decimals: 1 }],
      ['baselineP99', NUMBER, (x) => x.baselineP99Ms, { displayName: 'Other run P99', unit: 'ms', decimals: 1 }],
      ['runCount', NUMBER, (x) => x.runCount, { displayName: 'Spans (this run)', decimals: 0 }],
      ['baselineCount', NUMBER, (x) => x.baselineCount, { displayName: 'Spans (other run)', decimals: 0 }],
    ]),
    { name: 'per-hop deltas', refId: partRefId(refId, 'hops') }
  );
  const rows: Array<[string, number | null, number | null, string]> = [
    ['Client E2E P99', a.client.run.e2eP99Ms, a.client.baseline.e2eP99Ms, 'ms'],
    ['Client TTFT P99', a.client.run.ttftP99Ms, a.client.baseline.ttftP99Ms, 'ms'],
    ['Error rate', a.client.run.errorRate, a.client.baseline.errorRate, 'percentunit'],
    ['Traces read', a.traces.run, a.traces.baseline, 'none'],
  ];
  // A sweep's or ramp's capacity, when either run has one: the knee is null in a run that never saturated.
  if (capacities?.run || capacities?.baseline) {
    rows.push(
      ['Max good rate (req/s)', capacities.run?.maxGoodRps ?? null, capacities.baseline?.maxGoodRps ?? null, 'reqps'],
      ['Knee (req/s)', capacities.run?.kneeRps ?? null, capacities.baseline?.kneeRps ?? null, 'reqps']
    );
  }
  const change = (x: number | null, y: number | null) => (x !== null && y !== null && y !== 0 ? (x - y) / y : null);
  const client = frame(
    columns(rows, [
      ['figure', STRING, (r) => r[0], { displayName: 'Figure', custom: { width: 140 } }],
      ['run', NUMBER, (r) => r[1], { displayName: a.runId, decimals: 3 }],
      ['baseline', NUMBER, (r) => r[2], { displayName: a.baselineRunId, decimals: 3 }],
      ['change', NUMBER, (r) => change(r[1], r[2]), { displayName: 'Change', unit: 'percentunit', decimals: 1 }],
    ]),
    { name: 'client side by side', refId: partRefId(refId, 'client') }
  );
  return [candidates, hops, client];
}

export function runCompareNotices(a: RunCompareAnswer): QueryResultMetaNotice[] {
  return [
    {
      severity: 'info',
      text: `Ranked in ${a.tookMs.toFixed(1)} ms from ${a.traces.run} traces of ${a.runId} against ${a.traces.baseline} of ${a.baselineRunId} (${a.traces.source}${a.traces.sampled ? ', sampled' : ''})`,
    },
    ...a.missing.map((m) => ({ severity: 'warning' as const, text: `Missing: ${m}` })),
  ];
}

const SERIES_NAMES: Partial<Record<TtftLayerName, string>> = { client: 'Client', server: 'vLLM' };

/** Client vs server TTFT: P50/P99 over time per side (part `series`), the figures per clock (`layers`), the gap (`gap`). */
export function runTtftFrames(a: RunTtftAnswer, refId: string): DataFrame[] {
  const series = a.series.map((s) => {
    const name = `${SERIES_NAMES[s.layer] ?? s.layer} TTFT ${s.stat.toUpperCase()}`;
    return frame(
      [
        field(
          'time',
          TIME,
          s.points.map((p) => p[0])
        ),
        field(
          name,
          NUMBER,
          s.points.map((p) => p[1]),
          {
            unit: 'ms',
            decimals: 1,
            displayNameFromDS: name,
            ...(s.stat === 'p50' ? { custom: { lineStyle: { fill: 'dash', dash: [6, 4] } } } : {}),
          }
        ),
      ],
      { name, refId: partRefId(refId, 'series'), meta: { executedQueryString: s.query } }
    );
  });
  const l = a.layers;
  const layers = frame(
    columns(l, [
      ['layer', STRING, (x) => x.label, { displayName: 'Clock', custom: { width: 190 } }],
      [
        'covers',
        STRING,
        (x) => x.covers,
        { displayName: 'From → to', custom: { cellOptions: { type: 'auto', wrapText: true } } },
      ],
      [
        'count',
        NUMBER,
        (x) => x.figures?.count ?? null,
        { displayName: 'Requests', decimals: 0, custom: { width: 80 } },
      ],
      [
        'mean',
        NUMBER,
        (x) => x.figures?.meanMs ?? null,
        { displayName: 'Mean', unit: 'ms', decimals: 1, custom: { width: 80 } },
      ],
      [
        'p50',
        NUMBER,
        (x) => x.figures?.p50Ms ?? null,
        { displayName: 'P50', unit: 'ms', decimals: 1, custom: { width: 80 } },
      ],
      [
        'p90',
        NUMBER,
        (x) => x.figures?.p90Ms ?? null,
        { displayName: 'P90', unit: 'ms', decimals: 1, custom: { width: 80 } },
      ],
      [
        'p99',
        NUMBER,
        (x) => x.figures?.p99Ms ?? null,
        { displayName: 'P99', unit: 'ms', decimals: 1, custom: { width: 80 } },
      ],
      ['metric', STRING, (x) => x.figures?.metric ?? 'no data in the window', { displayName: 'Metric' }],
    ]),
    { name: 'TTFT per clock', refId: partRefId(refId, 'layers') }
  );
  const p = a.gap.parts;
  const clientMean = l.find((x) => x.layer === 'client')?.figures?.meanMs ?? null;
  const gap = frame(
    columns(p, [
      ['part', STRING, (x) => x.label, { displayName: "Part of the client's mean TTFT", custom: { width: 560 } }],
      ['mean', NUMBER, (x) => x.meanMs, { displayName: 'Mean', unit: 'ms', decimals: 1, custom: { width: 80 } }],
      [
        'share',
        NUMBER,
        (x) => (x.meanMs !== null && clientMean ? x.meanMs / clientMean : null),
        {
          displayName: 'Share',
          unit: 'percentunit',
          decimals: 0,
          min: 0,
          max: 1,
          custom: { width: 150, cellOptions: { type: 'gauge', mode: 'basic', valueDisplayMode: 'text' } },
        },
      ],
      [
        'how',
        STRING,
        (x) => (x.measured ? `measured: ${x.source}` : `remainder: ${x.source}`),
        { displayName: 'How it is known' },
      ],
      [
        'side',
        STRING,
        (x) => (x.side === 'gap' ? 'before vLLM (the gap)' : "inside vLLM's TTFT"),
        { displayName: 'Where', custom: { width: 160 } },
      ],
    ]),
    {
      name: 'TTFT gap',
      refId: partRefId(refId, 'gap'),
      meta: { custom: { meanMs: a.gap.meanMs, p99DifferenceMs: a.gap.p99DifferenceMs } },
    }
  );
  return [...series, layers, gap];
}

export function runTtftNotices(a: RunTtftAnswer): QueryResultMetaNotice[] {
  return [
    ...a.notes.map((text) => ({ severity: 'info' as const, text })),
    ...a.missing.map((m) => ({ severity: 'warning' as const, text: `Missing: ${m}` })),
  ];
}

/** The run statuses, for the list's filter. */
export const RUN_STATUSES: RunStatus[] = ['running', 'passed', 'failed', 'aborted'];
