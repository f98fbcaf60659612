/**
 * A sweep's or ramp's capacity → what the run page shows (issue 19): the bottleneck in one sentence (the highest good
 * rate, the knee, the hop, pod and resource that saturated first with its evidence, what saturated next, the note:
 * "no knee up to N req/s", a lower bound, missing evidence), and offered vs achieved vs goodput per step with the knee
 * as its own series (one point at the knee's step). A run without capacity (a constant run) gets neither.
 */
import type { DataFrame } from '@grafana/data';

import type { Bottleneck, Capacity, CapacityResource, RunRecord } from '../../../contract';
import { field, frame, NUMBER, TIME } from './frame';

const RESOURCE: Record<CapacityResource, string> = {
  engine_queue: 'engine queue',
  kv_cache: 'KV cache',
  running_limit: 'running-sequence limit',
  cpu: 'CPU',
  gpu: 'GPU (SM activity)',
  network: 'network',
  unknown: 'unknown resource',
};

const rps = (v: number): string => `${Math.abs(v) >= 10 ? v.toFixed(0) : Number(v.toFixed(2)).toString()} req/s`;

function hop(b: Bottleneck): string {
  if (b.service === null) {
    return 'no hop named';
  }
  return b.pod && b.pod !== b.service ? `${b.service} (pod ${b.pod})` : b.service;
}

/** The bottleneck in one sentence, or null when the run has no capacity (not a sweep or a ramp). */
export function capacitySentence(c: Capacity | null | undefined): string | null {
  if (!c) {
    return null;
  }
  const parts: string[] = [];
  const head = c.maxGoodRps === null ? 'No step held the SLOs' : `Capacity ${rps(c.maxGoodRps)}`;
  if (c.kneeRps !== null) {
    parts.push(`${head}: knee at ${rps(c.kneeRps)}`);
  } else {
    parts.push(head);
  }
  if (c.bottleneck) {
    const b = c.bottleneck;
    parts.push(
      b.resource === 'unknown'
        ? `no hop's saturation signal named the bottleneck (${b.evidence})`
        : `${hop(b)} saturated first: ${RESOURCE[b.resource]} (${b.evidence})`
    );
  }
  if (c.next) {
    parts.push(`next: ${hop(c.next)}, ${RESOURCE[c.next.resource]} (${c.next.evidence})`);
  }
  // The note says "no knee up to N req/s", the lower bound and what was missing: a sentence of its own, capitalised.
  const note = c.note ? ` ${c.note.charAt(0).toUpperCase()}${c.note.slice(1)}.` : '';
  return `${parts.join('; ')}.${note}`;
}

/**
 * Offered vs achieved vs goodput per step (at each step's start), and the knee: a series with one value, the offered
 * rate of the knee's step at its start (null elsewhere, drawn as a point). Empty when the run has no capacity or steps.
 */
export function capacityStepsFrame(run: Pick<RunRecord, 'summary' | 'capacity'>, refId: string): DataFrame[] {
  const steps = run.summary?.steps ?? [];
  if (!run.capacity || steps.length === 0) {
    return [];
  }
  const knee = run.capacity.kneeAtMs;
  const t = steps.map((s) => s.startMs);
  return [
    frame(
      [
        field('time', TIME, t),
        field(
          'offered',
          NUMBER,
          steps.map((s) => s.offeredRps),
          { displayName: 'Offered', unit: 'reqps' }
        ),
        field(
          'achieved',
          NUMBER,
          steps.map((s) => s.achievedRps),
          { displayName: 'Achieved', unit: 'reqps' }
        ),
        field(
          'goodput',
          NUMBER,
          steps.map((s) => s.goodRps),
          { displayName: 'Goodput (SLOs met)', unit: 'reqps' }
        ),
        field(
          'knee',
          NUMBER,
          steps.map((s) => (knee !== null && s.startMs === knee ? s.offeredRps : null)),
          {
            displayName: 'Knee',
            unit: 'reqps',
            color: { mode: 'fixed', fixedColor: 'red' } as never,
            custom: { drawStyle: 'points', pointSize: 14, showPoints: 'always' },
          }
        ),
      ],
      { refId, name: 'capacity' }
    ),
  ];
}
