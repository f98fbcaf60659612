/**
 * `traceKernelEvents`: the kernel events of a trace's suspect pods (its top three candidates, else its first pods)
 * during the trace (±1 s), each tagged with its pod — the evidence next to the icicle.
 */
import type { KernelEvent } from '../../../contract';
import { api, type ApiResult } from '../../api/client';
import { kernelEventsFrame } from '../frames/kernel';
import { podOf } from '../frames/traces';
import { answerFrames, defineKind } from '../kind';
import { fetchRca } from './rca';
import { fetchTrace } from './trace';

export interface TraceKernelEventsQuery {
  traceId: string;
}

async function kernelForTrace(
  traceId: string
): Promise<ApiResult<{ events: KernelEvent[]; from: number; to: number }>> {
  const [t, r] = await Promise.all([fetchTrace(traceId), fetchRca(traceId)]);
  if (!t.ok) {
    return t;
  }
  if (!t.data.spans.length) {
    return { ok: true, data: { events: [], from: 0, to: 0 } };
  }
  const from = Math.floor(Math.min(...t.data.spans.map((s) => s.startMs)) - 1000);
  const to = Math.ceil(Math.max(...t.data.spans.map((s) => s.endMs)) + 1000);
  const pods = new Set<string>();
  if (r.ok) {
    r.data.candidates.slice(0, 3).forEach((c) => c.pod && pods.add(c.pod));
  }
  for (const s of t.data.spans) {
    const p = podOf(s);
    if (p && pods.size < 3) {
      pods.add(p);
    }
  }
  const answers = await Promise.all([...pods].map((p) => api.kernelEvents(p, { from, to })));
  const ok = answers.flatMap((a) => (a.ok ? [a.data] : []));
  if (!ok.length && answers.length && !answers[0].ok) {
    return answers[0];
  }
  return { ok: true, data: { events: ok.flatMap((a) => a.events), from, to } };
}

export const traceKernelEvents = defineKind<TraceKernelEventsQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(ctx, kernelForTrace(q.traceId), (a) => [
      { ...kernelEventsFrame(a.events, ctx.refId), meta: { custom: { fromMs: a.from, toMs: a.to } } },
    ]),
});
