/**
 * The postmortem as Markdown: time range, trace ids with their ranked causes and evidence, the pod's kernel evidence,
 * injected faults and alerts, each with a link back into the app. Pure: the export service gathers, this renders.
 */
import {
  type Alert,
  appLink,
  appPaths,
  type FaultAnnotation,
  type RcaAnswer,
  type SourceStatus,
} from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import type { RangeRootCause, TraceRootCause } from './rca';
import { savedAnswerLinks } from './rca-answers';

export interface PostmortemData {
  range: TimeRange;
  /** Epoch ms of the export. */
  generatedMs: number;
  /** Where the app is opened (HOPSCOPE_APP_URL); links are built under it. */
  appUrl: string;
  view?: string;
  service?: string;
  /** A pod and its kernel events counted by type, with the exporters that could not answer. */
  pod?: { name: string; counts: Record<string, number>; failed: SourceStatus[] };
  /** Per trace id, its root cause or why there is none. */
  traces: Array<{ id: string; rca: TraceRootCause } | { id: string; error: string }>;
  /** Undefined: no chain control configured. */
  faults?: { status: SourceStatus; annotations: FaultAnnotation[] };
  alerts: Alert[];
  /** The window root cause of the range (the Explain page), or why there is none; undefined: not asked. */
  window?: RangeRootCause | { error: string };
}

const iso = (ms: number): string => new Date(ms).toISOString();
const md = (s: string): string => s.replace(/([\\`*_[\]|<>])/g, '\\$1');

/** An answer's verdict, its top candidates (table, then the evidence of the first three), its LLM phases, what is missing. */
function rankedLines(a: RcaAnswer): string[] {
  const lines: string[] = [];
  if (a.verdict) lines.push(`**Verdict:** ${md(a.verdict)}`, '');
  lines.push('| rank | service | pod | operation | score | self ms | baseline ms |', '|---|---|---|---|---|---|---|');
  for (const c of a.candidates.slice(0, 5)) {
    lines.push(
      `| ${c.rank} | ${md(c.service)} | ${md(c.pod)} | ${md(c.operation ?? '')} | ${c.score.toFixed(2)} | ${c.selfMs?.toFixed(1) ?? ''} | ${c.baselineMs?.toFixed(1) ?? ''} |`
    );
  }
  lines.push('');
  for (const c of a.candidates.slice(0, 3)) {
    lines.push(`**#${c.rank} ${md(c.service)} / ${md(c.pod)}** — evidence:`);
    for (const e of c.evidence) lines.push(`- \`${e.kind}\`: ${md(e.summary)}`);
    lines.push('');
  }
  for (const l of (a.llmPhases ?? []).slice(0, 3)) {
    const phases = l.phases
      .map(
        (p) =>
          `${p.name} ${p.durationMs.toFixed(1)} ms${p.baselineMs !== undefined ? ` (usually ${p.baselineMs.toFixed(1)})` : ''}`
      )
      .join(', ');
    lines.push(`- LLM span ${md(l.service)} / ${md(l.pod)} (${l.engine}, ${md(l.source)}): ${md(phases)}`);
  }
  if (a.llmPhases?.length) lines.push('');
  if (a.missing.length) lines.push('Missing evidence:', ...a.missing.map((m) => `- ${md(m)}`), '');
  return lines;
}

/** "Explain this window": the range's root cause against the hour before, with what it read. */
function windowLines(w: RangeRootCause | { error: string }, href: string): string[] {
  const lines = ['## Window root cause', ''];
  if ('error' in w) return [...lines, `Window root cause unavailable: ${md(w.error)}`, ''];
  lines.push(
    `[Explain this window](${href}): ${w.window.anomalousTraces} of ${w.window.traces} trace(s) slower than the hour before; ${md(w.sample.how)}.`,
    ''
  );
  return [...lines, ...rankedLines(w)];
}

export function renderPostmortem(d: PostmortemData): string {
  const { range } = d;
  const link = (path: string, query: Record<string, string | number> = {}): string => appLink(d.appUrl, path, query);
  const rangeQuery = { from: range.from, to: range.to };
  const lines: string[] = [];
  lines.push('# Postmortem: Hopscope export', '');
  lines.push(
    `- **Time range:** ${iso(range.from)} → ${iso(range.to)} (${Math.round((range.to - range.from) / 60_000)} min)`
  );
  lines.push(`- **Generated:** ${iso(d.generatedMs)}`);
  if (d.view) lines.push(`- **View:** [${md(d.view)}](${link(d.view)})`);
  lines.push(`- **Overview:** [golden metrics](${link(appPaths.overview(), rangeQuery)})`, '');
  if (d.service) lines.push(`- **Service:** [${md(d.service)}](${link(appPaths.service(d.service), rangeQuery)})`);
  if (d.pod) {
    const { name, counts } = d.pod;
    lines.push(`- **Pod:** ${md(name)}`);
    const list = Object.entries(counts)
      .map(([t, n]) => `${t} ×${n}`)
      .join(', ');
    const failed = d.pod.failed.map((x) => x.error).join('; ');
    lines.push(
      `- **Kernel evidence on ${md(name)}:** ${list || 'none'}${failed ? ` (unavailable from: ${md(failed)})` : ''}`
    );
  }
  lines.push('');
  lines.push('## Traces and ranked causes', '');
  if (!d.traces.length) lines.push('_No trace ids given (add `traceId=` to the export)._', '');
  for (const x of d.traces) {
    lines.push(`### Trace [\`${x.id}\`](${link(appPaths.trace(x.id), rangeQuery)})`, '');
    if ('error' in x) {
      lines.push(`Root cause unavailable: ${md(x.error)}`, '');
      continue;
    }
    const a = x.rca;
    lines.push(`Root cause computed in ${a.tookMs.toFixed(1)} ms${a.partial ? ' (partial trace)' : ''}.`, '');
    // Saved answers stay readable after the trace and the exporters' rings are gone.
    for (const sv of a.saved ?? []) {
      const l = savedAnswerLinks(d.appUrl, sv);
      lines.push(
        `- **Saved answer** [${md(sv.title ?? sv.id)}](${l.api}) (saved ${iso(sv.createdMs)}, id \`${sv.id}\`)`
      );
    }
    if (a.saved?.length) lines.push('');
    if (a.kernelEvidence && a.kernelEvidence.source !== 'rings')
      lines.push(
        `Kernel evidence: ${a.kernelEvidence.source === 'kept' ? 'the notable events kept in the database' : a.kernelEvidence.source === 'rings+kept' ? "the exporters' rings and the notable events kept in the database" : 'none'}.`,
        ''
      );
    lines.push(...rankedLines(a));
  }
  if (d.window) lines.push(...windowLines(d.window, link(appPaths.explain(), rangeQuery)));
  lines.push('## Injected faults in range', '');
  if (!d.faults) lines.push('_No chain control configured._');
  else if (!d.faults.status.ok) lines.push(`_Unavailable: ${md(d.faults.status.error ?? '')}_`);
  else if (!d.faults.annotations.length) lines.push('_None._');
  for (const f of d.faults?.annotations ?? [])
    lines.push(
      `- ${md(f.kind)} on ${md(f.target)}${f.magnitude !== undefined ? ` (magnitude ${f.magnitude})` : ''}: ${iso(f.startMs)} → ${f.endMs ? iso(f.endMs) : 'ongoing'}`
    );
  lines.push('', '## Alerts', '');
  if (!d.alerts.length) lines.push('_None in range._');
  for (const a of d.alerts)
    lines.push(`- **${a.state}** ${md(a.summary)} since ${iso(a.startsAt)} — [drill down](${link(a.link)})`);
  lines.push('');
  return lines.join('\n');
}
