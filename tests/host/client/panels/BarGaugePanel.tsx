/**
 * Stand-in for Grafana's bar gauge panel, from @grafana/ui's BarGauge: the values as the options reduce them (with
 * `reduceOptions.values`, one bar per row, named by the row's text fields), the field config's unit, min/max,
 * thresholds and colours, and each bar its data link (the core panel opens a bar's single link on click).
 */
import { css } from '@emotion/css';
import {
  getFieldDisplayValues,
  VizOrientation,
  type GrafanaTheme2,
  type PanelProps,
  type ReduceDataOptions,
} from '@grafana/data';
import { BarGauge, useStyles2, useTheme2 } from '@grafana/ui';
import React from 'react';

import { standIn } from './plugin';
import { hostPanelIds } from './testIds';

interface Options {
  reduceOptions?: Partial<ReduceDataOptions>;
  orientation?: VizOrientation;
  displayMode?: 'basic' | 'gradient' | 'lcd';
  showUnfilled?: boolean;
  namePlacement?: 'auto' | 'left' | 'top' | 'hidden';
  valueMode?: 'color' | 'text' | 'hidden';
  minVizHeight?: number;
}

function BarGaugeStandIn({
  data,
  width,
  height,
  options,
  fieldConfig,
  replaceVariables,
  timeZone,
}: PanelProps<Options>) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const values = getFieldDisplayValues({
    fieldConfig,
    reduceOptions: { calcs: ['lastNotNull'], values: false, ...options.reduceOptions },
    replaceVariables,
    theme,
    data: data.series,
    timeZone,
  });
  if (!values.length) {
    return <div className={styles.noData}>No data</div>;
  }
  const gap = 4;
  const barH = Math.max(options.minVizHeight ?? 16, Math.floor((height - gap * (values.length - 1)) / values.length));
  return (
    <div className={styles.list} data-testid={hostPanelIds.bargauge}>
      {values.map((v, i) => {
        const link = v.getLinks?.()[0];
        const bar = (
          <BarGauge
            theme={theme}
            width={width}
            height={barH}
            field={v.field}
            display={v.display ? () => v.display : undefined}
            value={v.display}
            orientation={
              options.orientation === VizOrientation.Vertical ? VizOrientation.Vertical : VizOrientation.Horizontal
            }
            displayMode={(options.displayMode ?? 'gradient') as never}
            showUnfilled={options.showUnfilled ?? true}
            namePlacement={(options.namePlacement ?? 'left') as never}
            valueDisplayMode={(options.valueMode ?? 'color') as never}
            isOverflow={false}
          />
        );
        return link ? (
          <a
            key={i}
            href={link.href}
            title={link.title}
            aria-label={`${v.display.title}: ${v.display.text}${v.display.suffix ?? ''}`}
            className={styles.link}
          >
            {bar}
          </a>
        ) : (
          <div key={i} aria-label={`${v.display.title}: ${v.display.text}${v.display.suffix ?? ''}`}>
            {bar}
          </div>
        );
      })}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  list: css({ display: 'flex', flexDirection: 'column', gap: 4, height: '100%', overflow: 'auto' }),
  link: css({ display: 'block', '&:hover': { background: theme.colors.action.hover } }),
  noData: css({
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    height: '100%',
    color: theme.colors.text.secondary,
  }),
});

export const barGaugePanel = () => standIn<Options>('bargauge', 'Bar gauge', BarGaugeStandIn, { color: 'thresholds' });
