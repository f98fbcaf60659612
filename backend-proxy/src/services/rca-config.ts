/** Engine settings merged: the operator's (HOPSCOPE_RCA_CONFIG) with a request's own on top. */
import type { RcaConfigInput } from '../rca';

/** Engine settings: the configured ones, with a request's own on top (λ weights and SLOs merged key by key). */
export function mergeRcaConfig(
  base: RcaConfigInput | undefined,
  over: RcaConfigInput | undefined
): RcaConfigInput | undefined {
  if (!base) return over;
  if (!over) return base;
  return {
    ...base,
    ...over,
    ...(base.lambda || over.lambda
      ? {
          lambda: {
            ...base.lambda,
            ...over.lambda,
            ...(base.lambda?.byService || over.lambda?.byService
              ? { byService: { ...base.lambda?.byService, ...over.lambda?.byService } }
              : {}),
          },
        }
      : {}),
    ...(base.sloMs || over.sloMs ? { sloMs: { ...base.sloMs, ...over.sloMs } } : {}),
  };
}
