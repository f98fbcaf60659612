/** `golden`: the golden metrics of the chain (GET /golden), a frame group per metric (see frames/golden.ts). */
import { api } from '../../api/client';
import { goldenParams } from '../../api/requests';
import { goldenFrames } from '../frames/golden';
import { answerFrames, defineKind } from '../kind';

export interface GoldenQuery {
  backend?: string;
  model?: string;
  service?: string;
}

export const golden = defineKind<GoldenQuery>({
  run: (q, ctx) => answerFrames(ctx, api.golden(goldenParams(ctx.from, ctx.to, q)), (a) => goldenFrames(a, ctx.refId)),
});
