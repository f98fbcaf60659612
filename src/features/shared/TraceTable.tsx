/** A list of traces (slowest first) whose ids open the trace root-cause view. */
import React from 'react';

import type { TraceSummary } from '../../../contract';
import { testIds } from '../../testIds';
import { appLinks } from '../../../contract/app-urls';
import { AppLink, currentSearch } from './AppLink';
import { DataTable } from './DataTable';
import { fmtMs, fmtTime } from './format';

export function TraceTable({ traces, testId, maxHeight }: { traces: TraceSummary[]; testId?: string; maxHeight?: number }) {
  const search = currentSearch();
  return (
    <DataTable
      testId={testId}
      maxHeight={maxHeight}
      rows={traces}
      rowKey={(t) => t.traceId}
      initialSort={{ id: 'duration', desc: true }}
      columns={[
        {
          id: 'trace',
          header: 'Trace',
          cell: (t) => (
            <AppLink href={appLinks.trace(t.traceId, search)} testId={testIds.traces.traceLink(t.traceId)}>
              {t.traceId.slice(0, 16)}…
            </AppLink>
          ),
        },
        { id: 'root', header: 'Root', cell: (t) => `${t.rootService} ${t.rootName}`, sortValue: (t) => t.rootService },
        { id: 'start', header: 'Start', cell: (t) => fmtTime(t.startMs), sortValue: (t) => t.startMs },
        { id: 'duration', header: 'Duration', cell: (t) => fmtMs(t.durationMs), sortValue: (t) => t.durationMs, align: 'right' },
        { id: 'status', header: 'Status', cell: (t) => t.status, sortValue: (t) => t.status },
        { id: 'spans', header: 'Spans', cell: (t) => t.spanCount ?? '—', sortValue: (t) => t.spanCount, align: 'right' },
      ]}
    />
  );
}
