/**
 * Composite alerts → a table frame whose rows link to the drill-down the proxy anchored each alert to, and fault
 * injections → annotation frames (time, timeEnd, title, text, tags) that Scenes' annotations layer marks on every
 * time series of the page.
 */
import type { DataFrame, DataTopic } from '@grafana/data';

import type { AlertsAnswer, AnnotationsAnswer } from '../../../contract';
import { field, frame, OTHER, STRING, TIME } from './frame';

export function alertsFrame(answer: AlertsAnswer): DataFrame {
  const a = answer.alerts;
  return frame(
    [
      field('state', STRING, a.map((x) => x.state), { displayName: 'State' }),
      field('severity', STRING, a.map((x) => x.severity), { displayName: 'Severity' }),
      field('name', STRING, a.map((x) => x.name), { displayName: 'Rule', links: [{ title: 'Open the drill-down', url: '${__data.fields.link:raw}' }] }),
      field('pod', STRING, a.map((x) => x.pod ?? ''), { displayName: 'Pod' }),
      field('startsAt', TIME, a.map((x) => x.startsAt), { displayName: 'Since' }),
      field('endsAt', TIME, a.map((x) => x.endsAt ?? null), { displayName: 'Until' }),
      field('summary', STRING, a.map((x) => x.summary), { displayName: 'Summary' }),
      field('ruleId', STRING, a.map((x) => x.ruleId), { displayName: 'Rule id' }),
      field('link', STRING, a.map((x) => x.link), { custom: { hidden: true } }),
    ],
    { name: 'alerts', meta: { custom: { evaluatedAt: answer.evaluatedAt } } }
  );
}

const ANNOTATIONS = 'annotations' as unknown as DataTopic;

export function faultAnnotationsFrame(answer: AnnotationsAnswer): DataFrame {
  const a = answer.annotations;
  const title = (x: AnnotationsAnswer['annotations'][number]) => `fault ${x.kind} on ${x.target}${x.pod ? ` (${x.pod})` : ''}`;
  return frame(
    [
      field('time', TIME, a.map((x) => x.startMs)),
      field('timeEnd', TIME, a.map((x) => x.endMs ?? x.startMs)),
      field('title', STRING, a.map(title)),
      field('text', STRING, a.map((x) => `${title(x)}${x.magnitude !== undefined ? `, magnitude ${x.magnitude}` : ''}${x.note ? ` — ${x.note}` : ''}`)),
      field('tags', OTHER, a.map((x) => ['fault', x.kind, x.target])),
    ],
    { name: 'faults', meta: { dataTopic: ANNOTATIONS } }
  );
}
