/**
 * Kernel lanes, a runtime panel plugin (no core panel draws it): a pod's or a trace's kernel events (the kernelEvents
 * frame) as one timeline lane per signal, in the order an SRE reads them (network first, then the GPU), events as
 * ticks or, with a duration, bars. Its time domain is the panel's range, or the frame's own window (a trace's), so
 * "what the kernel saw" lines up with "what the request did"; `highlight` shades a window (the selected span). An
 * event that carries a trace id follows its field's data link (its root cause).
 */
import { css } from '@emotion/css';
import {
  dateTimeFormat,
  PanelPlugin,
  type DataFrame,
  type Field,
  type GrafanaTheme2,
  type PanelProps,
} from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { useStyles2, useTheme2 } from '@grafana/ui';
import React, { useMemo } from 'react';

import { KERNEL_EVENT_TYPES, type KernelEventType } from '../../contract';
import { testIds } from '../testIds';

export const KERNEL_LANES_PANEL = 'hopscope-kernel-lanes';

export interface KernelLanesOptions {
  /** A window to shade, epoch ms (e.g. the selected span). */
  highlight?: { fromMs: number; toMs: number };
  /** Events drawn per lane at most (the rest are counted, never silently dropped). */
  maxPerLane?: number;
}

/** The signals shown as lanes, in reading order; labels from the catalogue. */
const LANES: KernelEventType[] = [
  'tcp_retransmit',
  'tcp_connect',
  'tcp_connect_fail',
  'tls_handshake',
  'gpu_alloc_fail',
  'nccl_slow_collective',
];
const LANE_H = 24;
const LABEL_W = 170;

interface LaneEvent {
  row: number;
  ts: number;
  durationMs: number | null;
  replay: boolean;
  title: string;
  traceId: string;
}

function lanesOf(frame: DataFrame | undefined): Map<string, LaneEvent[]> {
  const out = new Map<string, LaneEvent[]>(LANES.map((t) => [t, []]));
  if (!frame) {
    return out;
  }
  const col = (name: string): Field | undefined => frame.fields.find((f) => f.name === name);
  const [time, type, duration, process, detail, traceId, mode, pod] = [
    'time',
    'type',
    'duration',
    'process',
    'detail',
    'traceId',
    'mode',
    'pod',
  ].map(col);
  for (let i = 0; i < frame.length; i++) {
    const t = String(type?.values[i]);
    const d = duration?.values[i] as number | null | undefined;
    const title = `${dateTimeFormat(time?.values[i], { format: 'HH:mm:ss.SSS' })} ${t}${d !== null && d !== undefined ? ` ${d.toFixed(1)} ms` : ''} ${process?.values[i] ?? ''}${pod?.values[i] ? ` pod ${pod.values[i]}` : ''} ${detail?.values[i] ?? ''}${traceId?.values[i] ? ` trace ${traceId.values[i]}` : ''}${mode?.values[i] === 'replay' ? ' [replay]' : ''}`;
    out.get(t)?.push({
      row: i,
      ts: time?.values[i],
      durationMs: d ?? null,
      replay: mode?.values[i] === 'replay',
      title,
      traceId: String(traceId?.values[i] ?? ''),
    });
  }
  return out;
}

function KernelLanesPanel({ data, width, timeRange, options }: PanelProps<KernelLanesOptions>) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const frame = data.series.find((f) => f.fields.some((x) => x.name === 'type'));
  const lanes = useMemo(() => lanesOf(frame), [frame]);
  const window = frame?.meta?.custom as { fromMs?: number; toMs?: number } | undefined;
  const fromMs = window?.fromMs ?? timeRange.from.valueOf();
  const toMs = window?.toMs ?? timeRange.to.valueOf();
  const plotW = Math.max(0, width - LABEL_W);
  const span = Math.max(1, toMs - fromMs);
  const x = (t: number): number => ((t - fromMs) / span) * plotW;
  const traceField = frame?.fields.find((f) => f.name === 'traceId');
  const colors: Record<string, string> = {
    tcp_retransmit: theme.visualization.getColorByName('orange'),
    tcp_connect: theme.visualization.getColorByName('blue'),
    tcp_connect_fail: theme.colors.error.main,
    tls_handshake: theme.visualization.getColorByName('purple'),
    gpu_alloc_fail: theme.colors.error.main,
    nccl_slow_collective: theme.visualization.getColorByName('red'),
  };
  const open = (e: LaneEvent) => {
    const link = e.traceId ? traceField?.getLinks?.({ valueRowIndex: e.row })[0] : undefined;
    if (link) {
      locationService.push(link.href);
    }
  };
  const max = options.maxPerLane ?? 2000;
  return (
    <div className={styles.wrap} data-testid={testIds.viz.kernelTimeline}>
      {LANES.map((type) => {
        const events = lanes.get(type) ?? [];
        const shown = events.slice(0, max);
        const hidden = events.length - shown.length;
        const label = KERNEL_EVENT_TYPES[type].label;
        return (
          <div key={type} className={styles.lane} style={{ height: LANE_H }}>
            <div className={styles.label} style={{ width: LABEL_W }}>
              {label}{' '}
              <span className={styles.count}>
                ({events.length}
                {hidden ? `, ${hidden} not drawn` : ''})
              </span>
            </div>
            <svg
              width={plotW}
              height={LANE_H}
              className={styles.svg}
              role="img"
              aria-label={`${label}: ${events.length} events`}
            >
              <line x1={0} x2={plotW} y1={LANE_H / 2} y2={LANE_H / 2} stroke={theme.colors.border.weak} />
              {options.highlight && (
                <rect
                  x={x(options.highlight.fromMs)}
                  width={Math.max(1, x(options.highlight.toMs) - x(options.highlight.fromMs))}
                  y={0}
                  height={LANE_H}
                  fill={theme.colors.primary.transparent}
                />
              )}
              {shown.map((e) => (
                <rect
                  key={e.row}
                  x={x(e.ts)}
                  y={4}
                  width={e.durationMs ? Math.max(2, (e.durationMs / span) * plotW) : 2}
                  height={LANE_H - 8}
                  fill={colors[type]}
                  opacity={e.replay ? 0.5 : 0.9}
                  className={e.traceId ? styles.clickable : undefined}
                  onClick={() => open(e)}
                >
                  <title>{e.title}</title>
                </rect>
              ))}
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
  label: css({
    flexShrink: 0,
    fontSize: theme.typography.bodySmall.fontSize,
    color: theme.colors.text.secondary,
    paddingRight: theme.spacing(1),
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  count: css({ color: theme.colors.text.disabled }),
  svg: css({ display: 'block' }),
  clickable: css({ cursor: 'pointer' }),
});

export const kernelLanesPlugin = (): PanelPlugin<KernelLanesOptions> =>
  new PanelPlugin<KernelLanesOptions>(KernelLanesPanel);
