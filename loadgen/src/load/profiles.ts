/**
 * Open-loop arrival profiles: the rate (requests/s) at each instant and a seeded arrival schedule built from it.
 * constant: `rps`; ramp: `startRps` → `rps` linearly; step: `startRps` then +`stepRps` every `stepEveryS`, capped at
 * `rps`; spike: `rps` with `spikeRps` between `spikeAtS` and `spikeAtS + spikeForS`; sweep: `steps` constant rates
 * from `startRps` to `rps` (evenly spaced), each held `durationS / steps` (guidellm's sweep, stepped).
 */
import { seededRandom } from '../shared/random';

export type ProfileKind = 'constant' | 'ramp' | 'step' | 'spike' | 'sweep';

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
  /** sweep: how many constant rates (≥ 2). */
  steps?: number;
  /** uniform: evenly spaced at the current rate; poisson: exponential gaps (seeded). */
  arrivals: 'uniform' | 'poisson';
}

export const MAX_RPS = 100_000;
export const MAX_DURATION_S = 7 * 24 * 3600;
export const MAX_STEPS = 100;

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
  if (!['constant', 'ramp', 'step', 'spike', 'sweep'].includes(p.kind))
    errs.push(`unknown profile ${JSON.stringify(p.kind)}; allowed: constant, ramp, step, spike, sweep`);
  if (!['uniform', 'poisson'].includes(p.arrivals))
    errs.push(`unknown arrivals ${JSON.stringify(p.arrivals)}; allowed: uniform, poisson`);
  rate('rps', p.rps, true);
  secs('duration', p.durationS, true);
  if (p.kind === 'ramp') rate('start-rps', p.startRps, true);
  if (p.kind === 'sweep') {
    rate('start-rps', p.startRps, true);
    if (p.steps === undefined || !Number.isInteger(p.steps) || p.steps < 2 || p.steps > MAX_STEPS)
      errs.push(`steps must be a whole number 2..${MAX_STEPS} for the sweep profile (got ${p.steps})`);
    else if (p.startRps !== undefined && p.startRps >= p.rps)
      errs.push(`start-rps (${p.startRps}) must be below rps (${p.rps}) for the sweep profile`);
  }
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
    case 'sweep':
      return sweepRate(p, Math.min(p.steps! - 1, Math.max(0, Math.floor(t / (p.durationS / p.steps!) + 1e-9))));
  }
}

/** The sweep's i-th rate (0-based), evenly spaced from startRps to rps. */
export function sweepRate(p: Profile, i: number): number {
  return p.startRps! + ((p.rps - p.startRps!) * i) / (p.steps! - 1);
}

/**
 * The windows a run's capacity is read in: a sweep's steps, a step profile's steps, a ramp cut in `rampWindows`
 * equal windows; none for constant and spike runs. Seconds from the start.
 */
export function stepWindows(p: Profile, rampWindows = 10): Array<{ startS: number; endS: number }> {
  let n: number;
  if (p.kind === 'sweep') n = p.steps!;
  else if (p.kind === 'step') n = Math.ceil(p.durationS / p.stepEveryS! - 1e-9);
  else if (p.kind === 'ramp') n = rampWindows;
  else return [];
  const w = p.kind === 'step' ? p.stepEveryS! : p.durationS / n;
  return Array.from({ length: n }, (_, i) => ({ startS: i * w, endS: Math.min(p.durationS, (i + 1) * w) }));
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
  if (p.kind === 'sweep') {
    const w = p.durationS / p.steps!;
    return (Math.floor(t / w + 1e-9) + 1) * w;
  }
  if (p.kind === 'spike') {
    if (t < p.spikeAtS!) return p.spikeAtS!;
    if (t < p.spikeAtS! + p.spikeForS!) return p.spikeAtS! + p.spikeForS!;
  }
  return undefined;
}
