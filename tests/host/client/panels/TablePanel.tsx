/**
 * Stand-in for Grafana's table panel, from @grafana/ui's Table: one frame (options.frameIndex), hidden fields left out
 * (`custom.hidden`), the initial sort from the options, cells formatted by the field config and data links as links.
 */
import type { PanelProps } from '@grafana/data';
import { Table } from '@grafana/ui';
import React from 'react';

import { standIn } from './plugin';
import { hostPanelIds } from './testIds';

interface Options {
  frameIndex?: number;
  showHeader?: boolean;
  sortBy?: Array<{ displayName: string; desc?: boolean }>;
  cellHeight?: 'sm' | 'md' | 'lg';
}

function TableStandIn({ data, width, height, options, fieldConfig, replaceVariables, timeRange }: PanelProps<Options>) {
  const frames = data.series.filter((f) => f.fields.length > 0);
  const frame = frames[Math.min(options.frameIndex ?? 0, frames.length - 1)];
  if (!frame || frame.length === 0) {
    return <div data-testid={hostPanelIds.table}>No data</div>;
  }
  return (
    <div data-testid={hostPanelIds.table}>
      <Table
        data={frame}
        width={width}
        height={height}
        noHeader={options.showHeader === false}
        initialSortBy={options.sortBy}
        cellHeight={options.cellHeight as never}
        fieldConfig={fieldConfig}
        replaceVariables={replaceVariables}
        timeRange={timeRange}
      />
    </div>
  );
}

export const tablePanel = () => standIn<Options>('table', 'Table', TableStandIn, { color: 'thresholds' });
