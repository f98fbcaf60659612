/**
 * One trace's root cause as Grafana panels: the answer's verdict on top (RcaVerdict), the ranked candidates with their evidence (a table), what the trace says
 * beyond the panels (TraceFindings), the LLM span's phases against their baseline and the engine's state with
 * the metrics it was read from (LlmPhasesRow), the trace as an icicle with the engine's critical path (a runtime panel), the
 * kernel events of the suspect pods on the trace's own timeline, and the selected span (URL key `span`). A saved
 * answer (URL key `answer`, SavedAnswers) is shown as it was ranked then.
 */
import type { DataFrame } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  VizPanelBuilder,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
  type VizPanel,
} from '@grafana/scenes';
import React from 'react';

import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import { hopscopeQuery } from '../../datasource/query';
import { KERNEL_LANES_PANEL, type KernelLanesOptions } from '../../panels/kernelLanes';
import { TRACE_ICICLE_PANEL, type TraceIcicleOptions } from '../../panels/traceIcicle';
import { fitToData, hopscopePanel, hopscopeRunner, setPanelOptions } from '../../scenes/panels';
import { LlmPhasesRow } from '../shared/LlmPhasesRow';
import { RcaVerdict } from '../shared/RcaVerdict';
import { SavedAnswers } from './SavedAnswers';
import { TraceFindings } from './TraceFindings';

interface TraceViewState extends SceneObjectState {
  traceId: string;
  selectedSpanId?: string;
  /** A saved answer shown instead of the live root cause (URL `answer`). */
  answerId?: string;
  body: SceneObject;
}

const rcaQuery = (traceId: string, answer?: string) => hopscopeQuery('rca', { traceId, ...(answer ? { answer } : {}) });

export class TraceScene extends SceneObjectBase<TraceViewState> {
  static Component = TraceRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.trace] });
  private readonly icicle: VizPanel<TraceIcicleOptions>;
  private readonly lanes: VizPanel<KernelLanesOptions>;
  private readonly findings: TraceFindings;
  private readonly answers: SavedAnswers;
  private readonly runners: { trace: SceneQueryRunner; rca: SceneQueryRunner; llm: SceneQueryRunner };

  constructor(traceId: string) {
    // The trace and its root cause (one call each, shared by the panels that ask in the same refresh).
    const traceRunner = hopscopeRunner(hopscopeQuery('trace', { traceId }), rcaQuery(traceId));
    const rcaRunner = hopscopeRunner(rcaQuery(traceId));
    const candidates = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Root cause: the hops that explain the delay, ranked')
        .setDescription(
          'Each candidate with its evidence (labels from the evidence catalogue). Click a pod for its kernel evidence, an operation to show its span.'
        )
        .setData(rcaRunner)
        .setOption('sortBy', [{ displayName: '#', desc: false }])
        .setOption('cellHeight', 'lg' as never),
      { key: 'rca' }
    );
    const icicle = hopscopePanel(
      new VizPanelBuilder<TraceIcicleOptions, object>(TRACE_ICICLE_PANEL, '1.0.0')
        .setTitle(`Trace ${traceId.slice(0, 16)}…`)
        .setDescription(
          "x is time, y is depth; the engine's critical path (clock skew corrected) solid, the other spans faded, root-cause ranks as badges. Click or Enter selects a span."
        )
        .setData(traceRunner),
      { key: 'trace-tree', traceId }
    );
    const lanes = hopscopePanel(
      new VizPanelBuilder<KernelLanesOptions, object>(KERNEL_LANES_PANEL, '1.0.0')
        .setTitle("Kernel events of the suspect pods, on the trace's timeline")
        .setData(hopscopeRunner(hopscopeQuery('traceKernelEvents', { traceId }))),
      { key: 'trace-kernel' }
    );
    // The LLM spans' phases and engine state: the same root cause (shared() makes it no extra proxy call).
    const llmRunner = hopscopeRunner(rcaQuery(traceId));
    const findings = new TraceFindings({ data: traceRunner.getRef() });
    const answers = new SavedAnswers({ traceId, data: rcaRunner.getRef() });
    super({
      traceId,
      body: new SceneFlexLayout({
        direction: 'column',
        children: [
          new SceneFlexItem({ body: new RcaVerdict({ data: rcaRunner.getRef() }) }),
          new SceneFlexItem({ body: answers }),
          // As tall as what they draw: the candidates, the trace's depth.
          fitToData(new SceneFlexItem({ height: 240, body: candidates }), rcaRunner, (d) => {
            const rows = d.series.find((f) => f.refId === 'rca')?.length;
            return rows === undefined ? undefined : Math.min(520, 90 + Math.max(1, rows) * 48);
          }),
          new SceneFlexItem({ body: new LlmPhasesRow(llmRunner, 'rca') }),
          new SceneFlexItem({ body: findings }),
          fitToData(new SceneFlexItem({ height: 240, body: icicle }), traceRunner, (d) => {
            const trace = d.series.find((f) => f.meta?.preferredVisualisationType === 'trace');
            return trace ? Math.min(560, Math.max(120, traceDepth(trace) * 20 + 70)) : undefined;
          }),
          new SceneFlexItem({ height: 5 * 25 + 60, body: lanes }),
        ],
      }),
    });
    this.icicle = icicle;
    this.lanes = lanes;
    this.findings = findings;
    this.answers = answers;
    this.runners = { trace: traceRunner, rca: rcaRunner, llm: llmRunner };
    // A span selected from the URL before the trace arrived: its window is shaded once the spans are known.
    this.addActivationHandler(() => {
      const sub = traceRunner.subscribeToState(
        () => this.state.selectedSpanId && this.select(this.state.selectedSpanId)
      );
      return () => sub.unsubscribe();
    });
  }

  public getUrlState(): SceneObjectUrlValues {
    return { span: this.state.selectedSpanId, answer: this.state.answerId };
  }

  /** Scenes passes only the keys that changed. */
  public updateFromUrl(values: SceneObjectUrlValues): void {
    if ('answer' in values) {
      const answer =
        typeof values.answer === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(values.answer) ? values.answer : undefined;
      if (answer !== this.state.answerId) {
        this.showAnswer(answer);
      }
    }
    if ('span' in values) {
      const span = typeof values.span === 'string' && values.span ? values.span : undefined;
      if (span !== this.state.selectedSpanId) {
        this.select(span);
      }
    }
  }

  /** Shows a saved answer (its ranking and critical path as they were saved), or the live root cause (undefined). */
  public showAnswer(answerId: string | undefined): void {
    const { traceId } = this.state;
    this.setState({ answerId });
    this.answers.setState({ answerId });
    this.runners.trace.setState({ queries: [hopscopeQuery('trace', { traceId }), rcaQuery(traceId, answerId)] });
    this.runners.rca.setState({ queries: [rcaQuery(traceId, answerId)] });
    this.runners.llm.setState({ queries: [rcaQuery(traceId, answerId)] });
    for (const r of [this.runners.trace, this.runners.rca, this.runners.llm]) {
      if (r.isActive) {
        r.runQueries();
      }
    }
  }

  /** The selected span: drawn on the icicle, its window shaded on the kernel lanes, its attributes listed. */
  public select(spanId: string | undefined): void {
    this.setState({ selectedSpanId: spanId });
    setPanelOptions(this.icicle, { selectedSpanId: spanId });
    this.findings.setState({ selectedSpanId: spanId });
    const span = spanId ? this.findings.span(spanId) : undefined;
    setPanelOptions(this.lanes, { highlight: span ? { fromMs: span.startMs, toMs: span.endMs } : undefined });
  }
}

function TraceRenderer({ model }: SceneComponentProps<TraceScene>) {
  const { body } = model.useState();
  return <body.Component model={body} />;
}

/** Levels of a trace frame's span tree (its parent links), for the icicle's height. */
function traceDepth(frame: DataFrame): number {
  const ids = frame.fields.find((f) => f.name === 'spanID')?.values ?? [];
  const parents = frame.fields.find((f) => f.name === 'parentSpanID')?.values ?? [];
  const parentOf = new Map<string, string>(ids.map((id: string, i: number) => [id, parents[i]]));
  const depth = new Map<string, number>();
  const of = (id: string, guard = 0): number => {
    const known = depth.get(id);
    if (known !== undefined) {
      return known;
    }
    const p = parentOf.get(id);
    const d = p && parentOf.has(p) && guard < 10_000 ? of(p, guard + 1) + 1 : 1;
    depth.set(id, d);
    return d;
  };
  return ids.reduce((m: number, id: string) => Math.max(m, of(id)), 0);
}
