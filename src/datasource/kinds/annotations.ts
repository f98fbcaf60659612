/** `annotations`: the faults injected in the window (GET /annotations), as annotation frames for Scenes' annotations layer. */
import { api } from '../../api/client';
import { faultAnnotationsFrame } from '../frames/alerts';
import { answerFrames, defineKind } from '../kind';

export const annotations = defineKind<Record<string, never>>({
  run: (_q, ctx) =>
    answerFrames(ctx, api.annotations({ from: ctx.from, to: ctx.to }), (a) => [faultAnnotationsFrame(a)]),
});
