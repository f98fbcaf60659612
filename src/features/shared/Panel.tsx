/**
 * A panel of a view: Grafana's PanelChrome around one section, with the section's loading, empty and error states,
 * and the proxy's per-source errors shown inline (the data that did arrive is still drawn).
 */
import { css } from '@emotion/css';
import { LoadingState, type GrafanaTheme2 } from '@grafana/data';
import { Alert, PanelChrome, useStyles2 } from '@grafana/ui';
import React from 'react';

import type { SourceStatus } from '../../../contract';
import { testIds } from '../../testIds';
import { useMeasure } from '../../viz/useMeasure';
import type { Section } from './viewObject';

export interface PanelProps<T> {
  id: string;
  title: string;
  description?: string;
  section: Section<T>;
  /** Body height in px; the width follows the container. */
  height: number;
  isEmpty?: (data: T) => boolean;
  emptyText?: string;
  actions?: React.ReactNode;
  /** Show the answer's failed sources here (off for the second and later panels of one answer). */
  sourceErrors?: boolean;
  children: (data: T, width: number, height: number) => React.ReactNode;
}

function failedSources(data: unknown): SourceStatus[] {
  const sources = (data as { sources?: SourceStatus[] } | undefined)?.sources;
  return Array.isArray(sources) ? sources.filter((s) => !s.ok) : [];
}

export function SourceErrors({ data }: { data: unknown }) {
  const failed = failedSources(data);
  const styles = useStyles2(getStyles);
  if (!failed.length) {
    return null;
  }
  return (
    <div className={styles.sources}>
      {failed.map((s) => (
        <div key={s.source}>
          ⚠ {s.source}: {s.error ?? 'unavailable'} — showing what the other sources returned
        </div>
      ))}
    </div>
  );
}

export function Panel<T>({ id, title, description, section, height, isEmpty, emptyText, actions, sourceErrors = true, children }: PanelProps<T>) {
  const styles = useStyles2(getStyles);
  const [ref, { width }] = useMeasure<HTMLDivElement>();
  const data = section.status === 'ok' ? section.data : section.status === 'loading' ? section.data : undefined;
  const loading = section.status === 'loading' || section.status === 'idle';
  return (
    <div ref={ref} className={styles.wrap} data-testid={testIds.state.panel(id)}>
      {width > 0 && (
        <PanelChrome
          title={title}
          description={description}
          width={width}
          height={height + 40}
          loadingState={loading ? LoadingState.Loading : section.status === 'error' ? LoadingState.Error : LoadingState.Done}
          statusMessage={section.status === 'error' ? `${section.error.code}: ${section.error.message}` : undefined}
          actions={actions}
        >
          {(innerWidth, innerHeight) => {
            if (section.status === 'error') {
              return (
                <div className={styles.center} data-testid={testIds.state.error(id)}>
                  <Alert severity="error" title={`${title}: could not load`}>
                    {section.error.message} ({section.error.code})
                  </Alert>
                </div>
              );
            }
            if (data === undefined) {
              return (
                <div className={styles.center} data-testid={testIds.state.loading(id)}>
                  Loading…
                </div>
              );
            }
            const empty = isEmpty?.(data) ?? false;
            return (
              <div className={styles.body}>
                {sourceErrors && <SourceErrors data={data} />}
                {empty ? (
                  <div className={styles.center} data-testid={testIds.state.empty(id)}>
                    {emptyText ?? 'No data in this time range.'}
                  </div>
                ) : (
                  children(data, innerWidth, Math.max(40, innerHeight - (sourceErrors && failedSources(data).length ? 24 : 0)))
                )}
              </div>
            );
          }}
        </PanelChrome>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ width: '100%', minWidth: 0 }),
  body: css({ display: 'flex', flexDirection: 'column', height: '100%' }),
  center: css({ display: 'flex', alignItems: 'center', justifyContent: 'center', height: '100%', color: theme.colors.text.secondary, textAlign: 'center', padding: theme.spacing(1) }),
  sources: css({ color: theme.colors.warning.text, fontSize: theme.typography.bodySmall.fontSize, marginBottom: theme.spacing(0.5) }),
});
