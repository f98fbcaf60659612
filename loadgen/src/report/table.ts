/** The run summary as an aligned table for people (the JSON summary is for tools). */
import { fallbackSentence, meanRecall, taskCompletion } from '../../../contract/fallback';
import type { AppliedFault, RegressionVerdict, RunRequest, ThresholdVerdict } from '../../../contract/runs';
import type { Summary } from '../load/driver';
import { describeRegression } from '../load/regression';
import { describeCapacity } from './capacity';

const f = (v: number | null | undefined): string =>
  v !== null && v !== undefined && Number.isFinite(v) ? v.toFixed(1) : '-';
const pct = (v: number | null | undefined): string =>
  v !== null && v !== undefined ? `${(v * 100).toFixed(1)}%` : '-';

function requestLine(r: RunRequest): string {
  const trace = r.traceId ?? 'none';
  return `${f(r.e2eMs)} ms ${r.outcome}${r.detail ? ` ${r.detail}` : ''} ${r.route ?? ''} ${r.model ?? ''} trace ${trace}`.replace(
    /\s+/g,
    ' '
  );
}

export interface TableExtras {
  thresholds?: ThresholdVerdict[];
  regressions?: RegressionVerdict[];
  baseline?: string;
  faults?: AppliedFault[];
  scenarioNotes?: string[];
  /** How many of the slowest and failed requests to list. */
  listRequests?: number;
}

export function formatTable(sum: Summary, x: TableExtras = {}): string {
  const rows: Array<[string, string]> = [
    ['run id', sum.runId],
    ...(sum.scenario ? [['scenario', sum.scenario] as [string, string]] : []),
    ['target', sum.target],
    ['profile', `${sum.profile.kind} ${sum.profile.rps} rps, ${sum.profile.durationS} s, ${sum.profile.arrivals}`],
    [
      'sent / ok / degraded / errors / timeouts',
      `${sum.sent} / ${sum.succeeded} / ${sum.degraded} / ${sum.errors.total} / ${sum.timeouts}`,
    ],
    ['rps target / sent / completed', `${sum.rps.targetMean} / ${sum.rps.sent} / ${sum.rps.completed}`],
    [
      'latency ms p50 / p90 / p99 / max',
      `${f(sum.latencyMs.p50)} / ${f(sum.latencyMs.p90)} / ${f(sum.latencyMs.p99)} / ${f(sum.latencyMs.max)}`,
    ],
    ['TTFT ms p50 / p99', `${f(sum.ttftMs.p50)} / ${f(sum.ttftMs.p99)}`],
    ['ITL ms p50 / p99', `${f(sum.itlMs.p50)} / ${f(sum.itlMs.p99)}`],
    ['TPOT ms p50 / p99', `${f(sum.tpotMs.p50)} / ${f(sum.tpotMs.p99)}`],
    ['output tokens/s', f(sum.outputTokensPerS)],
    ['goodput rps (ratio)', `${sum.goodput.rps} (${(sum.goodput.ratio * 100).toFixed(1)}%)`],
    [
      'sent > 10 ms late',
      `${sum.schedule.lateOver10ms} (${(sum.schedule.lateRatio * 100).toFixed(2)}%), late p99 ${f(sum.schedule.lateP99Ms)} ms`,
    ],
    [
      'trace ids sent / traceresponse / none',
      `${sum.traceIds.sent} / ${sum.traceIds.traceresponse} / ${sum.traceIds.none}`,
    ],
  ];
  if (sum.capacity) rows.push(['capacity', describeCapacity(sum.capacity)]);
  for (const st of sum.steps ?? [])
    rows.push([
      `  step ${st.index + 1}`,
      `offered ${st.offeredRps} achieved ${st.achievedRps} good ${st.goodRps} req/s, SLOs ${st.sloHeld ? 'held' : 'BROKE'}, p99 ${f(st.e2eP99Ms)} ms`,
    ]);
  const q = sum.quality;
  if (q?.ragRecall.n) rows.push(['RAG recall (n)', `${pct(q.ragRecall.mean)} (${q.ragRecall.n})`]);
  if (q?.agentTaskCompletion.n)
    rows.push(['agent task completion (n)', `${pct(q.agentTaskCompletion.rate)} (${q.agentTaskCompletion.n})`]);
  const fb = sum.fallback;
  if (fb?.paths.some((p) => p.path === 'fallback')) {
    for (const p of fb.paths)
      rows.push([
        `${p.path} path ${p.model}`,
        `served ${p.served}, agent tasks ${pct(taskCompletion(p))} (${p.tasks.completed}/${p.tasks.n}), recall ${f(meanRecall(p))} (n ${p.recall.n})`,
      ]);
    rows.push(['fall-back', fallbackSentence(fb) ?? '-']);
  }
  for (const [k, v] of Object.entries(sum.errors.byKind)) rows.push([`errors: ${k}`, String(v)]);
  for (const [k, v] of Object.entries(sum.byModel))
    rows.push([`  ${k}`, `n=${v.count} p50 ${f(v.p50Ms)} p99 ${f(v.p99Ms)} ttft p99 ${f(v.ttftP99Ms)}`]);
  for (const a of x.faults ?? []) {
    const what = `${a.kind}${a.magnitude !== undefined ? ` ${a.magnitude}` : ''} on ${a.target}${a.pod ? ` (${a.pod})` : ''}`;
    rows.push([
      `fault at ${a.atS} s`,
      a.id
        ? `${what}, id ${a.id}${a.forS !== undefined ? `, ${a.forS} s` : ''}`
        : `${what}: ${a.error ?? 'not applied'}`,
    ]);
  }
  const w = Math.max(...rows.map(([k]) => k.length));
  const out = rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  const n = x.listRequests ?? 5;
  if (n && sum.slowest.length) out.push('slowest:', ...sum.slowest.slice(0, n).map((r) => `  ${requestLine(r)}`));
  if (n && sum.failed.length)
    out.push(
      `failed or degraded (${sum.failed.length} kept):`,
      ...sum.failed.slice(0, n).map((r) => `  ${requestLine(r)}`)
    );
  for (const t of x.thresholds ?? [])
    out.push(
      `threshold ${t.threshold}: ${t.pass ? 'pass' : 'FAIL'} (actual ${t.actual !== null ? Number(t.actual.toFixed(4)) : 'n/a'})`
    );
  const againstBaseline = (x.regressions ?? []).filter((r) => r.versus !== 'primary_path');
  if (againstBaseline.length) {
    out.push(`against baseline ${x.baseline ?? ''}:`.replace(/ :$/, ':'));
    for (const r of againstBaseline) out.push(`  ${describeRegression(r)}`);
  }
  const withinRun = (x.regressions ?? []).filter((r) => r.versus === 'primary_path');
  if (withinRun.length) {
    out.push('fall-back path against the primary path:');
    for (const r of withinRun) out.push(`  ${describeRegression(r)}`);
  }
  out.push(...sum.notes.map((m) => `note: ${m}`), ...(x.scenarioNotes ?? []).map((m) => `scenario: ${m}`));
  return out.join('\n');
}
