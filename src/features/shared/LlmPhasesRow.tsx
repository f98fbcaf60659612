/**
 * Inside the inference server, as two table panels over a root-cause runner's parts: each LLM span's phases (queue,
 * prefill, decode; TGI's validation, queue, inference) against their healthy baseline, and the engine's state on the
 * pod then with the metric each figure was read from, one above the other. Drawn only when the answer split an LLM
 * span; each table as tall as its rows.
 */
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
  type SceneQueryRunner,
} from '@grafana/scenes';
import React from 'react';

import { ENGINE_STATE_PART, LLM_PHASES_PART } from '../../datasource/frames/llm';
import { partRefId } from '../../datasource/query';
import { hopscopePanel, partOf } from '../../scenes/panels';

interface LlmPhasesRowState extends SceneObjectState {
  /** The phases' frame's refId part is read from this runner's answer. */
  $data: SceneQueryRunner;
  refId: string;
  body: SceneObject;
  /** Phase rows (0: the answer has no phases, nothing is drawn). */
  rows: number;
}

export class LlmPhasesRow extends SceneObjectBase<LlmPhasesRowState> {
  static Component = LlmPhasesRowRenderer;

  /** `runner`: a runner of its own (shared() makes it no extra proxy call) whose query has `refId`. */
  constructor(runner: SceneQueryRunner, refId: string) {
    const phases = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Inside the inference server: phases against their baseline')
        .setDescription(
          "The LLM span split into the phases the engine reports (vLLM's gen_ai.latency.* attributes, SGLang's request span, TGI's router timings), each against the same operation's healthy median. Red: more than twice the usual."
        )
        .setData(partOf(partRefId(refId, LLM_PHASES_PART)))
        .setOption('cellHeight', 'sm' as never),
      { key: 'llm-phases' }
    );
    const state = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Engine state on the pod, and the metric each figure came from')
        .setDescription(
          "Read from Prometheus at the span's time: the metric name found (a new or an older release's), the instant evaluated and the scrape interval. A figure the engine does not expose is left out."
        )
        .setData(partOf(partRefId(refId, ENGINE_STATE_PART)))
        .setOption('cellHeight', 'sm' as never),
      { key: 'llm-engine-state' }
    );
    const phasesItem = new SceneFlexItem({ height: 150, body: phases });
    const stateItem = new SceneFlexItem({ height: 150, body: state });
    super({
      $data: runner,
      refId,
      rows: 0,
      body: new SceneFlexLayout({ direction: 'column', children: [phasesItem, stateItem] }),
    });
    this.addActivationHandler(() => {
      const apply = () => {
        const rowsOf = (p: string) =>
          runner.state.data?.series.find((f) => f.refId === partRefId(this.state.refId, p))?.length ?? 0;
        // No phases: nothing to draw; else each table as tall as its rows.
        const rows = rowsOf(LLM_PHASES_PART);
        const heightOf = (n: number) => Math.min(420, 92 + Math.max(1, n) * 36);
        phasesItem.setState({ height: heightOf(rows) });
        stateItem.setState({ height: heightOf(rowsOf(ENGINE_STATE_PART)) });
        if (rows !== this.state.rows) {
          this.setState({ rows });
        }
      };
      apply();
      const sub = runner.subscribeToState(apply);
      return () => sub.unsubscribe();
    });
  }
}

function LlmPhasesRowRenderer({ model }: SceneComponentProps<LlmPhasesRow>) {
  const { body, rows } = model.useState();
  return rows ? <body.Component model={body} /> : null;
}
