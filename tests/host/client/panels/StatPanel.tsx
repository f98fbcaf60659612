/**
 * Stand-in for Grafana's stat panel, from @grafana/ui's BigValue: the values reduced as the options say
 * (`reduceOptions.calcs`, default last non-null), formatted by the field config (unit, decimals, thresholds → colour),
 * one big value per field side by side, as the core panel lays them out.
 */
import { css } from '@emotion/css';
import { getFieldDisplayValues, type GrafanaTheme2, type PanelProps, type ReduceDataOptions } from '@grafana/data';
import {
  BigValue,
  BigValueColorMode,
  BigValueGraphMode,
  BigValueJustifyMode,
  BigValueTextMode,
  useStyles2,
  useTheme2,
} from '@grafana/ui';
import React from 'react';

import { standIn } from './plugin';
import { hostPanelIds } from './testIds';

interface Options {
  reduceOptions?: Partial<ReduceDataOptions>;
  colorMode?: BigValueColorMode;
  graphMode?: BigValueGraphMode;
  textMode?: BigValueTextMode;
  justifyMode?: BigValueJustifyMode;
  /** Fixed title and value sizes (px): the same size for every value, as the core panel's text option sets. */
  text?: { titleSize?: number; valueSize?: number };
}

function StatStandIn({ data, width, height, options, fieldConfig, replaceVariables, timeZone }: PanelProps<Options>) {
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
  const n = Math.max(1, values.length);
  const w = Math.floor((width - (n - 1) * 8) / n);
  return (
    <div className={styles.row} data-testid={hostPanelIds.stat}>
      {values.map((v, i) => (
        <div
          key={i}
          aria-label={`${v.display.title ?? ''}: ${[v.display.prefix, v.display.text, v.display.suffix].filter(Boolean).join('')}`}
        >
          <BigValue
            theme={theme}
            width={w}
            height={height}
            value={v.display}
            colorMode={options.colorMode ?? BigValueColorMode.Value}
            graphMode={options.graphMode ?? BigValueGraphMode.None}
            textMode={options.textMode ?? BigValueTextMode.Auto}
            justifyMode={options.justifyMode ?? BigValueJustifyMode.Auto}
            text={options.text}
          />
        </div>
      ))}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  row: css({ display: 'flex', gap: theme.spacing(1), height: '100%' }),
});

export const statPanel = () => standIn<Options>('stat', 'Stat', StatStandIn, { color: 'thresholds' });
