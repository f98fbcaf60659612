/**
 * Stand-in for Grafana's histogram panel, for frames already bucketed the way that panel reads them (`xMin`, `xMax`,
 * then one count field per series): step outlines with a light fill, overlaid on the shared bins, a log axis when the
 * bins span decades, colours from the field config, and a legend with each series' total.
 */
import { css } from '@emotion/css';
import { FieldType, formattedValueToString, type GrafanaTheme2, type PanelProps } from '@grafana/data';
import { useStyles2, useTheme2 } from '@grafana/ui';
import React from 'react';

import { standIn, type NoOptions } from './plugin';
import { hostPanelIds } from './testIds';

const PAD = { l: 40, r: 8, t: 8, b: 22 };
const LEGEND = 20;

function HistogramStandIn({ data, width, height }: PanelProps<NoOptions>) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const frame = data.series.find((f) => f.fields.some((x) => x.name === 'xMin') && f.length > 0);
  if (!frame) {
    return (
      <div className={styles.noData} data-testid={hostPanelIds.histogram}>
        No data
      </div>
    );
  }
  const xMin = frame.fields.find((x) => x.name === 'xMin')!;
  const xMax = frame.fields.find((x) => x.name === 'xMax')!;
  const counts = frame.fields.filter(
    (x) => x.type === FieldType.number && x !== xMin && x !== xMax && !x.config.custom?.hideFrom?.viz
  );
  const edges = [...(xMin.values as number[]), (xMax.values as number[])[frame.length - 1]];
  const h = height - LEGEND - PAD.t - PAD.b;
  const w = Math.max(0, width - PAD.l - PAD.r);
  const lo = edges[0];
  const hi = edges[edges.length - 1];
  const log = lo > 0 && hi / lo > 20;
  const sx = (v: number) =>
    PAD.l + (log ? (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) : (v - lo) / (hi - lo || 1)) * w;
  const ymax = Math.max(1, ...counts.flatMap((c) => c.values as number[]));
  const sy = (v: number) => PAD.t + h - (v / ymax) * h;
  const fmtX = (v: number) => (xMin.display ? formattedValueToString(xMin.display(v)) : String(v));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    log ? Math.exp(Math.log(lo) + f * (Math.log(hi) - Math.log(lo))) : lo + f * (hi - lo)
  );
  return (
    <div data-testid={hostPanelIds.histogram}>
      <svg
        width={width}
        height={height - LEGEND}
        role="img"
        aria-label={`Distribution of ${counts.map((c) => c.state?.displayName ?? c.name).join(' vs ')}`}
      >
        <line x1={PAD.l} x2={PAD.l + w} y1={PAD.t + h} y2={PAD.t + h} stroke={theme.colors.border.medium} />
        {ticks.map((v, i) => (
          <text
            key={i}
            x={sx(v)}
            y={height - LEGEND - 6}
            textAnchor={i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}
            fill={theme.colors.text.secondary}
            fontSize={11}
          >
            {fmtX(v)}
          </text>
        ))}
        <text x={4} y={PAD.t + 10} fill={theme.colors.text.secondary} fontSize={11}>
          {ymax}
        </text>
        {counts.map((c) => {
          const color = c.display
            ? (c.display(c.values[0]).color ?? theme.colors.primary.main)
            : theme.colors.primary.main;
          let d = `M ${sx(edges[0])} ${sy(0)}`;
          (c.values as number[]).forEach((v, i) => {
            d += ` L ${sx(edges[i])} ${sy(v ?? 0)} L ${sx(edges[i + 1])} ${sy(v ?? 0)}`;
          });
          d += ` L ${sx(edges[edges.length - 1])} ${sy(0)} Z`;
          return <path key={c.name} d={d} fill={color} fillOpacity={0.18} stroke={color} strokeWidth={1.5} />;
        })}
      </svg>
      <div className={styles.legend}>
        {counts.map((c) => (
          <span key={c.name} className={styles.item}>
            <span className={styles.swatch} style={{ background: c.display?.(c.values[0]).color }} />
            {c.state?.displayName ?? c.config.displayName ?? c.name} (
            {(c.values as number[]).reduce((a, b) => a + (b ?? 0), 0)})
          </span>
        ))}
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  legend: css({
    display: 'flex',
    gap: theme.spacing(2),
    height: LEGEND,
    fontSize: theme.typography.bodySmall.fontSize,
    color: theme.colors.text.secondary,
  }),
  item: css({ display: 'inline-flex', alignItems: 'center', gap: theme.spacing(0.5) }),
  swatch: css({ display: 'inline-block', width: 12, height: 3 }),
  noData: css({
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    height: '100%',
    color: theme.colors.text.secondary,
  }),
});

export const histogramPanel = () =>
  standIn<NoOptions>('histogram', 'Histogram', HistogramStandIn, { color: 'palette' });
