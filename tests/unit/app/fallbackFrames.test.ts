/**
 * The run page's fall-back consistency (issue 21, item 4): the paths table (served, agent-task completion with the
 * counts behind it, recall) and the fall-back share per bucket with its counts, from a record's `summary.fallback`;
 * a run whose answers name no model gets no frames, and the page no section.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { fallbackSentence, FallbackSummary, type RunRecord } from '../../../contract';
import { fallbackPathsFrame, fallbackRateFrame } from '../../../src/datasource/frames/fallback';

const T0 = 1_800_000_000_000;
const fallback = FallbackSummary.parse({
  bucketS: 5,
  paths: [
    {
      path: 'primary',
      model: 'hopscope-llama-8b-v1',
      served: 30,
      tasks: { n: 25, completed: 23 },
      recall: { n: 5, sum: 4 },
    },
    {
      path: 'primary',
      model: 'hopscope-llama-8b-v2',
      served: 20,
      tasks: { n: 25, completed: 23 },
      recall: { n: 0, sum: 0 },
    },
    {
      path: 'fallback',
      model: 'hopscope-llama-1b',
      served: 18,
      tasks: { n: 18, completed: 11 },
      recall: { n: 0, sum: 0 },
    },
  ],
  buckets: [
    { startMs: T0, primary: 20, fallback: 0, failed: 0 },
    { startMs: T0 + 5000, primary: 10, fallback: 10, failed: 1 },
    { startMs: T0 + 10_000, primary: 0, fallback: 0, failed: 2 },
    { startMs: T0 + 15_000, primary: 20, fallback: 8, failed: 0 },
  ],
  unknown: 0,
});
const run = { summary: { fallback } } as unknown as Pick<RunRecord, 'summary'>;
const values = (f: { fields: Array<{ name: string; values: unknown[] }> }, name: string) =>
  f.fields.find((x) => x.name === name)!.values;

describe('run page: fall-back consistency frames', () => {
  test('one row per path and model, fall-back first, with completion and the counts behind it', () => {
    const [f] = fallbackPathsFrame(run, 'fallback:paths');
    assert.equal(f.refId, 'fallback:paths');
    assert.deepEqual(values(f, 'Path'), ['Fall-back', 'Primary', 'Primary']);
    assert.deepEqual(values(f, 'Model'), ['hopscope-llama-1b', 'hopscope-llama-8b-v1', 'hopscope-llama-8b-v2']);
    assert.deepEqual(values(f, 'Served'), [18, 30, 20]);
    assert.deepEqual(values(f, 'Agent task completion'), [11 / 18, 23 / 25, 23 / 25]);
    assert.deepEqual(values(f, 'Tasks completed'), [11, 23, 23]);
    assert.deepEqual(values(f, 'Agent tasks'), [18, 25, 25]);
    assert.deepEqual(values(f, 'Mean recall'), [null, 0.8, null], 'not graded is no value, not 0');
    assert.equal(f.fields.find((x) => x.name === 'Agent task completion')!.config.unit, 'percentunit');
  });

  test('the fall-back share per bucket, null where nothing was served, counts hidden from the graph', () => {
    const [f] = fallbackRateFrame(run, 'fallback:rate');
    assert.deepEqual(values(f, 'time'), [T0, T0 + 5000, T0 + 10_000, T0 + 15_000]);
    assert.deepEqual(values(f, 'fallback_rate'), [0, 0.5, null, 8 / 28]);
    assert.deepEqual(values(f, 'failed'), [0, 1, 2, 0]);
    const hidden = f.fields.filter((x) => (x.config.custom as { hideFrom?: { viz: boolean } })?.hideFrom?.viz);
    assert.deepEqual(
      hidden.map((x) => x.name),
      ['primary', 'fallback', 'failed']
    );
    assert.match(String(f.fields[1].config.displayName), /per 5 s/);
  });

  test('the sentence the section opens with; a run without a tally or without fall-back has no section', () => {
    assert.equal(
      fallbackSentence(fallback),
      '18 of 68 served answers (26 %) came from the fall-back path (hopscope-llama-1b): it completes 61 % of agent tasks (11 of 18) vs 92 % (46 of 50) on the primary path; mean recall'.split(
        '; mean'
      )[0] + '.'
    );
    const none = { summary: { fallback: undefined } } as unknown as Pick<RunRecord, 'summary'>;
    assert.deepEqual(fallbackPathsFrame(none, 'a'), []);
    assert.deepEqual(fallbackRateFrame(none, 'b'), []);
    assert.equal(fallbackSentence({ ...fallback, paths: fallback.paths.filter((p) => p.path === 'primary') }), null);
  });
});
