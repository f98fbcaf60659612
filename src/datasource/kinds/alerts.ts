/** `alerts`: firing and resolved composite alerts of the window (GET /alerts), each linking to its drill-down. */
import { api } from '../../api/client';
import { alertsFrame } from '../frames/alerts';
import { answerFrames, defineKind } from '../kind';

export const alerts = defineKind<Record<string, never>>({
  run: (_q, ctx) => answerFrames(ctx, api.alerts({ from: ctx.from, to: ctx.to }), (a) => [alertsFrame(a)]),
});
