/** A golden number as Grafana's BigValue (the stat panel's own component), formatted with Grafana's unit formatters. */
import { formattedValueToString, getValueFormat, type GrafanaTheme2 } from '@grafana/data';
import { BigValue, BigValueColorMode, BigValueGraphMode, BigValueTextMode, useTheme2 } from '@grafana/ui';
import React from 'react';

import { testIds } from '../testIds';

export interface StatProps {
  id: string;
  title: string;
  value: number | undefined;
  unit: string;
  decimals?: number;
  width: number;
  height: number;
  /** Colour the value when it crosses this (e.g. P99 > 2.1 s). */
  warnAbove?: number;
}

export function formatValue(value: number | undefined, unit: string, decimals?: number): string {
  if (value === undefined || !Number.isFinite(value)) {
    return 'No data';
  }
  return formattedValueToString(getValueFormat(unit)(value, decimals));
}

function color(theme: GrafanaTheme2, value: number | undefined, warnAbove?: number): string {
  if (value === undefined) {
    return theme.colors.text.disabled;
  }
  return warnAbove !== undefined && value > warnAbove ? theme.colors.error.main : theme.colors.text.primary;
}

export function Stat({ id, title, value, unit, decimals, width, height, warnAbove }: StatProps) {
  const theme = useTheme2();
  const text = formatValue(value, unit, decimals);
  return (
    <div data-testid={testIds.viz.stat(id)} aria-label={`${title}: ${text}`}>
      <BigValue
        theme={theme}
        width={width}
        height={height}
        value={{ numeric: value ?? NaN, text, title, color: color(theme, value, warnAbove) }}
        colorMode={BigValueColorMode.Value}
        graphMode={BigValueGraphMode.None}
        textMode={BigValueTextMode.ValueAndName}
      />
    </div>
  );
}
