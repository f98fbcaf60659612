/**
 * The trace icicle, a runtime panel plugin: one trace's spans (the `trace` frame) laid out by time and depth, the
 * engine's critical path drawn solid (the `rca` answer's `criticalPath` part), root-cause ranks as badges; a span is
 * selected by click or keyboard into the URL (`span`, the trace view's key), and drawn selected from `selectedSpanId`.
 */
import { PanelPlugin, type PanelProps } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import React, { useMemo } from 'react';

import { VIEW_URL_KEYS } from '../../contract/app-urls';
import { criticalPathOfFrame, spansOfFrame } from '../datasource/frames/traces';
import { buildTraceTree } from '../transforms/traceTree';
import { measureRender } from './marks';
import { IcicleCanvas } from './IcicleCanvas';

export const TRACE_ICICLE_PANEL = 'hopscope-trace-icicle';

export interface TraceIcicleOptions {
  selectedSpanId?: string;
}

function TraceIciclePanel({ data, width, height, options }: PanelProps<TraceIcicleOptions>) {
  const traceFrame = data.series.find((f) => f.meta?.preferredVisualisationType === 'trace');
  const pathFrame = data.series.find((f) => f.refId?.endsWith(':criticalPath'));
  const rankFrame = data.series.find(
    (f) => f.fields.some((x) => x.name === 'rank') && f.fields.some((x) => x.name === 'spanId')
  );
  const criticalPath = useMemo(() => criticalPathOfFrame(pathFrame), [pathFrame]);
  const tree = useMemo(() => {
    const spans = traceFrame ? spansOfFrame(traceFrame) : [];
    return spans.length ? measureRender('trace-tree-build', () => buildTraceTree(spans, criticalPath)) : undefined;
  }, [traceFrame, criticalPath]);
  const ranks = useMemo(() => {
    const rank = rankFrame?.fields.find((x) => x.name === 'rank')?.values ?? [];
    const span = rankFrame?.fields.find((x) => x.name === 'spanId')?.values ?? [];
    return new Map<string, number>(
      span.map((s: string, i: number) => [s, rank[i]] as [string, number]).filter(([s]) => s)
    );
  }, [rankFrame]);
  if (!tree) {
    return <div>No spans</div>;
  }
  return (
    <div style={{ maxHeight: height, overflow: 'auto' }}>
      <IcicleCanvas
        tree={tree}
        width={width}
        ranks={ranks}
        selectedSpanId={options.selectedSpanId}
        onSelect={(spanId) => locationService.partial({ [VIEW_URL_KEYS.trace[0]]: spanId })}
      />
    </div>
  );
}

export const traceIciclePlugin = (): PanelPlugin<TraceIcicleOptions> =>
  new PanelPlugin<TraceIcicleOptions>(TraceIciclePanel);
