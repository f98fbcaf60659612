/**
 * A run's fall-back consistency (issue 21) → what the run page shows: each model path's answers (served, agent tasks
 * completed, mean recall, with the counts behind each share) and the fall-back share over time, one point per time
 * bucket of the run (the counts in the tooltip). A run whose answers name no model (a real server) gets neither.
 */
import type { DataFrame } from '@grafana/data';

import { fallbackRate, meanRecall, taskCompletion, type FallbackPath, type RunRecord } from '../../../contract';
import { columns, field, frame, NUMBER, STRING, TIME } from './frame';

const PATH_LABEL: Record<FallbackPath['path'], string> = { primary: 'Primary', fallback: 'Fall-back' };

/** One row per (path, model): fall-back first, as the question is how it compares. */
export function fallbackPathsFrame(run: Pick<RunRecord, 'summary'>, refId: string): DataFrame[] {
  const f = run.summary?.fallback;
  if (!f?.paths.length) {
    return [];
  }
  const rows = [...f.paths].sort((a, b) =>
    a.path === b.path ? a.model.localeCompare(b.model) : a.path === 'fallback' ? -1 : 1
  );
  return [
    frame(
      columns(rows, [
        ['Path', STRING, (p) => PATH_LABEL[p.path]],
        ['Model', STRING, (p) => p.model, { description: 'The response model the chain reported' }],
        ['Served', NUMBER, (p) => p.served],
        [
          'Agent task completion',
          NUMBER,
          (p) => taskCompletion(p),
          { unit: 'percentunit', decimals: 0, noValue: 'no agent task' },
        ],
        ['Tasks completed', NUMBER, (p) => p.tasks.completed],
        ['Agent tasks', NUMBER, (p) => p.tasks.n],
        ['Mean recall', NUMBER, (p) => meanRecall(p), { decimals: 2, noValue: 'not graded' }],
        ['Graded for recall', NUMBER, (p) => p.recall.n],
      ]),
      { refId, name: 'fallback-paths' }
    ),
  ];
}

/** The fall-back share per bucket (null where nothing was served) with each bucket's counts, hidden from the graph. */
export function fallbackRateFrame(run: Pick<RunRecord, 'summary'>, refId: string): DataFrame[] {
  const f = run.summary?.fallback;
  if (!f?.buckets.length) {
    return [];
  }
  const b = f.buckets;
  const count = (name: string, displayName: string, values: number[]) =>
    field(name, NUMBER, values, {
      displayName,
      custom: { hideFrom: { viz: true, legend: true, tooltip: false } },
    });
  return [
    frame(
      [
        field(
          'time',
          TIME,
          b.map((x) => x.startMs)
        ),
        field('fallback_rate', NUMBER, b.map(fallbackRate), {
          displayName: `Fall-back share (per ${f.bucketS} s)`,
          unit: 'percentunit',
          min: 0,
          max: 1,
        }),
        count(
          'primary',
          'Served on the primary path',
          b.map((x) => x.primary)
        ),
        count(
          'fallback',
          'Served on the fall-back path',
          b.map((x) => x.fallback)
        ),
        count(
          'failed',
          'Failed (no path)',
          b.map((x) => x.failed)
        ),
      ],
      { refId, name: 'fallback-rate' }
    ),
  ];
}
