/**
 * A window root cause (GET /rca?from&to: the range's traces against the hour before) → the same frames as one
 * trace's (ranked candidates, critical path, LLM phases, engine state), the candidates' frame also carrying what the
 * range answer read (`meta.custom.window`: how many traces, sampled or not, and how they were picked).
 */
import type { DataFrame } from '@grafana/data';

import type { RcaRangeAnswer, RcaRangeSample } from '../../../contract';
import { rcaFrames } from './traces';

export interface WindowAbout {
  from: number;
  to: number;
  service?: string;
  sample: RcaRangeSample;
  /** Traces and spans ranked, and how many were anomalous against the baseline. */
  traces: number;
  spans: number;
  anomalousTraces: number;
}

export function windowRcaFrames(answer: RcaRangeAnswer, refId: string): DataFrame[] {
  const [candidates, ...rest] = rcaFrames(answer, refId);
  const window: WindowAbout = {
    from: answer.from,
    to: answer.to,
    ...(answer.service ? { service: answer.service } : {}),
    sample: answer.sample,
    traces: answer.window.traces,
    spans: answer.window.spans,
    anomalousTraces: answer.window.anomalousTraces,
  };
  return [
    { ...candidates, name: 'ranked causes of the window', meta: { custom: { ...candidates.meta?.custom, window } } },
    ...rest,
  ];
}

/** What `windowRcaFrames` put on the candidates' frame, back (undefined: not a window answer). */
export function windowAboutOfFrame(f: DataFrame | undefined): WindowAbout | undefined {
  return f?.meta?.custom?.window as WindowAbout | undefined;
}
