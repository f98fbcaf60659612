/**
 * A time-series chart from @grafana/ui (the same uPlot TimeSeries Grafana's own panel uses): shared crosshair with
 * every chart of the view (uPlot cursor sync) and with the canvas heatmap (via `Crosshair`), drag to zoom the scene's
 * time range, fault annotations as vertical markers, and a tooltip with every series at the hovered instant.
 */
import { css } from '@emotion/css';
import { applyFieldOverrides, DashboardCursorSync, EventBusSrv, FieldColorModeId, formattedValueToString, type DataFrame, type GrafanaTheme2, type TimeRange } from '@grafana/data';
import { LegendDisplayMode } from '@grafana/schema';
import { PanelContextProvider, SeriesTable, TimeSeries, TooltipPlugin2, useStyles2, useTheme2, type UPlotConfigBuilder } from '@grafana/ui';
import React, { useEffect, useMemo, useRef } from 'react';
import type uPlot from 'uplot';

import type { Crosshair } from './crosshair';

export interface Annotation {
  timeMs: number;
  endMs?: number;
  label: string;
}

export interface TimeSeriesPanelProps {
  id: string;
  frames: DataFrame[];
  timeRange: TimeRange;
  width: number;
  height: number;
  timeZone?: string;
  crosshair?: Crosshair;
  annotations?: Annotation[];
  onZoom?: (fromMs: number, toMs: number) => void;
  legend?: boolean;
  /** Called after uPlot has drawn the series (each redraw): the page's "data on screen" signal. */
  onDrawn?: () => void;
}

const sharedContext = {
  eventsScope: '__global_',
  eventBus: new EventBusSrv(),
  sync: () => DashboardCursorSync.Crosshair,
};

// TooltipHoverMode.xAll is a const enum in @grafana/ui's types (not importable with isolatedModules).
const HOVER_X_ALL = 1;

export function TimeSeriesPanel({ id, frames, timeRange, width, height, timeZone = 'browser', crosshair, annotations = [], onZoom, legend = true, onDrawn }: TimeSeriesPanelProps) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const plotRef = useRef<uPlot | null>(null);
  const annRef = useRef(annotations);
  annRef.current = annotations;
  const onDrawnRef = useRef(onDrawn);
  onDrawnRef.current = onDrawn;
  // The uPlot hooks are added once per chart config, so they read the current theme through a ref.
  const themeRef = useRef(theme);
  themeRef.current = theme;
  const source = `ts-${id}`;

  useEffect(() => {
    if (!crosshair) {
      return;
    }
    // Draw the heatmap's hovered instant here; other charts already sync through uPlot's own cursor sync.
    const sub = crosshair.state$.subscribe(({ t, source: from }) => {
      const u = plotRef.current;
      if (!u || from !== 'gpu-heatmap') {
        return;
      }
      if (t === null) {
        u.setCursor({ left: -10, top: -10 });
      } else {
        u.setCursor({ left: u.valToPos(t, 'x'), top: u.bbox.height / (window.devicePixelRatio || 1) / 2 });
      }
    });
    return () => sub.unsubscribe();
  }, [crosshair]);

  // What Grafana does before any panel draws: display processors (units, decimals) and series colours from the theme.
  const processed = useMemo(
    () =>
      applyFieldOverrides({
        data: frames,
        fieldConfig: { defaults: { color: { mode: FieldColorModeId.PaletteClassic } }, overrides: [] },
        replaceVariables: (v: string) => v,
        theme,
        timeZone,
      }),
    [frames, theme, timeZone]
  );

  const legendOptions = useMemo(
    () => ({ showLegend: legend, displayMode: LegendDisplayMode.List, placement: 'bottom' as const, calcs: [] }),
    [legend]
  );

  return (
    <PanelContextProvider value={sharedContext}>
      <TimeSeries frames={processed} timeRange={timeRange} timeZone={timeZone} width={width} height={height} legend={legendOptions}>
        {(builder, alignedFrame) => {
          // GraphNG calls this on every render with the same builder until the config is rebuilt: hook once.
          if (!hookedBuilders.has(builder)) {
            hookedBuilders.add(builder);
            addHooks(builder);
          }
          return renderTooltip(builder, alignedFrame);
        }}
      </TimeSeries>
    </PanelContextProvider>
  );

  function addHooks(builder: UPlotConfigBuilder): void {
    builder.addHook('init', (u: uPlot) => {
      plotRef.current = u;
    });
    builder.addHook('setCursor', (u: uPlot) => {
      const left = u.cursor.left ?? -1;
      crosshair?.publish(left >= 0 ? Math.round(u.posToVal(left, 'x')) : null, source);
    });
    builder.addHook('draw', (u: uPlot) => {
      const ctx = u.ctx;
      const theme = themeRef.current;
      ctx.save();
      for (const a of annRef.current) {
        const x0 = u.valToPos(a.timeMs, 'x', true);
        const x1 = a.endMs !== undefined ? u.valToPos(a.endMs, 'x', true) : x0;
        if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) {
          continue;
        }
        ctx.fillStyle = theme.colors.warning.transparent;
        if (x1 > x0) {
          ctx.fillRect(Math.max(x0, u.bbox.left), u.bbox.top, Math.min(x1, u.bbox.left + u.bbox.width) - Math.max(x0, u.bbox.left), u.bbox.height);
        }
        ctx.strokeStyle = theme.colors.warning.main;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(x0, u.bbox.top);
        ctx.lineTo(x0, u.bbox.top + u.bbox.height);
        ctx.stroke();
      }
      ctx.restore();
      onDrawnRef.current?.();
    });
  }

  function renderTooltip(builder: UPlotConfigBuilder, alignedFrame: DataFrame) {
    return (
      <TooltipPlugin2
        config={builder}
        hoverMode={HOVER_X_ALL}
        syncMode={DashboardCursorSync.Crosshair}
        syncScope="__global_"
        queryZoom={onZoom ? ({ from, to }) => onZoom(from, to) : undefined}
        render={(u, dataIdxs) => {
          const rows = alignedFrame.fields
            .map((f, i) => ({ f, i }))
            .filter(({ f, i }) => i > 0 && f.type === 'number' && dataIdxs[i] !== null && dataIdxs[i] !== undefined);
          const t = dataIdxs[0] !== null && dataIdxs[0] !== undefined ? alignedFrame.fields[0].values[dataIdxs[0]] : undefined;
          return (
            <div className={styles.tooltip}>
              <SeriesTable
                timestamp={t !== undefined ? new Date(t).toLocaleString() : undefined}
                series={rows.map(({ f, i }) => {
                  const v = f.values[dataIdxs[i]!];
                  const stroke = u.series[i]?.stroke;
                  return {
                    color: typeof stroke === 'function' ? String(stroke(u, i)) : typeof stroke === 'string' ? stroke : undefined,
                    label: f.state?.displayName ?? f.config.displayName ?? f.name,
                    value: f.display ? formattedValueToString(f.display(v)) : String(v),
                  };
                })}
              />
              {annRef.current
                .filter((a) => t !== undefined && Math.abs(a.timeMs - t) < (u.scales.x.max! - u.scales.x.min!) / 50)
                .map((a) => (
                  <div key={a.timeMs} className={styles.ann}>
                    ⚑ {a.label}
                  </div>
                ))}
            </div>
          );
        }}
      />
    );
  }
}

const hookedBuilders = new WeakSet<UPlotConfigBuilder>();

const getStyles = (theme: GrafanaTheme2) => ({
  tooltip: css({ padding: theme.spacing(1), fontSize: theme.typography.bodySmall.fontSize }),
  ann: css({ color: theme.colors.warning.text, marginTop: theme.spacing(0.5) }),
});
