/**
 * `alerts`: firing and resolved composite alerts of the window (GET /alerts), each linking to its drill-down, and the
 * range's transitions (part `history`); `ruleId` keeps one rule's. Who evaluates is a notice, and on the alerts' frame.
 */
import type { AlertsAnswer } from '../../../contract';
import { api } from '../../api/client';
import { alertHistoryFrame, alertsFrame, alertsNotices } from '../frames/alerts';
import { answerFrames, defineKind } from '../kind';

export interface AlertsQuery {
  /** Only this rule's alerts (an alert link without a pod opens the page on its rule). */
  ruleId?: string;
}

const ofRule = (a: AlertsAnswer, ruleId?: string): AlertsAnswer =>
  ruleId
    ? {
        ...a,
        alerts: a.alerts.filter((x) => x.ruleId === ruleId),
        history: a.history?.filter((x) => x.alert.ruleId === ruleId),
      }
    : a;

export const alerts = defineKind<AlertsQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.alerts({ from: ctx.from, to: ctx.to }),
      (a) => [alertsFrame(ofRule(a, q.ruleId)), alertHistoryFrame(ofRule(a, q.ruleId), ctx.refId)],
      alertsNotices
    ),
});
