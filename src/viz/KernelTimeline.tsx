/**
 * Kernel events as timelines: one lane per signal (TCP retransmits, connect latency, TLS handshakes, GPU allocation
 * failures), events as ticks or, when they have a duration, bars. Shares its time domain with whatever sits above it
 * (the pod's time range, or a trace's span window), so "what the kernel saw" lines up with "what the request did".
 */
import { css } from '@emotion/css';
import { dateTimeFormat, type GrafanaTheme2 } from '@grafana/data';
import { useStyles2, useTheme2 } from '@grafana/ui';
import React, { useMemo } from 'react';

import type { KernelEvent } from '../../contract';
import { testIds } from '../testIds';
import { describeDetail, type KernelLane } from '../transforms/kernelEvidence';
import { useMeasure } from './useMeasure';

export interface KernelTimelineProps {
  lanes: KernelLane[];
  fromMs: number;
  toMs: number;
  /** A window to shade (e.g. the selected span). */
  highlight?: { fromMs: number; toMs: number };
  onEventClick?: (e: KernelEvent) => void;
  /** Events drawn per lane at most (the rest are counted, never silently dropped). */
  maxPerLane?: number;
}

const LANE_H = 24;
const LABEL_W = 170;

export function KernelTimeline({ lanes, fromMs, toMs, highlight, onEventClick, maxPerLane = 2000 }: KernelTimelineProps) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const [ref, { width }] = useMeasure<HTMLDivElement>();
  const plotW = Math.max(0, width - LABEL_W);
  const span = Math.max(1, toMs - fromMs);
  const x = (t: number): number => ((t - fromMs) / span) * plotW;
  const colors = useMemo(
    () => ({
      tcp_retransmit: theme.visualization.getColorByName('orange'),
      tcp_connect: theme.visualization.getColorByName('blue'),
      tcp_connect_fail: theme.colors.error.main,
      tls_handshake: theme.visualization.getColorByName('purple'),
      gpu_alloc_fail: theme.colors.error.main,
      http_traceparent: theme.colors.text.secondary,
    }),
    [theme]
  );
  return (
    <div ref={ref} className={styles.wrap} data-testid={testIds.viz.kernelTimeline}>
      {lanes.map((lane) => {
        const shown = lane.events.slice(0, maxPerLane);
        const hidden = lane.events.length - shown.length;
        return (
          <div key={lane.type} className={styles.lane} style={{ height: LANE_H }}>
            <div className={styles.label} style={{ width: LABEL_W }}>
              {lane.label} <span className={styles.count}>({lane.events.length}{hidden ? `, ${hidden} not drawn` : ''})</span>
            </div>
            <svg width={plotW} height={LANE_H} className={styles.svg} role="img" aria-label={`${lane.label}: ${lane.events.length} events`}>
              <line x1={0} x2={plotW} y1={LANE_H / 2} y2={LANE_H / 2} stroke={theme.colors.border.weak} />
              {highlight && (
                <rect x={x(highlight.fromMs)} width={Math.max(1, x(highlight.toMs) - x(highlight.fromMs))} y={0} height={LANE_H} fill={theme.colors.primary.transparent} />
              )}
              {shown.map((e, i) => {
                const x0 = x(e.ts);
                const w = e.durationMs ? Math.max(2, (e.durationMs / span) * plotW) : 2;
                return (
                  <rect
                    key={i}
                    x={x0}
                    y={4}
                    width={w}
                    height={LANE_H - 8}
                    fill={colors[e.type]}
                    opacity={e.mode === 'replay' ? 0.5 : 0.9}
                    className={onEventClick && e.traceId ? styles.clickable : undefined}
                    onClick={() => onEventClick?.(e)}
                  >
                    <title>
                      {`${dateTimeFormat(e.ts, { format: 'HH:mm:ss.SSS' })} ${e.type}${e.durationMs !== undefined ? ` ${e.durationMs.toFixed(1)} ms` : ''} pid ${e.pid} (${e.comm})${e.pod ? ` pod ${e.pod}` : ''} ${describeDetail(e.detail)}${e.traceId ? ` trace ${e.traceId}` : ''}${e.mode === 'replay' ? ' [replay]' : ''}`}
                    </title>
                  </rect>
                );
              })}
            </svg>
          </div>
        );
      })}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ width: '100%' }),
  lane: css({ display: 'flex', alignItems: 'center', borderBottom: `1px solid ${theme.colors.border.weak}` }),
  label: css({ flexShrink: 0, fontSize: theme.typography.bodySmall.fontSize, color: theme.colors.text.secondary, paddingRight: theme.spacing(1), whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }),
  count: css({ color: theme.colors.text.disabled }),
  svg: css({ display: 'block' }),
  clickable: css({ cursor: 'pointer' }),
});
