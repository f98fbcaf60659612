/**
 * The run's answers per model path (contract/fallback.ts): every finished request counted once by the model the chain
 * said answered it — primary when it is the model asked for, fall-back otherwise — with its graded answer (the agent's
 * task outcome, recall against the prompt's expected documents), and per time bucket of its send time.
 */
import { denseBuckets, type FallbackBucket, type FallbackPath, type FallbackSummary } from '../../../contract/fallback';
import type { Outcome } from './request';

export type FallbackOutcome = Pick<Outcome, 'outcome' | 'responseModel' | 'recall' | 'agentTask'>;

export class FallbackTally {
  private readonly paths = new Map<string, FallbackPath>();
  private readonly buckets = new Map<number, FallbackBucket>();
  private unknown = 0;

  constructor(readonly bucketS: number) {}

  /** One finished request (not an interrupted one), sent at `sentAtMs` (epoch ms). */
  record(r: FallbackOutcome, sentAtMs: number): void {
    const w = this.bucketS * 1000;
    const startMs = Math.floor(sentAtMs / w) * w;
    let b = this.buckets.get(startMs);
    if (!b) this.buckets.set(startMs, (b = { startMs, primary: 0, fallback: 0, failed: 0 }));
    if (r.outcome !== 'ok' && r.outcome !== 'degraded') {
      b.failed++;
      return;
    }
    if (r.responseModel === undefined) {
      // A server without the chain's answer info: served, on no known path (kept out of the buckets' rate).
      this.unknown++;
      return;
    }
    const path = r.outcome === 'degraded' ? 'fallback' : 'primary';
    b[path]++;
    const key = `${path}\u0000${r.responseModel}`;
    let p = this.paths.get(key);
    if (!p)
      this.paths.set(
        key,
        (p = { path, model: r.responseModel, served: 0, tasks: { n: 0, completed: 0 }, recall: { n: 0, sum: 0 } })
      );
    p.served++;
    if (r.agentTask) {
      p.tasks.n++;
      if (r.agentTask === 'completed') p.tasks.completed++;
    }
    if (r.recall !== undefined) {
      p.recall.n++;
      p.recall.sum += r.recall;
    }
  }

  result(): FallbackSummary {
    return {
      bucketS: this.bucketS,
      paths: [...this.paths.values()]
        .map((p) => ({ ...p, recall: { n: p.recall.n, sum: Number(p.recall.sum.toFixed(6)) } }))
        .sort((a, b) => a.path.localeCompare(b.path) || a.model.localeCompare(b.model)),
      buckets: denseBuckets([...this.buckets.values()], this.bucketS * 1000),
      unknown: this.unknown,
    };
  }
}
