/**
 * Distributions as step outlines with a light fill, several overlaid on shared bins (A vs B latency, TLS handshake
 * latency). SVG: a few dozen bins, accessible, and crisp in a postmortem PNG.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { useStyles2, useTheme2 } from '@grafana/ui';
import React from 'react';

import { testIds } from '../testIds';
import type { Histogram as Hist } from '../transforms/histogram';
import { useMeasure } from './useMeasure';

export interface HistogramSeries {
  label: string;
  hist: Hist;
  color?: string;
}

export interface HistogramProps {
  series: HistogramSeries[];
  height?: number;
  unit?: string;
  /** Show shares of each series' total instead of counts, so unequal sample sizes compare. */
  normalize?: boolean;
  /** Vertical markers (e.g. P50/P99 of each side). */
  markers?: Array<{ value: number; label: string; color?: string }>;
}

const PAD = { l: 36, r: 8, t: 8, b: 22 };

export function Histogram({ series, height = 200, unit = 'ms', normalize = true, markers = [] }: HistogramProps) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const [ref, { width }] = useMeasure<HTMLDivElement>();
  const edges = series[0]?.hist.edges ?? [0, 1];
  const w = Math.max(0, width - PAD.l - PAD.r);
  const h = height - PAD.t - PAD.b;
  const log = edges[0] > 0 && edges[edges.length - 1] / edges[0] > 20;
  const sx = (v: number): number => {
    const a = edges[0];
    const b = edges[edges.length - 1];
    return PAD.l + (log ? (Math.log(v) - Math.log(a)) / (Math.log(b) - Math.log(a)) : (v - a) / (b - a || 1)) * w;
  };
  const heights = series.map((s) => s.hist.counts.map((c) => (normalize && s.hist.total ? c / s.hist.total : c)));
  const ymax = Math.max(1e-9, ...heights.flat());
  const sy = (v: number): number => PAD.t + h - (v / ymax) * h;
  const palette = [theme.visualization.getColorByName('blue'), theme.visualization.getColorByName('orange'), theme.visualization.getColorByName('green')];
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = log ? Math.exp(Math.log(edges[0]) + f * (Math.log(edges[edges.length - 1]) - Math.log(edges[0]))) : edges[0] + f * (edges[edges.length - 1] - edges[0]);
    return { x: sx(v), label: v >= 1000 && unit === 'ms' ? `${(v / 1000).toFixed(1)}s` : `${v.toFixed(v < 10 ? 1 : 0)}${unit}` };
  });
  return (
    <div ref={ref} className={styles.wrap} data-testid={testIds.viz.histogram}>
      <svg width={width} height={height} role="img" aria-label={`Distribution of ${series.map((s) => s.label).join(' vs ')}`}>
        <line x1={PAD.l} x2={PAD.l + w} y1={PAD.t + h} y2={PAD.t + h} stroke={theme.colors.border.medium} />
        {width > 0 && ticks.map((t, i) => (
          <text key={i} x={t.x} y={height - 6} textAnchor={i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle'} fill={theme.colors.text.secondary} fontSize={11}>
            {t.label}
          </text>
        ))}
        <text x={4} y={PAD.t + 10} fill={theme.colors.text.secondary} fontSize={11}>
          {normalize ? `${(ymax * 100).toFixed(0)}%` : ymax}
        </text>
        {width > 0 &&
          series.map((s, si) => {
            const color = s.color ?? palette[si % palette.length];
            let d = `M ${sx(edges[0])} ${sy(0)}`;
            heights[si].forEach((v, i) => {
              d += ` L ${sx(edges[i])} ${sy(v)} L ${sx(edges[i + 1])} ${sy(v)}`;
            });
            d += ` L ${sx(edges[edges.length - 1])} ${sy(0)} Z`;
            return <path key={s.label} d={d} fill={color} fillOpacity={0.18} stroke={color} strokeWidth={1.5} />;
          })}
        {width > 0 &&
          markers.map((m, mi) =>
            m.value >= edges[0] && m.value <= edges[edges.length - 1] ? (
              <g key={m.label}>
                <line x1={sx(m.value)} x2={sx(m.value)} y1={PAD.t} y2={PAD.t + h} stroke={m.color ?? theme.colors.text.secondary} strokeDasharray="4 3" />
                <text x={sx(m.value) + 3} y={PAD.t + 10 + mi * 12} fontSize={10} fill={m.color ?? theme.colors.text.secondary}>
                  {m.label}
                </text>
              </g>
            ) : null
          )}
      </svg>
      <div className={styles.legend}>
        {series.map((s, si) => (
          <span key={s.label} className={styles.item}>
            <span className={styles.swatch} style={{ background: s.color ?? palette[si % palette.length] }} />
            {s.label} ({s.hist.total})
          </span>
        ))}
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ width: '100%' }),
  legend: css({ display: 'flex', gap: theme.spacing(2), fontSize: theme.typography.bodySmall.fontSize, color: theme.colors.text.secondary }),
  item: css({ display: 'inline-flex', alignItems: 'center', gap: theme.spacing(0.5) }),
  swatch: css({ display: 'inline-block', width: 12, height: 3 }),
});
