/**
 * Stand-in for Grafana's time series panel, from @grafana/ui's TimeSeries (the uPlot chart Grafana's own panel draws
 * with): legend and tooltip from the options, cursor sync with the panel context (Scenes' CursorSync), drag to zoom
 * (onChangeTimeRange), and the data's annotations as markers and regions, as the core panel shows them.
 */
import { css } from '@emotion/css';
import {
  DashboardCursorSync,
  FieldType,
  formattedValueToString,
  type DataFrame,
  type GrafanaTheme2,
  type PanelProps,
} from '@grafana/data';
import {
  EventBusPlugin,
  SeriesTable,
  TimeSeries,
  TooltipPlugin2,
  usePanelContext,
  useStyles2,
  useTheme2,
  type UPlotConfigBuilder,
} from '@grafana/ui';
import React, { useMemo, useRef } from 'react';
import type uPlot from 'uplot';

import { standIn } from './plugin';
import { hostPanelIds } from './testIds';

interface Options {
  legend?: {
    showLegend?: boolean;
    displayMode?: 'list' | 'table' | 'hidden';
    placement?: 'bottom' | 'right';
    calcs?: string[];
  };
  tooltip?: { mode?: 'single' | 'multi' | 'none' };
}

// Grafana's time series field defaults (its panel registers them as custom field config).
const CUSTOM_DEFAULTS = {
  drawStyle: 'line',
  lineInterpolation: 'linear',
  lineWidth: 1,
  fillOpacity: 0,
  showPoints: 'never',
  pointSize: 4,
  spanNulls: false,
  axisPlacement: 'auto',
  gradientMode: 'none',
};
// TooltipHoverMode is a const enum in @grafana/ui's types (not importable with isolatedModules): xOne = 0, xAll = 1.
const HOVER = { single: 0, multi: 1 } as const;

interface Marker {
  time: number;
  timeEnd: number;
  text: string;
}

function annotationMarkers(frames: DataFrame[] | undefined): Marker[] {
  const out: Marker[] = [];
  for (const f of frames ?? []) {
    const col = (n: string) => f.fields.find((x) => x.name === n)?.values ?? [];
    const time = col('time');
    const end = col('timeEnd');
    const text = col('text');
    const title = col('title');
    for (let i = 0; i < f.length; i++) {
      out.push({ time: time[i], timeEnd: end[i] ?? time[i], text: String(title[i] ?? text[i] ?? '') });
    }
  }
  return out;
}

function TimeSeriesStandIn({
  id,
  data,
  timeRange,
  timeZone,
  width,
  height,
  options,
  onChangeTimeRange,
}: PanelProps<Options>) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const { sync, eventsScope, eventBus } = usePanelContext();
  const cursorSync = sync?.() ?? DashboardCursorSync.Off;
  const markers = useMemo(() => annotationMarkers(data.annotations), [data.annotations]);
  const markersRef = useRef(markers);
  markersRef.current = markers;
  const themeRef = useRef(theme);
  themeRef.current = theme;
  const hooked = useRef(new WeakSet<UPlotConfigBuilder>());

  const frames = useMemo(
    () =>
      data.series
        .filter(
          (f) =>
            f.fields.some((x) => x.type === FieldType.time) &&
            f.fields.some((x) => x.type === FieldType.number && !x.config.custom?.hideFrom?.viz)
        )
        .map((f) => ({
          ...f,
          fields: f.fields.map((x) => ({
            ...x,
            config: { ...x.config, custom: { ...CUSTOM_DEFAULTS, ...x.config.custom } },
          })),
        })),
    [data.series]
  );
  const legend = {
    showLegend: options.legend?.showLegend ?? true,
    displayMode: (options.legend?.displayMode ?? 'list') as never,
    placement: options.legend?.placement ?? 'bottom',
    calcs: options.legend?.calcs ?? [],
  };

  if (!frames.length) {
    return <div className={styles.noData}>No data</div>;
  }

  const addHooks = (builder: UPlotConfigBuilder) => {
    builder.addHook('draw', (u: uPlot) => {
      const ctx = u.ctx;
      const t = themeRef.current;
      ctx.save();
      for (const m of markersRef.current) {
        const x0 = u.valToPos(m.time, 'x', true);
        const x1 = u.valToPos(m.timeEnd, 'x', true);
        if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) {
          continue;
        }
        if (x1 > x0) {
          ctx.fillStyle = t.colors.warning.transparent;
          ctx.fillRect(
            Math.max(x0, u.bbox.left),
            u.bbox.top,
            Math.min(x1, u.bbox.left + u.bbox.width) - Math.max(x0, u.bbox.left),
            u.bbox.height
          );
        }
        ctx.strokeStyle = t.colors.warning.main;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(x0, u.bbox.top);
        ctx.lineTo(x0, u.bbox.top + u.bbox.height);
        ctx.stroke();
      }
      ctx.restore();
    });
  };

  return (
    <div
      data-testid={hostPanelIds.timeseries}
      data-panel-id={id}
      data-annotations={markers.length}
      aria-label={markers.map((m) => m.text).join('; ')}
    >
      <TimeSeries
        frames={frames}
        timeRange={timeRange}
        timeZone={timeZone}
        width={width}
        height={height}
        legend={legend}
      >
        {(builder, alignedFrame) => {
          // GraphNG calls this on every render with the same builder until its config is rebuilt: hook once per builder.
          if (!hooked.current.has(builder)) {
            hooked.current.add(builder);
            addHooks(builder);
          }
          return (
            <>
              {cursorSync !== DashboardCursorSync.Off && (
                <EventBusPlugin config={builder} eventBus={eventBus} frame={alignedFrame} />
              )}
              {options.tooltip?.mode !== 'none' && (
                <TooltipPlugin2
                  config={builder}
                  hoverMode={HOVER[options.tooltip?.mode === 'single' ? 'single' : 'multi']}
                  syncMode={cursorSync}
                  syncScope={eventsScope}
                  queryZoom={onChangeTimeRange}
                  render={(u, dataIdxs) => {
                    const rows = alignedFrame.fields
                      .map((f, i) => ({ f, i }))
                      .filter(
                        ({ f, i }) =>
                          i > 0 && f.type === FieldType.number && dataIdxs[i] !== null && dataIdxs[i] !== undefined
                      );
                    const t0 =
                      dataIdxs[0] !== null && dataIdxs[0] !== undefined
                        ? alignedFrame.fields[0].values[dataIdxs[0]]
                        : undefined;
                    const near = markersRef.current.filter(
                      (m) => t0 !== undefined && Math.abs(m.time - t0) < (u.scales.x.max! - u.scales.x.min!) / 50
                    );
                    return (
                      <div className={styles.tooltip} data-testid={hostPanelIds.timeseriesTooltip}>
                        <SeriesTable
                          timestamp={t0 !== undefined ? new Date(t0).toLocaleString() : undefined}
                          series={rows.map(({ f, i }) => {
                            const v = f.values[dataIdxs[i]!];
                            const stroke = u.series[i]?.stroke;
                            return {
                              color:
                                typeof stroke === 'function'
                                  ? String(stroke(u, i))
                                  : typeof stroke === 'string'
                                    ? stroke
                                    : undefined,
                              label: f.state?.displayName ?? f.config.displayName ?? f.name,
                              value: f.display ? formattedValueToString(f.display(v)) : String(v),
                            };
                          })}
                        />
                        {near.map((m) => (
                          <div key={`${m.time}-${m.text}`} className={styles.annotation}>
                            ⚑ {m.text}
                          </div>
                        ))}
                      </div>
                    );
                  }}
                />
              )}
            </>
          );
        }}
      </TimeSeries>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  tooltip: css({ padding: theme.spacing(1), fontSize: theme.typography.bodySmall.fontSize }),
  annotation: css({ color: theme.colors.warning.text, marginTop: theme.spacing(0.5) }),
  noData: css({
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    height: '100%',
    color: theme.colors.text.secondary,
  }),
});

export const timeSeriesPanel = () =>
  standIn<Options>('timeseries', 'Time series', TimeSeriesStandIn, { color: 'palette', annotations: true });
