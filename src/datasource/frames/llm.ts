/**
 * Inside the inference server: a root-cause answer's LLM spans (`llmPhases`, each vLLM / SGLang / TGI request split
 * into the phases the engine itself reports) as two tables — every phase against its healthy baseline, and the
 * engine's state on that pod at that time, each figure with the metric it was read from (provenance: the metric
 * name Prometheus had, the instant evaluated, the scrape interval). Absent figures are left out, never shown as 0.
 */
import type { DataFrame } from '@grafana/data';

import type { EngineState, LlmPhases } from '../../../contract';
import { columns, frame, NUMBER, STRING, TIME } from './frame';

/** The parts of a root-cause query that hold them (`partRefId(refId, …)`). */
export const LLM_PHASES_PART = 'llmPhases';
export const ENGINE_STATE_PART = 'engineState';

const ENGINES: Record<LlmPhases['engine'], string> = { vllm: 'vLLM', sglang: 'SGLang', tgi: 'TGI' };

interface PhaseRow {
  span: string;
  engine: string;
  phase: string;
  durationMs: number;
  baselineMs: number | null;
  /** durationMs / baselineMs (null without a baseline, or a zero one). */
  ratio: number | null;
  source: string;
  spanId: string;
}

/** `llm-vllm · llm-vllm-1`, and the span id's head when the answer holds several spans of one pod. */
function spanLabels(list: LlmPhases[]): string[] {
  const base = list.map((l) => `${l.service} · ${l.pod}`);
  return base.map((b, i) => (base.filter((x) => x === b).length > 1 ? `${b} (${list[i].spanId.slice(0, 8)})` : b));
}

export function phaseRows(list: LlmPhases[]): PhaseRow[] {
  const labels = spanLabels(list);
  return list.flatMap((l, i) =>
    l.phases.map((p) => ({
      span: labels[i],
      engine: ENGINES[l.engine],
      phase: p.name,
      durationMs: p.durationMs,
      baselineMs: p.baselineMs ?? null,
      ratio: p.baselineMs ? p.durationMs / p.baselineMs : null,
      source: l.source,
      spanId: l.spanId,
    }))
  );
}

/** Each phase of each LLM span: what it took, the usual, and how many times the usual (red past 2×). */
export function llmPhasesFrame(list: LlmPhases[], refId: string): DataFrame {
  return frame(
    columns(phaseRows(list), [
      ['span', STRING, (r) => r.span, { displayName: 'LLM span (service · pod)', custom: { minWidth: 150 } }],
      ['engine', STRING, (r) => r.engine, { displayName: 'Engine', custom: { width: 70 } }],
      ['phase', STRING, (r) => r.phase, { displayName: 'Phase', custom: { width: 80 } }],
      [
        'durationMs',
        NUMBER,
        (r) => r.durationMs,
        { displayName: 'Took', unit: 'ms', decimals: 1, custom: { width: 90 } },
      ],
      [
        'baselineMs',
        NUMBER,
        (r) => r.baselineMs,
        { displayName: 'Usually', unit: 'ms', decimals: 1, custom: { width: 90 } },
      ],
      [
        'ratio',
        NUMBER,
        (r) => r.ratio,
        {
          displayName: '× usual',
          decimals: 1,
          thresholds: {
            mode: 'absolute' as never,
            steps: [
              { value: -Infinity, color: 'green' },
              { value: 2, color: 'red' },
            ],
          },
          custom: { width: 80, cellOptions: { type: 'color-text' } },
        },
      ],
      ['source', STRING, (r) => r.source, { displayName: 'Read from' }],
      ['spanId', STRING, (r) => r.spanId, { custom: { hidden: true } }],
    ]),
    { name: 'LLM phases', refId }
  );
}

/** The figures of an engine state, in reading order, with how each is written. */
const FIGURES: Array<{ figure: keyof Omit<EngineState, 'provenance'>; label: string; text: (v: number) => string }> = [
  { figure: 'waiting', label: 'Requests waiting', text: (v) => String(Math.round(v)) },
  { figure: 'running', label: 'Requests running', text: (v) => String(Math.round(v)) },
  { figure: 'kvCacheUsage', label: 'KV-cache usage', text: (v) => `${(v * 100).toFixed(0)} %` },
  { figure: 'preemptionsPerMin', label: 'Preemptions', text: (v) => `${v.toFixed(1)} /min` },
  { figure: 'prefixCacheHitRate', label: 'Prefix-cache hit rate', text: (v) => `${(v * 100).toFixed(0)} %` },
];

interface StateRow {
  pod: string;
  figure: string;
  value: string;
  metric: string;
  instantMs: number | null;
  scrapeIntervalS: number | null;
}

/** One row per figure the engine state holds (per pod, once), with its provenance; tokens against usual too. */
export function engineStateRows(list: LlmPhases[]): StateRow[] {
  const rows: StateRow[] = [];
  const seen = new Set<string>();
  for (const l of list) {
    const s = l.engineState;
    if (s && !seen.has(l.pod)) {
      seen.add(l.pod);
      for (const f of FIGURES) {
        const v = s[f.figure];
        if (v === undefined) {
          continue;
        }
        const from = s.provenance.find((p) => p.figure === f.figure);
        rows.push({
          pod: l.pod,
          figure: f.label,
          value: f.text(v),
          metric: from?.metric ?? '',
          instantMs: from?.instantMs ?? null,
          scrapeIntervalS: from?.scrapeIntervalS ?? null,
        });
      }
    }
    if (l.promptTokens !== undefined) {
      rows.push({
        pod: l.pod,
        figure: 'Prompt tokens',
        value: `${l.promptTokens}${l.baselinePromptTokens !== undefined ? ` (usually ${Math.round(l.baselinePromptTokens)})` : ''}`,
        metric: l.source,
        instantMs: l.startMs,
        scrapeIntervalS: null,
      });
    }
  }
  return rows;
}

export function engineStateFrame(list: LlmPhases[], refId: string): DataFrame {
  return frame(
    columns(engineStateRows(list), [
      ['pod', STRING, (r) => r.pod, { displayName: 'Pod', custom: { width: 120 } }],
      ['figure', STRING, (r) => r.figure, { displayName: 'Engine state', custom: { width: 150 } }],
      ['value', STRING, (r) => r.value, { displayName: 'Value', custom: { width: 130 } }],
      ['metric', STRING, (r) => r.metric, { displayName: 'Read from (metric found)', custom: { minWidth: 200 } }],
      ['at', TIME, (r) => r.instantMs, { displayName: 'At', custom: { width: 190 } }],
      [
        'scrapeIntervalS',
        NUMBER,
        (r) => r.scrapeIntervalS,
        { displayName: 'Scrape', unit: 's', custom: { width: 70 } },
      ],
    ]),
    { name: 'engine state', refId }
  );
}
