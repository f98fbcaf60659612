/**
 * One trace → per-hop anomaly accounting, as a list of named passes run in order over one shared account
 * (`account.ts`): each pass reads what the passes before it found and adds its own. Scoring is left to the callers
 * (per trace and per window), which add the hop accounts up differently. A new signal is one new pass in `PASSES`.
 */
import type { CriticalPathItem, LlmPhases, Span } from '../../../contract';
import { type AnalyzeContext, type HopAccount, type TraceAccount, openAccount } from './account';
import { anchor } from './passes/anchor';
import { asyncChildren } from './passes/async-children';
import { baselineExcess } from './passes/baseline-excess';
import { clockSkew } from './passes/clock-skew';
import { criticalPath } from './passes/critical-path';
import { exclusiveTime } from './passes/exclusive-time';
import { gpuMemoryLeak } from './passes/gpu-memory-leak';
import { kernelEvents } from './passes/kernel-events';
import { kvCache } from './passes/kv-cache';
import { lambda } from './passes/lambda';
import { llmPhases } from './passes/llm-phases';
import { modelFallback } from './passes/model-fallback';
import { ncclTimeout } from './passes/nccl-timeout';
import { origins } from './passes/origins';
import { propagation } from './passes/propagation';
import { spanRoles } from './passes/span-roles';
import { tree } from './passes/tree';
import type { TraceTree } from './tree';

export interface Pass {
  name: string;
  run: (a: TraceAccount) => void;
}

/** The passes, in the order they run (see README.md: what one trace goes through). */
export const PASSES: readonly Pass[] = [
  { name: 'tree', run: tree },
  { name: 'span roles', run: spanRoles },
  { name: 'clock skew', run: clockSkew },
  { name: 'async children', run: asyncChildren },
  { name: 'model fallback', run: modelFallback },
  { name: 'anchor', run: anchor },
  { name: 'critical path', run: criticalPath },
  { name: 'exclusive time & gap', run: exclusiveTime },
  { name: 'baseline excess', run: baselineExcess },
  { name: 'λ', run: lambda },
  { name: 'LLM phases', run: llmPhases },
  { name: 'KV cache', run: kvCache },
  { name: 'errors/timeouts', run: origins },
  { name: 'kernel events', run: kernelEvents },
  { name: 'NCCL timeout', run: ncclTimeout },
  { name: 'GPU memory leak', run: gpuMemoryLeak },
  { name: 'broken propagation', run: propagation },
];

export interface TraceAnalysis {
  traceId?: string;
  tree: TraceTree;
  anchor: number;
  anchorReason: string;
  anchorDurationMs: number;
  criticalPath: CriticalPathItem[];
  hops: Map<string, HopAccount>;
  missing: string[];
  /** Inference server spans on the critical path, split into the engine's phases. */
  llm: LlmPhases[];
}

export function analyzeTrace(spans: Span[], ctx: AnalyzeContext): TraceAnalysis {
  const a = openAccount(spans, ctx);
  for (const p of PASSES) p.run(a);
  return {
    traceId: a.spans[a.anchor]?.traceId,
    tree: a.tree,
    anchor: a.anchor,
    anchorReason: a.anchorReason,
    anchorDurationMs: a.anchorDurationMs,
    criticalPath: a.criticalPath,
    hops: a.hops,
    missing: a.missing,
    llm: a.llm,
  };
}
