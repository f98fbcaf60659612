/** `pods`: the pods of one service (GET /services/:service/pods) with their latencies and kernel signals. */
import { api } from '../../api/client';
import { figureNotices, podsFrame } from '../frames/services';
import { answerFrames, defineKind } from '../kind';

export interface PodsQuery {
  service: string;
}

export const pods = defineKind<PodsQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.pods(q.service, { from: ctx.from, to: ctx.to }),
      (a) => [podsFrame(a)],
      (a) => figureNotices(a, a.pods)
    ),
});
