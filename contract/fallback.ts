import { z } from 'zod';

/**
 * Fall-back consistency (issue 21): a run's answers per model path, keyed by the response model the chain reported
 * (`primary`: the model asked for answered; `fallback`: another one did, e.g. the light model after a GPU OOM), with
 * the graded answers on each (agent tasks completed, recall against the expected documents) and the fall-back share
 * over time. Counted by hopscope-load from every request (not sampled), added across workers by the proxy.
 */

const count = z.number().int().nonnegative();

/** One response model on one path. */
export const FallbackPath = z.object({
  path: z.enum(['primary', 'fallback']),
  /** The response model the chain reported (`hopscope.responseModel`). */
  model: z.string().min(1),
  /** Requests this model answered on this path. */
  served: count,
  /** Agent tasks answered here, and those the agent reported completed (a prompt's `expected.task: completed`). */
  tasks: z.object({ n: count, completed: count }),
  /** Answers graded against the prompt's expected documents: how many, and the sum of their recalls (mean = sum / n). */
  recall: z.object({ n: count, sum: z.number().nonnegative() }),
});
export type FallbackPath = z.infer<typeof FallbackPath>;

/** The requests sent in one time bucket: served on each path, and failed (no answer, so no path). */
export const FallbackBucket = z.object({
  /** Epoch ms, a multiple of the bucket width. */
  startMs: z.number(),
  primary: count,
  fallback: count,
  failed: count,
});
export type FallbackBucket = z.infer<typeof FallbackBucket>;

export const FallbackSummary = z.object({
  /** Bucket width in seconds, one of FALLBACK_BUCKET_S (each divides the next, so workers' buckets merge). */
  bucketS: z.number().int().positive(),
  paths: z.array(FallbackPath).max(100),
  /** Contiguous from the first request's bucket to the last one's, by the request's send time. */
  buckets: z.array(FallbackBucket).max(5000),
  /** Served answers without the chain's answer info (a real server): on no known path. */
  unknown: count,
});
export type FallbackSummary = z.infer<typeof FallbackSummary>;

/** Bucket widths (s): each divides the next, so a merge re-buckets every worker to the widest exactly. */
export const FALLBACK_BUCKET_S = [1, 5, 10, 30, 60, 300, 600, 1800, 3600] as const;
const MAX_BUCKETS = 120;

/** The narrowest width that keeps a run of `durationS` within ~120 buckets. */
export function fallbackBucketS(durationS: number): number {
  return FALLBACK_BUCKET_S.find((w) => durationS / w <= MAX_BUCKETS) ?? FALLBACK_BUCKET_S[FALLBACK_BUCKET_S.length - 1];
}

/** One path's figures over all its models. */
export interface PathTotals {
  served: number;
  models: string[];
  tasks: { n: number; completed: number };
  recall: { n: number; sum: number };
}

export function pathTotals(f: FallbackSummary, path: FallbackPath['path']): PathTotals {
  const t: PathTotals = { served: 0, models: [], tasks: { n: 0, completed: 0 }, recall: { n: 0, sum: 0 } };
  for (const p of f.paths) {
    if (p.path !== path) continue;
    t.served += p.served;
    t.models.push(p.model);
    t.tasks.n += p.tasks.n;
    t.tasks.completed += p.tasks.completed;
    t.recall.n += p.recall.n;
    t.recall.sum += p.recall.sum;
  }
  return t;
}

/** Agent tasks completed / agent tasks, or null when the path answered none. */
export const taskCompletion = (t: Pick<PathTotals, 'tasks'>): number | null =>
  t.tasks.n ? t.tasks.completed / t.tasks.n : null;

/** Mean recall of the path's graded answers, or null when none was graded. */
export const meanRecall = (t: Pick<PathTotals, 'recall'>): number | null =>
  t.recall.n ? t.recall.sum / t.recall.n : null;

/** Fall-back served / (primary + fall-back served) per bucket; null for a bucket where nothing was served. */
export const fallbackRate = (b: FallbackBucket): number | null =>
  b.primary + b.fallback ? b.fallback / (b.primary + b.fallback) : null;

const pct = (v: number): string => `${Math.round(v * 100)} %`;

/**
 * The figure in one sentence: "the fall-back path (hopscope-llama-1b) completes 61 % of agent tasks (11 of 18) vs
 * 92 % (46 of 50) on the primary path"; what is missing said as such; null when nothing fell back.
 */
export function fallbackSentence(f: FallbackSummary | undefined | null): string | null {
  if (!f) return null;
  const fb = pathTotals(f, 'fallback');
  const pr = pathTotals(f, 'primary');
  if (!fb.served) return null;
  const served = pr.served + fb.served;
  const head = `${fb.served} of ${served} served answers (${pct(fb.served / served)}) came from the fall-back path (${fb.models.join(', ')})`;
  const fc = taskCompletion(fb);
  const pc = taskCompletion(pr);
  let tasks: string;
  if (fc === null) tasks = 'it answered no agent task, so its completion is missing';
  else
    tasks = `it completes ${pct(fc)} of agent tasks (${fb.tasks.completed} of ${fb.tasks.n}) vs ${
      pc === null
        ? 'missing on the primary path (no agent task there)'
        : `${pct(pc)} (${pr.tasks.completed} of ${pr.tasks.n}) on the primary path`
    }`;
  const fr = meanRecall(fb);
  const pr2 = meanRecall(pr);
  const recall =
    fr !== null && pr2 !== null
      ? `; mean recall ${fr.toFixed(2)} (n ${fb.recall.n}) vs ${pr2.toFixed(2)} (n ${pr.recall.n})`
      : '';
  return `${head}: ${tasks}${recall}.`;
}

/** Several workers' tallies as one: counts add per (path, model) and per bucket, re-bucketed to the widest width. */
export function mergeFallback(parts: FallbackSummary[]): FallbackSummary | undefined {
  if (!parts.length) return undefined;
  if (parts.length === 1) return parts[0];
  const bucketS = Math.max(...parts.map((p) => p.bucketS));
  const paths = new Map<string, FallbackPath>();
  for (const part of parts)
    for (const p of part.paths) {
      const key = `${p.path}\u0000${p.model}`;
      const cur = paths.get(key);
      if (!cur) paths.set(key, { ...p, tasks: { ...p.tasks }, recall: { ...p.recall } });
      else {
        cur.served += p.served;
        cur.tasks.n += p.tasks.n;
        cur.tasks.completed += p.tasks.completed;
        cur.recall.n += p.recall.n;
        cur.recall.sum += p.recall.sum;
      }
    }
  const buckets = new Map<number, FallbackBucket>();
  const w = bucketS * 1000;
  for (const part of parts)
    for (const b of part.buckets) {
      const startMs = Math.floor(b.startMs / w) * w;
      const cur = buckets.get(startMs) ?? { startMs, primary: 0, fallback: 0, failed: 0 };
      cur.primary += b.primary;
      cur.fallback += b.fallback;
      cur.failed += b.failed;
      buckets.set(startMs, cur);
    }
  return {
    bucketS,
    paths: [...paths.values()].sort((a, b) => a.path.localeCompare(b.path) || a.model.localeCompare(b.model)),
    buckets: denseBuckets([...buckets.values()], w),
    unknown: parts.reduce((s, p) => s + p.unknown, 0),
  };
}

/** Buckets sorted and contiguous (empty ones filled with zeros) from the first to the last. */
export function denseBuckets(bs: FallbackBucket[], widthMs: number): FallbackBucket[] {
  if (!bs.length) return [];
  const by = new Map(bs.map((b) => [b.startMs, b]));
  const starts = bs.map((b) => b.startMs);
  const out: FallbackBucket[] = [];
  for (let t = Math.min(...starts); t <= Math.max(...starts); t += widthMs)
    out.push(by.get(t) ?? { startMs: t, primary: 0, fallback: 0, failed: 0 });
  return out;
}

/**
 * `fallback_completion:-10%` judged within one run: the fall-back path's agent-task completion against the primary
 * path's (the same run, the same time: what a baseline run cannot give). Not judged (pass) when nothing fell back or
 * either path answered no agent task: a run without fall-back has nothing inconsistent to show.
 */
export function judgeFallbackCompletion(
  rule: { direction: '+' | '-'; amount: number; relative: boolean },
  f: FallbackSummary | undefined
): { primary: number | null; fallback: number | null; pass: boolean } {
  const fb = f ? taskCompletion(pathTotals(f, 'fallback')) : null;
  const pr = f ? taskCompletion(pathTotals(f, 'primary')) : null;
  if (fb === null || pr === null) return { primary: pr, fallback: fb, pass: true };
  const slack = rule.relative ? (Math.abs(pr) * rule.amount) / 100 : rule.amount;
  const pass = rule.direction === '+' ? fb - pr <= slack + 1e-9 : pr - fb <= slack + 1e-9;
  return { primary: pr, fallback: fb, pass };
}

/** The metrics a regression rule judges within the run (against the primary path), not against a baseline run. */
export const WITHIN_RUN_METRICS: readonly string[] = ['fallback_completion'];
