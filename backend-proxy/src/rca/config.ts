/** Tunables of the root-cause engine, with the seed's defaults; every field optional for callers. */
import { z } from 'zod';
import { formatZodError } from '../../../contract/zod-error';

export interface RcaConfig {
  /** λ weights per hop type (seed 2.5): long embedding inputs are expected to be slow, a thrashing KV cache is not. */
  lambda: {
    embeddingLongInput: number;
    embeddingInputTokens: number;
    kvCacheLowHit: number;
    kvCacheHitRate: number;
    /** Extra per-service multipliers (e.g. to distrust a noisy hop). */
    byService: Record<string, number>;
  };
  /** End-to-end SLO per service (ms) used to pick the breaching span; absent: baseline p99 × sloFactor. */
  sloMs: Record<string, number>;
  sloFactor: number;
  /** A deviation counts when robust z ≥ zThreshold and the excess ≥ minExcessMs. */
  zThreshold: number;
  minExcessMs: number;
  /** MAD floor as a share of the median, so near-constant baselines do not make every microsecond significant. */
  madFloorRatio: number;
  /** Kernel events this far outside a span's window still join it (ms). */
  kernelSlackMs: number;
  /** Entry server spans (no client span above them) also join events this long before they start (handshakes). */
  kernelLookbackMs: number;
  slowTlsMs: number;
  slowConnectMs: number;
  /** GPU memory held by a pod's process that grew at least this much without falling back is a leak (bytes). */
  gpuLeakMinBytes: number;
  /** How far before a span the leak pass looks for the pod's latest GPU memory record (ms). */
  gpuLeakLookbackMs: number;
  /** Same-service children ending this far after their parent are fire-and-forget (async), not skew. */
  asyncToleranceMs: number;
  /** Caller→callee service edges that must have a span in between (e.g. the chain's topology); empty: not checked. */
  expectedEdges: Array<[string, string]>;
  maxCandidates: number;
}

const DEFAULT_RCA_CONFIG: RcaConfig = {
  lambda: {
    embeddingLongInput: 0.8,
    embeddingInputTokens: 512,
    kvCacheLowHit: 1.2,
    kvCacheHitRate: 0.75,
    byService: {},
  },
  sloMs: {},
  sloFactor: 1.5,
  zThreshold: 3,
  minExcessMs: 1,
  madFloorRatio: 0.05,
  kernelSlackMs: 5,
  kernelLookbackMs: 1000,
  slowTlsMs: 200,
  slowConnectMs: 100,
  gpuLeakMinBytes: 2 ** 30,
  gpuLeakLookbackMs: 60_000,
  asyncToleranceMs: 1,
  expectedEdges: [],
  maxCandidates: 10,
};

export type RcaConfigInput = Partial<Omit<RcaConfig, 'lambda'>> & { lambda?: Partial<RcaConfig['lambda']> };

const pos = z.number().finite().nonnegative();
/** What a caller (e.g. `POST /api/rca` body `config`) may set; strict, so a typo is an error rather than ignored. */
export const RcaConfigSchema = z
  .strictObject({
    lambda: z
      .strictObject({
        embeddingLongInput: pos.max(10),
        embeddingInputTokens: pos,
        kvCacheLowHit: pos.max(10),
        kvCacheHitRate: z.number().min(0).max(1),
        byService: z.record(z.string(), pos.max(10)),
      })
      .partial(),
    sloMs: z.record(z.string(), pos),
    sloFactor: pos.max(100),
    zThreshold: pos.max(100),
    minExcessMs: pos,
    madFloorRatio: pos.max(1),
    kernelSlackMs: pos.max(60_000),
    kernelLookbackMs: pos.max(60_000),
    slowTlsMs: pos,
    slowConnectMs: pos,
    gpuLeakMinBytes: pos,
    gpuLeakLookbackMs: pos.max(600_000),
    asyncToleranceMs: pos.max(60_000),
    expectedEdges: z.array(z.tuple([z.string(), z.string()])).max(1000),
    maxCandidates: z.number().int().min(1).max(1000),
  })
  .partial();

export class RcaConfigError extends Error {
  readonly code = 'bad_rca_config';
}

/** Defaults merged with the caller's values; invalid values throw `RcaConfigError` naming the field. */
export function resolveConfig(c?: RcaConfigInput): RcaConfig {
  if (!c) return DEFAULT_RCA_CONFIG;
  const r = RcaConfigSchema.safeParse(c);
  if (!r.success) {
    throw new RcaConfigError(`rca config: ${formatZodError(r.error, { max: 3 })}`);
  }
  return { ...DEFAULT_RCA_CONFIG, ...c, lambda: { ...DEFAULT_RCA_CONFIG.lambda, ...(c.lambda ?? {}) } };
}
