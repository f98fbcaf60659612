/**
 * "Explain this window": the window root cause of the page's time range (the range's traces, failed and slowest
 * first, against the hour before `from`) as panels on the data source — the verdict on top, what it read, the ranked
 * hops with their evidence (kernel evidence included), the LLM spans' phases and engine state, and the window's
 * slowest traces to open one. The range is the page's (URL `from`/`to`), so the page's link is the answer's link.
 */
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
} from '@grafana/scenes';
import React from 'react';

import { hopscopeQuery } from '../../datasource/query';
import { fitToData, hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { LlmPhasesRow } from '../shared/LlmPhasesRow';
import { RcaVerdict } from '../shared/RcaVerdict';
import { WindowAbout } from './WindowAbout';

const WINDOW = 'window';

interface ExplainState extends SceneObjectState {
  body: SceneObject;
}

export class ExplainScene extends SceneObjectBase<ExplainState> {
  static Component = ExplainRenderer;

  constructor() {
    const runner = hopscopeRunner(hopscopeQuery('windowRca', {}, WINDOW));
    // The LLM row's own runner: the same answer (shared() makes it no extra proxy call).
    const llmRunner = hopscopeRunner(hopscopeQuery('windowRca', {}, WINDOW));
    const candidates = hopscopePanel(
      PanelBuilders.table()
        .setTitle("Root cause of the window: the hops that explain its traces' delay, ranked")
        .setDescription(
          'Each hop with the evidence of the window (in how many traces, how much excess), kernel evidence included; click a pod for its kernel events.'
        )
        .setData(partOf(WINDOW))
        .setOption('sortBy', [{ displayName: '#', desc: false }])
        .setOption('cellHeight', 'lg' as never),
      { key: 'window-rca' }
    );
    const slowest = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Slowest traces of the window')
        .setDescription('Click a trace id to open its own root cause.')
        .setData(hopscopeRunner(hopscopeQuery('traces', { limit: 20 })))
        .setOption('sortBy', [{ displayName: 'Duration', desc: true }])
        .setOption('cellHeight', 'sm' as never),
      { key: 'window-traces' }
    );
    super({
      body: new SceneFlexLayout({
        direction: 'column',
        $data: runner,
        children: [
          new SceneFlexItem({ body: new RcaVerdict({ data: runner.getRef() }) }),
          new SceneFlexItem({ body: new WindowAbout({ data: runner.getRef() }) }),
          fitToData(new SceneFlexItem({ height: 300, body: candidates }), runner, (d) => {
            const rows = d.series.find((f) => f.refId === WINDOW)?.length;
            return rows === undefined ? undefined : Math.min(560, 90 + Math.max(1, rows) * 48);
          }),
          new SceneFlexItem({ body: new LlmPhasesRow(llmRunner, WINDOW) }),
          new SceneFlexItem({ height: 320, body: slowest }),
        ],
      }),
    });
  }
}

function ExplainRenderer({ model }: SceneComponentProps<ExplainScene>) {
  const { body } = model.useState();
  return <body.Component model={body} />;
}
