/**
 * What the driver benchmarks share: the load options of a bench run against a local stand-in server (no model, no
 * traceparent, bounded in-flight), and this process's CPU time, which the shared machine's other load does not move.
 */
import type { LoadOptions } from '../../loadgen/src/load/driver';
import type { Profile } from '../../loadgen/src/load/profiles';

/** This process's user + system CPU time in µs. */
export const cpuNow = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** A constant, uniform profile. */
export const constantProfile = (rps: number, durationS: number): Profile => ({
  kind: 'constant',
  rps,
  durationS,
  arrivals: 'uniform',
});

/** The driver's options for a bench run: streaming chat completions unless `overrides` say otherwise. */
export const benchLoad = (target: string, profile: Profile, overrides: Partial<LoadOptions> = {}): LoadOptions => ({
  target,
  path: '/v1/chat/completions',
  method: 'POST',
  rawBody: '{"stream":true}',
  profile,
  stream: true,
  models: ['m'],
  backend: 'none',
  agentRatio: 0,
  maxTokens: 4,
  seed: 1,
  runId: 'bench',
  timeoutMs: 5000,
  connections: 64,
  maxInFlight: 100_000,
  slo: {},
  traceparent: false,
  ...overrides,
});
