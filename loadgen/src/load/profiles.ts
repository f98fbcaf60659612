/**
 * Open-loop arrival profiles: the rate (requests/s) at each instant and a seeded arrival schedule built from it.
 * constant: `rps`; ramp: `startRps` → `rps` linearly; step: `startRps` then +`stepRps` every `stepEveryS`, capped at
 * `rps`; spike: `rps` with `spikeRps` between `spikeAtS` and `spikeAtS + spikeForS`.
 */
import { seededRandom } from '../shared/random';

export type ProfileKind = 'constant' | 'ramp' | 'step' | 'spike';

export interface Profile {
  kind: ProfileKind;
  rps: number;
  durationS: number;
  startRps?: number;
  stepRps?: number;
  stepEveryS?: number;
  spikeRps?: number;
  spikeAtS?: number;
  spikeForS?: number;
  /** uniform: evenly spaced at the current rate; poisson: exponential gaps (seeded). */
  arrivals: 'uniform' | 'poisson';
}

export const MAX_RPS = 100_000;
export const MAX_DURATION_S = 7 * 24 * 3600;

/** Throws one Error listing every problem (checked before anything starts). */
export function validateProfile(p: Profile): void {
  const errs: string[] = [];
  const rate = (name: string, v: number | undefined, required: boolean) => {
    if (v === undefined) {
      if (required) errs.push(`${name} is required for the ${p.kind} profile`);
      return;
    }
    if (!Number.isFinite(v) || v <= 0) errs.push(`${name} must be > 0 (got ${v})`);
    else if (v > MAX_RPS) errs.push(`${name} must be ≤ ${MAX_RPS} (got ${v})`);
  };
  const secs = (name: string, v: number | undefined, required: boolean, min = 0) => {
    if (v === undefined) {
      if (required) errs.push(`${name} is required for the ${p.kind} profile`);
      return;
    }
    if (!Number.isFinite(v) || v < min || (min === 0 && v <= 0))
      errs.push(`${name} must be ${min === 0 ? '> 0' : `≥ ${min}`} s (got ${v})`);
    else if (v > MAX_DURATION_S) errs.push(`${name} must be ≤ ${MAX_DURATION_S} s (got ${v})`);
  };
  if (!['constant', 'ramp', 'step', 'spike'].includes(p.kind))
    errs.push(`unknown profile ${JSON.stringify(p.kind)}; allowed: constant, ramp, step, spike`);
  if (!['uniform', 'poisson'].includes(p.arrivals))
    errs.push(`unknown arrivals ${JSON.stringify(p.arrivals)}; allowed: uniform, poisson`);
  rate('rps', p.rps, true);
  secs('duration', p.durationS, true);
  if (p.kind === 'ramp') rate('start-rps', p.startRps, true);
  if (p.kind === 'step') {
    rate('start-rps', p.startRps, true);
    rate('step-rps', p.stepRps, true);
    secs('step-every', p.stepEveryS, true);
  }
  if (p.kind === 'spike') {
    rate('spike-rps', p.spikeRps, true);
    secs('spike-at', p.spikeAtS, true, 0.000001);
    secs('spike-for', p.spikeForS, true);
    if (p.spikeAtS !== undefined && p.spikeAtS >= p.durationS)
      errs.push(`spike-at (${p.spikeAtS} s) must fall inside the run (duration ${p.durationS} s)`);
  }
  if (errs.length) throw new Error(`invalid load profile:\n  ${errs.join('\n  ')}`);
}

/** Target rate at `t` seconds into the run. */
export function rateAt(p: Profile, t: number): number {
  switch (p.kind) {
    case 'constant':
      return p.rps;
    case 'ramp':
      return p.startRps! + (p.rps - p.startRps!) * Math.min(1, Math.max(0, t / p.durationS));
    case 'step':
      return Math.min(p.rps, p.startRps! + p.stepRps! * Math.floor(t / p.stepEveryS!));
    case 'spike':
      return t >= p.spikeAtS! && t < p.spikeAtS! + p.spikeForS! ? p.spikeRps! : p.rps;
  }
}

/** Expected number of arrivals over the run (integral of the rate). */
export function expectedArrivals(p: Profile): number {
  let n = 0;
  const dt = Math.min(0.01, p.durationS / 1000);
  for (let t = 0; t < p.durationS; t += dt) n += rateAt(p, t) * dt;
  return Math.round(n);
}

/** Yields arrival times (seconds from start) in order until the end of the run (uniform starts at 0). */
export function* arrivals(p: Profile, seed: number): Generator<number> {
  const rnd = seededRandom(seed ^ 0x5eed);
  const gap = (t: number): number => (p.arrivals === 'poisson' ? -Math.log(1 - rnd()) : 1) / rateAt(p, t);
  let t = p.arrivals === 'uniform' ? 0 : gap(0);
  while (t < p.durationS - 1e-9) {
    yield t;
    const next = t + gap(t);
    // A rate change inside the gap (step/spike edge) takes effect at the edge.
    const edge = nextEdge(p, t);
    if (edge !== undefined && next > edge + 1e-9) t = p.arrivals === 'uniform' ? edge : edge + gap(edge);
    else t = next;
  }
}

function nextEdge(p: Profile, t: number): number | undefined {
  if (p.kind === 'step') return (Math.floor(t / p.stepEveryS!) + 1) * p.stepEveryS!;
  if (p.kind === 'spike') {
    if (t < p.spikeAtS!) return p.spikeAtS!;
    if (t < p.spikeAtS! + p.spikeForS!) return p.spikeAtS! + p.spikeForS!;
  }
  return undefined;
}
