/**
 * Stand-in for Grafana's state timeline panel: one lane per field of a frame with a time field, each run of equal
 * values a segment coloured by the field config (value mappings' colours, else the field colour), its text the
 * mapped display text; empty values leave a gap.
 */
import { css } from '@emotion/css';
import { FieldType, dateTimeFormat, type GrafanaTheme2, type PanelProps } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { standIn, type NoOptions } from './plugin';
import { hostPanelIds } from './testIds';

const LABEL_WIDTH = 160;

function StateTimelineStandIn({ data, width, height, timeRange, timeZone }: PanelProps<NoOptions>) {
  const styles = useStyles2(getStyles);
  const frame = data.series.find((f) => f.fields.some((x) => x.type === FieldType.time) && f.length > 0);
  if (!frame) {
    return (
      <div className={styles.noData} data-testid={hostPanelIds.stateTimeline}>
        No data
      </div>
    );
  }
  const time = frame.fields.find((x) => x.type === FieldType.time)!.values as number[];
  const lanes = frame.fields.filter((x) => x.type !== FieldType.time && !x.config.custom?.hideFrom?.viz);
  const from = timeRange.from.valueOf();
  const to = timeRange.to.valueOf();
  const plotW = Math.max(0, width - LABEL_WIDTH);
  const laneH = Math.max(14, Math.min(40, (height - 24) / Math.max(1, lanes.length)));
  const x = (t: number) => ((t - from) / (to - from || 1)) * plotW;
  const step = time.length > 1 ? time[1] - time[0] : to - from;
  return (
    <div data-testid={hostPanelIds.stateTimeline}>
      {lanes.map((f) => {
        const segments: Array<{ start: number; end: number; value: unknown }> = [];
        for (let i = 0; i < frame.length; i++) {
          const v = f.values[i];
          const last = segments[segments.length - 1];
          if (v === null || v === undefined) {
            continue;
          }
          if (last && last.value === v && last.end === time[i]) {
            last.end = time[i] + step;
          } else {
            segments.push({ start: time[i], end: time[i] + step, value: v });
          }
        }
        const name = f.state?.displayName ?? f.config.displayName ?? f.name;
        return (
          <div key={f.name} className={styles.lane} style={{ height: laneH }}>
            <div className={styles.label} style={{ width: LABEL_WIDTH }}>
              {name}
            </div>
            <div className={styles.track} style={{ width: plotW }}>
              {segments.map((s, i) => {
                const d = f.display?.(s.value);
                const label = d?.text ?? String(s.value);
                return (
                  <div
                    key={i}
                    className={styles.segment}
                    style={{ left: x(s.start), width: Math.max(1, x(s.end) - x(s.start)), background: d?.color }}
                    title={`${name}: ${label}, ${dateTimeFormat(s.start, { format: 'HH:mm:ss', timeZone })}–${dateTimeFormat(s.end, { format: 'HH:mm:ss', timeZone })}`}
                    data-state={label}
                  >
                    {x(s.end) - x(s.start) > 60 ? label : ''}
                  </div>
                );
              })}
            </div>
          </div>
        );
      })}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  lane: css({ display: 'flex', alignItems: 'stretch', marginBottom: 2 }),
  label: css({
    flexShrink: 0,
    display: 'flex',
    alignItems: 'center',
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    paddingRight: theme.spacing(1),
    overflow: 'hidden',
    whiteSpace: 'nowrap',
  }),
  track: css({ position: 'relative', background: theme.colors.background.secondary }),
  segment: css({
    position: 'absolute',
    top: 0,
    bottom: 0,
    overflow: 'hidden',
    color: theme.colors.text.maxContrast,
    fontSize: theme.typography.bodySmall.fontSize,
    paddingLeft: 2,
    display: 'flex',
    alignItems: 'center',
  }),
  noData: css({
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    height: '100%',
    color: theme.colors.text.secondary,
  }),
});

export const stateTimelinePanel = () =>
  standIn<NoOptions>('state-timeline', 'State timeline', StateTimelineStandIn, { color: 'palette' });
