/**
 * A compact, sortable table for drill-down lists (services, pods, events, traces): semantic <table> so every link
 * and sort header is reachable by keyboard, styled only with theme tokens.
 */
import { css, cx } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import React, { useMemo, useState } from 'react';

export interface Column<R> {
  id: string;
  header: string;
  cell: (row: R) => React.ReactNode;
  /** Sort key; columns without one are not sortable. */
  sortValue?: (row: R) => number | string | null | undefined;
  align?: 'left' | 'right';
}

export interface DataTableProps<R> {
  rows: R[];
  columns: Array<Column<R>>;
  rowKey: (row: R) => string;
  initialSort?: { id: string; desc: boolean };
  testId?: string;
  maxHeight?: number;
  caption?: string;
}

export function DataTable<R>({ rows, columns, rowKey, initialSort, testId, maxHeight, caption }: DataTableProps<R>) {
  const styles = useStyles2(getStyles);
  const [sort, setSort] = useState(initialSort);
  const sorted = useMemo(() => {
    const col = sort && columns.find((c) => c.id === sort.id);
    if (!col?.sortValue) {
      return rows;
    }
    const dir = sort!.desc ? -1 : 1;
    return [...rows].sort((a, b) => {
      const x = col.sortValue!(a);
      const y = col.sortValue!(b);
      if (x === y) {
        return 0;
      }
      if (x === null || x === undefined) {
        return 1;
      }
      if (y === null || y === undefined) {
        return -1;
      }
      return (x < y ? -1 : 1) * dir;
    });
  }, [rows, columns, sort]);
  return (
    <div className={styles.scroll} style={{ maxHeight }} data-testid={testId}>
      <table className={styles.table}>
        {caption && <caption className={styles.caption}>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.id} className={cx(styles.th, c.align === 'right' && styles.right)} aria-sort={sort?.id === c.id ? (sort.desc ? 'descending' : 'ascending') : undefined}>
                {c.sortValue ? (
                  <button type="button" className={styles.sortBtn} onClick={() => setSort({ id: c.id, desc: sort?.id === c.id ? !sort.desc : true })}>
                    {c.header}
                    {sort?.id === c.id ? (sort.desc ? ' ↓' : ' ↑') : ''}
                  </button>
                ) : (
                  c.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((r) => (
            <tr key={rowKey(r)} className={styles.tr}>
              {columns.map((c) => (
                <td key={c.id} className={cx(styles.td, c.align === 'right' && styles.right)}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  scroll: css({ overflow: 'auto', width: '100%' }),
  table: css({ width: '100%', borderCollapse: 'collapse', fontSize: theme.typography.bodySmall.fontSize }),
  caption: css({ textAlign: 'left', color: theme.colors.text.secondary, padding: theme.spacing(0.5, 0) }),
  th: css({ position: 'sticky', top: 0, background: theme.colors.background.secondary, textAlign: 'left', padding: theme.spacing(0.5, 1), fontWeight: theme.typography.fontWeightMedium, borderBottom: `1px solid ${theme.colors.border.medium}`, whiteSpace: 'nowrap' }),
  tr: css({ '&:hover': { background: theme.colors.action.hover } }),
  td: css({ padding: theme.spacing(0.5, 1), borderBottom: `1px solid ${theme.colors.border.weak}`, verticalAlign: 'top' }),
  right: css({ textAlign: 'right', fontVariantNumeric: 'tabular-nums' }),
  sortBtn: css({ background: 'none', border: 'none', padding: 0, color: 'inherit', font: 'inherit', cursor: 'pointer', '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` } }),
});
