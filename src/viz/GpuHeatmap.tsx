/**
 * GPU activity heatmap on canvas: rows = GPUs or MIG instances, columns = time, colour = activity of the DCGM field the
 * proxy used. One pixel per cell painted through a theme-derived colour table, then scaled up without smoothing:
 * 64 × 720 cells paint in a few milliseconds. Rows are buttons (keyboard-reachable) that drill down to their pod.
 */
import { css } from '@emotion/css';
import { dateTimeFormat, type GrafanaTheme2 } from '@grafana/data';
import { useStyles2, useTheme2 } from '@grafana/ui';
import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';

import { testIds } from '../testIds';
import { buildLut, cellAtPoint, cellValue, colAtTime, paintGrid, type CellRef, type HeatmapGrid, type HeatmapRow } from '../transforms/heatmapGrid';
import type { Crosshair } from './crosshair';
import { measureRender } from './marks';
import { useMeasure } from './useMeasure';
import { vizTooltipStyle } from './tooltipStyle';

export interface GpuHeatmapProps {
  grid: HeatmapGrid;
  /** Plot height; rows share it (min 6 px each). */
  height?: number;
  crosshair?: Crosshair;
  onRowClick?: (row: HeatmapRow) => void;
  timeZone?: string;
  /** Called after the grid is painted on the canvas: the page's "data on screen" signal. */
  onDrawn?: () => void;
}

const LABEL_WIDTH = 180;
const AXIS_HEIGHT = 20;
const SOURCE = 'gpu-heatmap';

export function heatmapColorStops(theme: GrafanaTheme2): string[] {
  return ['dark-blue', 'blue', 'green', 'yellow', 'orange', 'red'].map((c) => theme.visualization.getColorByName(c));
}

export function GpuHeatmap({ grid, height, crosshair, onRowClick, timeZone, onDrawn }: GpuHeatmapProps) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const onDrawnRef = useRef(onDrawn);
  onDrawnRef.current = onDrawn;
  const [wrapRef, size] = useMeasure<HTMLDivElement>();
  const [hover, setHover] = useState<{ cell: CellRef; x: number; y: number } | undefined>();
  const [crossCol, setCrossCol] = useState<number | undefined>();
  const lut = useMemo(() => buildLut(heatmapColorStops(theme)), [theme]);
  const rowsN = grid.rows.length;
  const plotH = height ?? Math.max(80, Math.min(480, rowsN * 14));
  const plotW = Math.max(0, size.width - LABEL_WIDTH);
  const rowH = rowsN ? plotH / rowsN : plotH;

  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !plotW || !rowsN || !grid.times.length) {
      return;
    }
    measureRender('heatmap', () => {
      const dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(plotW * dpr);
      canvas.height = Math.round(plotH * dpr);
      const ctx = canvas.getContext('2d')!;
      const cols = grid.times.length;
      const img = new ImageData(cols, rowsN);
      paintGrid(grid, lut, img.data);
      const off = document.createElement('canvas');
      off.width = cols;
      off.height = rowsN;
      off.getContext('2d')!.putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(off, 0, 0, canvas.width, canvas.height);
      // thin separators between rows keep adjacent GPUs apart when values are similar
      if (rowH * dpr >= 8) {
        ctx.fillStyle = theme.colors.background.primary;
        for (let r = 1; r < rowsN; r++) {
          ctx.fillRect(0, Math.round(r * rowH * dpr), canvas.width, Math.max(1, Math.round(dpr)));
        }
      }
    });
    onDrawnRef.current?.();
  }, [grid, lut, plotW, plotH, rowsN, rowH, theme]);

  useEffect(() => {
    if (!crosshair) {
      return;
    }
    const sub = crosshair.state$.subscribe(({ t, source }) => {
      setCrossCol(t === null || source === SOURCE ? undefined : colAtTime(grid.times, t));
    });
    return () => sub.unsubscribe();
  }, [crosshair, grid.times]);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>): void => {
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const cell = cellAtPoint(grid, plotW, plotH, x, y);
    setHover(cell ? { cell, x, y } : undefined);
    crosshair?.publish(cell ? grid.times[cell.col] : null, SOURCE);
  };
  const onLeave = (): void => {
    setHover(undefined);
    crosshair?.publish(null, SOURCE);
  };

  const ticks = useMemo(() => {
    const n = grid.times.length;
    if (n < 2 || plotW < 100) {
      return [];
    }
    const count = Math.max(2, Math.floor(plotW / 120));
    // Minutes repeat on short windows: show seconds when the ticks are less than a minute apart.
    const format = (grid.times[n - 1] - grid.times[0]) / (count - 1) < 60_000 ? 'HH:mm:ss' : 'HH:mm';
    return Array.from({ length: count }, (_, i) => {
      const col = Math.round((i / (count - 1)) * (n - 1));
      return { left: ((col + 0.5) / n) * plotW, label: dateTimeFormat(grid.times[col], { format, timeZone }) };
    });
  }, [grid.times, plotW, timeZone]);

  const hovered = hover ? grid.rows[hover.cell.row] : undefined;
  const hoveredValue = hover ? cellValue(grid, hover.cell) : NaN;

  return (
    <div className={styles.wrap} ref={wrapRef} data-testid={testIds.viz.heatmap}>
      <div className={styles.body} style={{ height: plotH }}>
        <div className={styles.labels} style={{ width: LABEL_WIDTH }}>
          {grid.rows.map((row, i) => (
            <button
              key={row.id}
              type="button"
              className={styles.rowLabel}
              style={{ top: i * rowH, height: rowH, fontSize: rowH < 12 ? Math.max(8, rowH - 2) : undefined }}
              title={`${row.label}${row.pod ? ` — pod ${row.pod}` : ''}: open the pod`}
              onClick={() => onRowClick?.(row)}
              disabled={!onRowClick || !row.pod}
              data-testid={testIds.viz.heatmapRow(row.id)}
            >
              {rowH >= 8 ? row.label : ''}
            </button>
          ))}
        </div>
        <div className={styles.plot} style={{ width: plotW, height: plotH }}>
          <canvas
            ref={canvasRef}
            className={styles.canvas}
            style={{ width: plotW, height: plotH }}
            onMouseMove={onMove}
            onMouseLeave={onLeave}
            onClick={() => hovered && onRowClick?.(hovered)}
            role="img"
            aria-label={`Heatmap of ${grid.field} per GPU: ${rowsN} rows × ${grid.times.length} time steps`}
            data-testid={testIds.viz.heatmapCanvas}
          />
          {crossCol !== undefined && (
            <div className={styles.cross} style={{ left: ((crossCol + 0.5) / grid.times.length) * plotW }} data-testid={testIds.viz.heatmapCrosshair} />
          )}
          {hover && hovered && (
            <div
              className={styles.tooltip}
              style={{ left: Math.min(hover.x + 12, Math.max(0, plotW - 230)), top: Math.min(hover.y + 12, Math.max(0, plotH - 110)) }}
              data-testid={testIds.viz.heatmapTooltip}
            >
              <div className={styles.ttTitle}>{hovered.label}</div>
              <div>GPU: {hovered.gpu ?? '—'}{hovered.mig ? ` (MIG ${hovered.mig})` : ''}</div>
              <div>Host: {hovered.host ?? '—'}</div>
              <div>Pod: {hovered.pod ?? '—'}</div>
              <div>
                Value: {Number.isNaN(hoveredValue) ? 'no data' : `${(hoveredValue * grid.displayScale).toFixed(1)}%`}
              </div>
              <div>Field: {grid.field}</div>
              <div>{dateTimeFormat(grid.times[hover.cell.col], { format: 'YYYY-MM-DD HH:mm:ss', timeZone })}</div>
            </div>
          )}
        </div>
      </div>
      <div className={styles.axis} style={{ marginLeft: LABEL_WIDTH, width: plotW, height: AXIS_HEIGHT }}>
        {ticks.map((t) => (
          <span key={t.left} className={styles.tick} style={{ left: t.left }}>
            {t.label}
          </span>
        ))}
      </div>
      <div className={styles.legend}>
        <span>0%</span>
        <span className={styles.gradient} style={{ background: `linear-gradient(to right, ${heatmapColorStops(theme).join(', ')})` }} />
        <span>100% {grid.field}</span>
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ width: '100%', position: 'relative' }),
  body: css({ display: 'flex', position: 'relative' }),
  labels: css({ position: 'relative', flexShrink: 0 }),
  rowLabel: css({
    position: 'absolute',
    left: 0,
    right: theme.spacing(1),
    padding: 0,
    border: 'none',
    background: 'transparent',
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    textAlign: 'right',
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    cursor: 'pointer',
    '&:hover:not(:disabled)': { color: theme.colors.text.link, textDecoration: 'underline' },
    '&:disabled': { cursor: 'default' },
    '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` },
  }),
  plot: css({ position: 'relative' }),
  canvas: css({ display: 'block', cursor: 'crosshair' }),
  cross: css({ position: 'absolute', top: 0, bottom: 0, width: 1, background: theme.colors.text.primary, pointerEvents: 'none', opacity: 0.7 }),
  tooltip: css({ ...vizTooltipStyle(theme), minWidth: 200 }),
  ttTitle: css({ fontWeight: theme.typography.fontWeightMedium, marginBottom: theme.spacing(0.5) }),
  axis: css({ position: 'relative', color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  tick: css({ position: 'absolute', transform: 'translateX(-50%)', top: 2 }),
  legend: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), marginTop: theme.spacing(0.5), fontSize: theme.typography.bodySmall.fontSize, color: theme.colors.text.secondary }),
  gradient: css({ display: 'inline-block', width: 160, height: 8, borderRadius: theme.shape.radius.default }),
});
