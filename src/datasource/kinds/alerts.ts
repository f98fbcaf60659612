/** `alerts`: firing and resolved composite alerts of the window (GET /alerts), each linking to its drill-down; `ruleId` keeps one rule's. */
import { api } from '../../api/client';
import { alertsFrame } from '../frames/alerts';
import { answerFrames, defineKind } from '../kind';

export interface AlertsQuery {
  /** Only this rule's alerts (an alert link without a pod opens the page on its rule). */
  ruleId?: string;
}

export const alerts = defineKind<AlertsQuery>({
  run: (q, ctx) =>
    answerFrames(ctx, api.alerts({ from: ctx.from, to: ctx.to }), (a) => [alertsFrame(q.ruleId ? { ...a, alerts: a.alerts.filter((x) => x.ruleId === q.ruleId) } : a)]),
});
