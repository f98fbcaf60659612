/**
 * Stand-in for Grafana's heatmap panel, for `heatmap-rows` frames (a time field, then one numeric field per row, the
 * shape Grafana's heatmap draws without calculating buckets): rows named by their fields, colour from the options'
 * scheme and min/max, cell values formatted by `cellValues.unit`, a tooltip with the row's labels, the shared
 * crosshair (uPlot's cursor sync group, as the core panels sync; followed, not led), and a row's data link on its label.
 * Painted on canvas, one pixel per cell scaled up: 64 × 720 cells in a few milliseconds (`host:heatmap` measure).
 */
import { css } from '@emotion/css';
import {
  DashboardCursorSync,
  FieldType,
  dateTimeFormat,
  formattedValueToString,
  getValueFormat,
  type Field,
  type GrafanaTheme2,
  type PanelProps,
} from '@grafana/data';
import { usePanelContext, useStyles2, useTheme2 } from '@grafana/ui';
import * as d3 from 'd3';
import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';

import { buildHeatmapGrid, buildLut, cellAtPoint, cellValue, colAtTime, paintGrid, type CellRef } from './heatmapGrid';
import { standIn } from './plugin';
import { hostPanelIds } from './testIds';

interface Options {
  color?: {
    mode?: 'scheme' | 'opacity';
    scheme?: string;
    fill?: string;
    min?: number;
    max?: number;
    reverse?: boolean;
  };
  cellValues?: { unit?: string; decimals?: number };
  legend?: { show?: boolean };
}

const LABEL_WIDTH = 200;
const AXIS_HEIGHT = 20;
const LEGEND_HEIGHT = 20;

/** A colour scale of d3's scheme (Grafana's heatmap takes its schemes from d3-scale-chromatic), as colour stops. */
function colorStops(theme: GrafanaTheme2, options: Options['color']): string[] {
  if (options?.mode === 'opacity') {
    const c = theme.visualization.getColorByName(options.fill ?? 'dark-orange');
    return [theme.colors.background.primary, c];
  }
  const interpolate =
    (d3 as unknown as Record<string, ((t: number) => string) | undefined>)[
      `interpolate${options?.scheme ?? 'Oranges'}`
    ] ?? d3.interpolateOranges;
  const stops = Array.from({ length: 9 }, (_, i) => d3.color(interpolate(i / 8))!.formatHex());
  return options?.reverse ? stops.reverse() : stops;
}

/** What a uPlot in the sync group reads of the plot that moved the cursor: the x value (time) it points at. */
interface SyncSource {
  cursor?: { sync?: { values?: Array<number | null> } };
}

function HeatmapStandIn({ data, width, height, options, timeZone, timeRange }: PanelProps<Options>) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const { eventsScope, sync } = usePanelContext();
  const cursorSync = sync?.() ?? DashboardCursorSync.Off;
  const timeRangeRef = useRef({ from: timeRange.from.valueOf(), to: timeRange.to.valueOf() });
  timeRangeRef.current = { from: timeRange.from.valueOf(), to: timeRange.to.valueOf() };
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<{ cell: CellRef; x: number; y: number } | undefined>();
  const [crossTime, setCrossTime] = useState<number | undefined>();

  const frame = data.series.find((f) => f.fields.some((x) => x.type === FieldType.time) && f.length > 0);
  const rowFields = useMemo(() => (frame?.fields ?? []).filter((x) => x.type === FieldType.number), [frame]);
  const times = useMemo(
    () => (frame?.fields.find((x) => x.type === FieldType.time)?.values ?? []) as number[],
    [frame]
  );
  const min = options.color?.min ?? 0;
  const max = options.color?.max ?? 1;
  const grid = useMemo(
    () =>
      buildHeatmapGrid({
        rows: rowFields.map((f, i) => ({ id: `${i}`, label: f.state?.displayName ?? f.config.displayName ?? f.name })),
        times,
        values: rowFields.map((f) =>
          (f.values as Array<number | null>).map((v) => (v === null ? null : (v - min) / (max - min || 1)))
        ),
        field: '',
        unit: 'ratio',
      }),
    [rowFields, times, min, max]
  );
  const lut = useMemo(() => buildLut(colorStops(theme, options.color)), [theme, options.color]);
  const rowsN = grid.rows.length;
  const legend = options.legend?.show !== false;
  const plotW = Math.max(0, width - LABEL_WIDTH);
  const plotH = Math.max(20, height - AXIS_HEIGHT - (legend ? LEGEND_HEIGHT : 0));
  const rowH = rowsN ? plotH / rowsN : plotH;

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !plotW || !rowsN || !grid.times.length) {
      return;
    }
    const start = performance.now();
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(plotW * dpr);
    canvas.height = Math.round(plotH * dpr);
    const ctx = canvas.getContext('2d')!;
    const img = new ImageData(grid.times.length, rowsN);
    paintGrid(grid, lut, img.data);
    const off = document.createElement('canvas');
    off.width = grid.times.length;
    off.height = rowsN;
    off.getContext('2d')!.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(off, 0, 0, canvas.width, canvas.height);
    if (rowH * dpr >= 8) {
      ctx.fillStyle = theme.colors.background.primary;
      for (let r = 1; r < rowsN; r++) {
        ctx.fillRect(0, Math.round(r * rowH * dpr), canvas.width, Math.max(1, Math.round(dpr)));
      }
    }
    performance.measure('host:heatmap', { start, end: performance.now() });
  }, [grid, lut, plotW, plotH, rowsN, rowH, theme]);

  // The crosshair other panels publish; ours is published on hover (no `uplot` tag: uPlot charts follow it).
  // The shared crosshair as Grafana's heatmap (a uPlot chart) joins it: uPlot's cursor sync group of the panel
  // context's scope (Scenes' CursorSync), where the time series publish their cursor. The stand-in follows the shared
  // cursor; it does not lead it (a canvas is not a uPlot the others could read a position from).
  useEffect(() => {
    if (cursorSync === DashboardCursorSync.Off) {
      return;
    }
    const group = uPlot.sync(eventsScope);
    const client = {
      pub: (type: string, src: SyncSource | null, x: number, _y: number, w: number) => {
        // uPlot publishes a leave as a mousemove off the plot (x < 0).
        if (type === 'mousemove') {
          const v = src?.cursor?.sync?.values?.[0];
          setCrossTime(
            x < 0
              ? undefined
              : typeof v === 'number'
                ? v
                : timeRangeRef.current.from + (x / w) * (timeRangeRef.current.to - timeRangeRef.current.from)
          );
        }
        return true;
      },
    };
    group.sub(client as unknown as uPlot);
    return () => group.unsub(client as unknown as uPlot);
  }, [eventsScope, cursorSync]);

  if (!frame || !rowsN) {
    return (
      <div className={styles.noData} data-testid={hostPanelIds.heatmap}>
        No data
      </div>
    );
  }

  const unit = getValueFormat(options.cellValues?.unit ?? rowFields[0]?.config.unit ?? 'short');
  const fmt = (v: number) => formattedValueToString(unit(v, options.cellValues?.decimals ?? 1));
  const crossCol = crossTime !== undefined ? colAtTime(grid.times, crossTime) : undefined;
  const hovered = hover ? rowFields[hover.cell.row] : undefined;
  const hoveredValue = hover ? cellValue(grid, hover.cell) : NaN;
  const linkOf = (f: Field) => f.getLinks?.({ valueRowIndex: 0 })?.[0];
  const labelEvery = rowH >= 10 ? 1 : Math.ceil(12 / rowH);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const cell = cellAtPoint(grid, plotW, plotH, x, y);
    setHover(cell ? { cell, x, y } : undefined);
  };
  const onLeave = () => setHover(undefined);
  const count = Math.max(2, Math.floor(plotW / 120));
  const span = grid.times[grid.times.length - 1] - grid.times[0];
  const tickFormat = span / (count - 1) < 60_000 ? 'HH:mm:ss' : 'HH:mm';

  return (
    <div className={styles.wrap} data-testid={hostPanelIds.heatmap}>
      <div className={styles.body} style={{ height: plotH }}>
        <div className={styles.labels} style={{ width: LABEL_WIDTH }}>
          {/* One strip per row, exactly its height: the row's data link (each row is one, however thin). */}
          {rowFields.map((f, i) => {
            const link = linkOf(f);
            const label = grid.rows[i].label;
            const props = {
              className: styles.rowStrip,
              style: { top: i * rowH, height: rowH },
              'aria-label': label,
              'data-testid': hostPanelIds.heatmapRow(label),
            };
            return link ? (
              <a key={i} href={link.href} title={`${label}: ${link.title}`} {...props} />
            ) : (
              <span key={i} {...props} />
            );
          })}
          {/* Thin rows: every n-th row is labelled, as an axis of a dense heatmap is; the labels take no clicks. */}
          {grid.rows.map((row, i) =>
            i % labelEvery === 0 ? (
              <span
                key={i}
                className={styles.rowLabel}
                style={{ top: i * rowH, height: Math.max(rowH, 12) }}
                aria-hidden
              >
                {row.label}
              </span>
            ) : null
          )}
        </div>
        <div className={styles.plot} style={{ width: plotW, height: plotH }}>
          <canvas
            ref={canvasRef}
            style={{ width: plotW, height: plotH, display: 'block' }}
            onMouseMove={onMove}
            onMouseLeave={onLeave}
            role="img"
            aria-label={`Heatmap: ${rowsN} rows × ${grid.times.length} time steps`}
            data-testid={hostPanelIds.heatmapCanvas}
          />
          {crossCol !== undefined && (
            <div
              className={styles.cross}
              style={{ left: ((crossCol + 0.5) / grid.times.length) * plotW }}
              data-testid={hostPanelIds.heatmapCrosshair}
            />
          )}
          {hover && hovered && (
            <div
              className={styles.tooltip}
              style={{
                left: Math.min(hover.x + 12, Math.max(0, plotW - 240)),
                top: Math.min(hover.y + 12, Math.max(0, plotH - 120)),
              }}
              data-testid={hostPanelIds.heatmapTooltip}
            >
              <div className={styles.ttTitle}>{grid.rows[hover.cell.row].label}</div>
              {Object.entries(hovered.labels ?? {}).map(([k, v]) => (
                <div key={k}>
                  {k}: {v}
                </div>
              ))}
              <div>Value: {Number.isNaN(hoveredValue) ? 'no data' : fmt(min + hoveredValue * (max - min))}</div>
              <div>{dateTimeFormat(grid.times[hover.cell.col], { format: 'YYYY-MM-DD HH:mm:ss', timeZone })}</div>
            </div>
          )}
        </div>
      </div>
      <div className={styles.axis} style={{ marginLeft: LABEL_WIDTH, width: plotW, height: AXIS_HEIGHT }}>
        {Array.from({ length: count }, (_, i) => {
          const col = Math.round((i / (count - 1)) * (grid.times.length - 1));
          return (
            <span key={i} className={styles.tick} style={{ left: ((col + 0.5) / grid.times.length) * plotW }}>
              {dateTimeFormat(grid.times[col], { format: tickFormat, timeZone })}
            </span>
          );
        })}
      </div>
      {legend && (
        <div className={styles.legend} style={{ marginLeft: LABEL_WIDTH }}>
          {fmt(min)}
          <span
            className={styles.gradient}
            style={{ background: `linear-gradient(to right, ${colorStops(theme, options.color).join(', ')})` }}
          />
          {fmt(max)}
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ width: '100%', position: 'relative' }),
  body: css({ display: 'flex', position: 'relative' }),
  labels: css({ position: 'relative', flexShrink: 0 }),
  rowStrip: css({
    position: 'absolute',
    left: 0,
    right: 0,
    'a&:hover': { background: theme.colors.action.hover },
    'a&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` },
  }),
  rowLabel: css({
    position: 'absolute',
    left: 0,
    right: theme.spacing(1),
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'flex-end',
    lineHeight: 1,
    pointerEvents: 'none',
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    whiteSpace: 'nowrap',
  }),
  plot: css({ position: 'relative', cursor: 'crosshair' }),
  cross: css({
    position: 'absolute',
    top: 0,
    bottom: 0,
    width: 1,
    background: theme.colors.text.primary,
    pointerEvents: 'none',
    opacity: 0.7,
  }),
  tooltip: css({
    position: 'absolute',
    zIndex: theme.zIndex.tooltip,
    pointerEvents: 'none',
    background: theme.colors.background.elevated,
    border: `1px solid ${theme.colors.border.weak}`,
    boxShadow: theme.shadows.z2,
    borderRadius: theme.shape.radius.default,
    padding: theme.spacing(1),
    fontSize: theme.typography.bodySmall.fontSize,
    minWidth: 200,
  }),
  ttTitle: css({ fontWeight: theme.typography.fontWeightMedium, marginBottom: theme.spacing(0.5) }),
  axis: css({
    position: 'relative',
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  tick: css({ position: 'absolute', transform: 'translateX(-50%)', top: 2 }),
  legend: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1),
    height: LEGEND_HEIGHT,
    fontSize: theme.typography.bodySmall.fontSize,
    color: theme.colors.text.secondary,
  }),
  gradient: css({ display: 'inline-block', width: 160, height: 8, borderRadius: theme.shape.radius.default }),
  noData: css({
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    height: '100%',
    color: theme.colors.text.secondary,
  }),
});

export const heatmapPanel = () => standIn<Options>('heatmap', 'Heatmap', HeatmapStandIn, { color: 'thresholds' });
