/**
 * A sweep's or ramp's capacity → what the run page shows (issue 19): the bottleneck in one sentence (the highest good
 * rate, the knee, the hop, pod and resource that saturated first with its evidence, what saturated next, the note:
 * "no knee up to N req/s", a lower bound, missing evidence), and offered vs achieved vs goodput per step with the knee
 * as its own series (one point at the knee's step). A run without capacity (a constant run) gets neither.
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import type { Bottleneck, Capacity, CapacityResource, RunRecord, RunSaturationAnswer } from '../../../contract';
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

/** What each resource's series shows, and the unit its values are in. */
const SIGNAL_UNIT: Record<CapacityResource, string> = {
  engine_queue: 'none',
  kv_cache: 'percentunit',
  running_limit: 'none',
  cpu: 'percentunit',
  gpu: 'percentunit',
  network: 'none',
  unknown: 'none',
};

/** The hops that have a saturation signal, in the order the answer lists them (one panel each on the run page). */
export function saturationHops(a: Pick<RunSaturationAnswer, 'signals'>): string[] {
  return [...new Set(a.signals.map((s) => s.service))];
}

/**
 * Each saturation signal of one hop over the run (all hops when `service` is absent): a frame per signal, its value as
 * read (waiting and running counts, KV cache and CPU as fractions), named by resource and pod, with the metric it came
 * from and the limit at which the analysis calls it saturated (a dashed threshold line). The same signals the capacity
 * analysis decided on: the proxy reads them with the same plans.
 */
export function saturationFrames(a: RunSaturationAnswer, refId: string, service?: string): DataFrame[] {
  return a.signals
    .filter((s) => service === undefined || s.service === service)
    .map((s) => {
      const name = `${RESOURCE[s.resource]}${s.pod && s.pod !== s.service ? ` (${s.pod})` : ''}`;
      const limit = s.limit ?? (s.resource === 'engine_queue' ? 1 : null);
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
              displayNameFromDS: name,
              unit: SIGNAL_UNIT[s.resource],
              description: `${s.metric}${limit !== null ? `; saturated at ${limit}` : ''}`,
              ...(limit !== null
                ? {
                    custom: { thresholdsStyle: { mode: 'dashed' } },
                    thresholds: {
                      mode: 'absolute' as never,
                      steps: [
                        { value: -Infinity, color: 'transparent' },
                        { value: limit, color: 'red' },
                      ],
                    },
                  }
                : {}),
            }
          ),
        ],
        { refId, name, meta: { executedQueryString: s.metric } }
      );
    });
}

/** What could not be read, as notices (a source down, no Prometheus). */
export function saturationNotices(a: RunSaturationAnswer): QueryResultMetaNotice[] {
  return a.missing.map((m) => ({ severity: 'warning' as const, text: `Missing: ${m}` }));
}
