/**
 * `windowRca`: the window root cause of the panel's time range (GET /rca?from&to[&service]): the range's traces
 * (failed and slowest first) ranked against the hour before `from`, with the engine phases of its worst LLM spans
 * and the kernel evidence of the window. Parts as one trace's root cause (`criticalPath`, `llmPhases`, `engineState`).
 */
import { api } from '../../api/client';
import { rcaNotices } from '../frames/traces';
import { windowRcaFrames } from '../frames/windowRca';
import { answerFrames, defineKind, shared } from '../kind';

export interface WindowRcaQuery {
  /** Only traces through this service. */
  service?: string;
}

export const windowRca = defineKind<WindowRcaQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      shared(`window-rca:${ctx.from}:${ctx.to}:${q.service ?? ''}`, () =>
        api.windowRca({ from: ctx.from, to: ctx.to, ...(q.service ? { service: q.service } : {}) })
      ),
      (d) => windowRcaFrames(d, ctx.refId),
      (d) => [{ severity: 'info' as const, text: d.sample.how }, ...rcaNotices(d)]
    ),
});
