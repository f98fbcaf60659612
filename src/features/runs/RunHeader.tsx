/**
 * The run page's header: which run (scenario, verdict, window, target, workers, its gate's baseline), links out that
 * keep the run's window (the Overview with this run selected, the traces of the window, back to the runs), and the
 * page's time range pinned to the run's window when the link did not carry one — and again once a running run ends.
 */
import { css } from '@emotion/css';
import { dateTime, dateTimeFormat, type GrafanaTheme2 } from '@grafana/data';
import { SceneObjectBase, sceneGraph, type SceneComponentProps, type SceneObjectState } from '@grafana/scenes';
import { Alert, Badge, type BadgeColor, useStyles2 } from '@grafana/ui';
import React from 'react';

import type { RunRecord } from '../../../contract';
import { appLinks, appPaths, preservedQuery, withQuery } from '../../../contract/app-urls';
import type { ApiError } from '../../api/client';
import { runWindow } from '../../datasource/frames/runs';
import { testIds } from '../../testIds';
import { AppLink, currentSearch } from '../shared/AppLink';
import { followRunRecord } from './followRunRecord';

interface RunHeaderState extends SceneObjectState {
  runId: string;
  /** The link carried no time range: pin the page's to the run's window once the record is in. */
  pinWindow: boolean;
  record?: RunRecord;
  error?: ApiError;
}

const STATUS_COLOR: Record<RunRecord['status'], BadgeColor> = {
  running: 'blue',
  passed: 'green',
  failed: 'red',
  aborted: 'orange',
};

export class RunHeader extends SceneObjectBase<RunHeaderState> {
  static Component = RunHeaderRenderer;

  constructor(state: RunHeaderState) {
    super(state);
    followRunRecord(
      this,
      () => this.state.runId,
      (res) => {
        if (!res.ok) {
          this.setState({ error: res.error });
          return;
        }
        const before = this.state.record;
        this.setState({ record: res.data, error: undefined });
        const ended = before?.status === 'running' && res.data.status !== 'running';
        if ((this.state.pinWindow && !before) || ended) {
          this.pin(res.data);
        }
      }
    );
  }

  /**
   * The page's time range := the run's window (… now while it runs). Not a history step: the page is the same view,
   * now showing what its link meant (back still leaves the page).
   */
  private pin(run: RunRecord): void {
    const w = runWindow(run);
    const range = sceneGraph.getTimeRange(this);
    const from = new Date(w.from).toISOString();
    const to = w.to === 'now' ? 'now' : new Date(w.to).toISOString();
    range.setState({
      from,
      to,
      value: { from: dateTime(w.from), to: w.to === 'now' ? dateTime() : dateTime(w.to), raw: { from, to } },
    });
  }
}

/** The Overview over the same window with this run selected (its run variable). */
function overviewOfRun(runId: string, search: string): string {
  const q = preservedQuery(search);
  q.set('var-run', runId);
  return withQuery(appPaths.overview(), q);
}

function RunHeaderRenderer({ model }: SceneComponentProps<RunHeader>) {
  const { runId, record, error } = model.useState();
  const styles = useStyles2(getStyles);
  const search = currentSearch();
  if (error) {
    return (
      <Alert severity="error" title={`Run ${runId}`}>
        {error.message}
      </Alert>
    );
  }
  const fmt = (ms: number) => dateTimeFormat(ms, { format: 'YYYY-MM-DD HH:mm:ss' });
  return (
    <div className={styles.header} data-testid={testIds.runs.header}>
      <div className={styles.line}>
        <strong>{record?.scenario ?? '…'}</strong>
        {record && (
          <span data-testid={testIds.runs.status}>
            <Badge
              text={record.status}
              color={STATUS_COLOR[record.status]}
              icon={
                record.status === 'running' ? 'sync' : record.status === 'passed' ? 'check' : 'exclamation-triangle'
              }
            />
          </span>
        )}
        {record && (
          <span className={styles.muted}>
            {fmt(record.startMs)} → {record.endMs !== null ? fmt(record.endMs) : 'running'} · {record.target} ·{' '}
            {record.workers} worker{record.workers === 1 ? '' : 's'}
            {record.baselineRunId ? ` · gated against ${record.baselineRunId}` : ''}
          </span>
        )}
      </div>
      <div className={styles.line}>
        <AppLink href={appLinks.runs(search)}>All runs</AppLink>
        <AppLink href={overviewOfRun(runId, search)} testId={testIds.runs.overviewLink}>
          Overview over this run
        </AppLink>
        <AppLink href={appLinks.traces(search)} testId={testIds.runs.tracesLink}>
          Traces of this run&apos;s window
        </AppLink>
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  header: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(0.5), padding: theme.spacing(0.5, 0, 1) }),
  line: css({ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: theme.spacing(2) }),
  muted: css({ color: theme.colors.text.secondary }),
});
