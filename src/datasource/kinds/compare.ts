/** `compare`: A/B statistics of two selectors over the window (GET /compare): distributions, stats, latency, hot zones. */
import { api } from '../../api/client';
import { compareFrames, compareNotices } from '../frames/compare';
import { answerFrames, defineKind } from '../kind';

export interface CompareQuery {
  /** Selectors in the proxy's syntax, e.g. `backend=vllm` and `backend=tgi,model=v2`. */
  a: string;
  b: string;
}

export const compare = defineKind<CompareQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.compare(q.a, q.b, { from: ctx.from, to: ctx.to }),
      (a) => compareFrames(a, ctx.refId),
      compareNotices
    ),
});
