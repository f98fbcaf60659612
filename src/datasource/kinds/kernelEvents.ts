/**
 * `kernelEvents`: what the kernel saw on one pod (GET /pods/:pod/kernel-events): the events frame, and the TLS
 * handshake latency histogram as part `tls`.
 */
import { api } from '../../api/client';
import type { KernelEventType } from '../../../contract';
import { kernelEventsFrame, kernelNotices, tlsHistogramFrame } from '../frames/kernel';
import { answerFrames, defineKind } from '../kind';

export interface KernelEventsQuery {
  pod: string;
  type?: KernelEventType;
}

export const kernelEvents = defineKind<KernelEventsQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.kernelEvents(q.pod, { from: ctx.from, to: ctx.to, type: q.type }),
      (a) => [kernelEventsFrame(a.events, ctx.refId), tlsHistogramFrame(a.events, ctx.refId)],
      kernelNotices
    ),
});
