/**
 * Composite alerts → a table frame whose rows link to the drill-down the proxy anchored each alert to, the range's
 * firing/resolved transitions (the history) as a second part, and who evaluates them; fault injections → annotation
 * frames (time, timeEnd, title, text, tags) that Scenes' annotations layer marks on every time series of the page.
 */
import type { DataFrame, DataTopic, QueryResultMetaNotice } from '@grafana/data';

import type { AlertsAnswer, AnnotationsAnswer } from '../../../contract';
import { partRefId } from '../query';
import { columns, frame, OTHER, STRING, TIME } from './frame';
import { HIDDEN } from './links';

const DRILLDOWN = { title: 'Open the drill-down', url: '${__data.fields.link:raw}' };

/** Who evaluates the rules, as a sentence (the `alerts-evaluator` lease: one proxy of those sharing the database). */
export function evaluatorText(answer: Pick<AlertsAnswer, 'evaluator' | 'evaluatedAt'>): string | undefined {
  const e = answer.evaluator;
  if (!e) {
    return undefined;
  }
  const last =
    answer.evaluatedAt !== null
      ? `, last at ${new Date(answer.evaluatedAt)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC')}`
      : '';
  if (e.holder === null) {
    return `No proxy holds the evaluator lease: the rules are not being evaluated now${last}.`;
  }
  return e.self
    ? `Evaluated by this proxy (${e.holder})${last}.`
    : `Evaluated by another proxy (${e.holder}); this one reads the shared database${last}.`;
}

/** The range's transitions, newest first: when each alert fired or resolved (a table part, `history`). */
export function alertHistoryFrame(answer: AlertsAnswer, refId: string): DataFrame {
  const h = answer.history ?? [];
  return frame(
    columns(h, [
      ['at', TIME, (x) => x.atMs, { displayName: 'At' }],
      ['state', STRING, (x) => x.alert.state, { displayName: 'Became' }],
      ['severity', STRING, (x) => x.alert.severity, { displayName: 'Severity' }],
      ['name', STRING, (x) => x.alert.name, { displayName: 'Rule', links: [DRILLDOWN] }],
      ['pod', STRING, (x) => x.alert.pod ?? '', { displayName: 'Pod' }],
      ['summary', STRING, (x) => x.alert.summary, { displayName: 'Summary' }],
      ['ruleId', STRING, (x) => x.alert.ruleId, HIDDEN],
      ['link', STRING, (x) => x.alert.link, HIDDEN],
    ]),
    { name: 'alert history', refId: partRefId(refId, 'history') }
  );
}

/** Who evaluates (a notice on both parts); an answer without history (an older proxy) says so. */
export function alertsNotices(answer: AlertsAnswer): QueryResultMetaNotice[] {
  const who = evaluatorText(answer);
  return [
    ...(who
      ? [{ severity: answer.evaluator?.holder === null ? ('warning' as const) : ('info' as const), text: who }]
      : []),
    ...(answer.history === undefined
      ? [{ severity: 'info' as const, text: 'This proxy keeps no alert history.' }]
      : []),
  ];
}

export function alertsFrame(answer: AlertsAnswer): DataFrame {
  const a = answer.alerts;
  return frame(
    columns(a, [
      ['state', STRING, (x) => x.state, { displayName: 'State' }],
      ['severity', STRING, (x) => x.severity, { displayName: 'Severity' }],
      ['name', STRING, (x) => x.name, { displayName: 'Rule', links: [DRILLDOWN] }],
      ['pod', STRING, (x) => x.pod ?? '', { displayName: 'Pod' }],
      ['startsAt', TIME, (x) => x.startsAt, { displayName: 'Since' }],
      ['endsAt', TIME, (x) => x.endsAt ?? null, { displayName: 'Until' }],
      ['summary', STRING, (x) => x.summary, { displayName: 'Summary' }],
      ['ruleId', STRING, (x) => x.ruleId, { displayName: 'Rule id' }],
      ['link', STRING, (x) => x.link, { custom: { hidden: true } }],
    ]),
    {
      name: 'alerts',
      meta: {
        custom: {
          evaluatedAt: answer.evaluatedAt,
          evaluator: answer.evaluator,
          evaluatorText: evaluatorText(answer),
          rulesVersion: answer.rulesVersion,
        },
      },
    }
  );
}

const ANNOTATIONS = 'annotations' as unknown as DataTopic;

export function faultAnnotationsFrame(answer: AnnotationsAnswer): DataFrame {
  const a = answer.annotations;
  const title = (x: AnnotationsAnswer['annotations'][number]) =>
    `fault ${x.kind} on ${x.target}${x.pod ? ` (${x.pod})` : ''}`;
  return frame(
    columns(a, [
      ['time', TIME, (x) => x.startMs],
      ['timeEnd', TIME, (x) => x.endMs ?? x.startMs],
      ['title', STRING, title],
      [
        'text',
        STRING,
        (x) =>
          `${title(x)}${x.magnitude !== undefined ? `, magnitude ${x.magnitude}` : ''}${x.note ? ` — ${x.note}` : ''}`,
      ],
      ['tags', OTHER, (x) => ['fault', x.kind, x.target]],
    ]),
    { name: 'faults', meta: { dataTopic: ANNOTATIONS } }
  );
}
