/** Tunables of the root-cause engine, with the seed's defaults; every field optional for callers. */
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
  slowTlsMs: number;
  slowConnectMs: number;
  /** Same-service children ending this far after their parent are fire-and-forget (async), not skew. */
  asyncToleranceMs: number;
  /** Caller→callee service edges that must have a span in between (e.g. the chain's topology); empty: not checked. */
  expectedEdges: Array<[string, string]>;
  maxCandidates: number;
}

export const DEFAULT_RCA_CONFIG: RcaConfig = {
  lambda: { embeddingLongInput: 0.8, embeddingInputTokens: 512, kvCacheLowHit: 1.2, kvCacheHitRate: 0.75, byService: {} },
  sloMs: {},
  sloFactor: 1.5,
  zThreshold: 3,
  minExcessMs: 1,
  madFloorRatio: 0.05,
  kernelSlackMs: 5,
  slowTlsMs: 200,
  slowConnectMs: 100,
  asyncToleranceMs: 1,
  expectedEdges: [],
  maxCandidates: 10,
};

export type RcaConfigInput = Partial<Omit<RcaConfig, 'lambda'>> & { lambda?: Partial<RcaConfig['lambda']> };

export function resolveConfig(c?: RcaConfigInput): RcaConfig {
  if (!c) return DEFAULT_RCA_CONFIG;
  return { ...DEFAULT_RCA_CONFIG, ...c, lambda: { ...DEFAULT_RCA_CONFIG.lambda, ...(c.lambda ?? {}) } };
}
