/**
 * Traces search: a trace id, or service / minimum duration / status, whose state lives in the URL (VIEW_URL_KEYS.traces),
 * over a table of the matching traces, slowest first. A trace id opens that trace's root cause (TraceScene).
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Button, Field, Input, RadioButtonGroup, useStyles2 } from '@grafana/ui';
import React, { useState } from 'react';

import { appLinks, VIEW_URL_KEYS } from '../../../contract/app-urls';
import { hopscopeQuery, type HopscopeQuery } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner } from '../../scenes/panels';
import { testIds } from '../../testIds';
import { isTraceId, traceSearchFromUrl, traceSearchToUrl, type TraceSearchState } from '../../transforms/urlState';
import { currentSearch, navigate } from '../shared/AppLink';

interface SearchState extends SceneObjectState {
  search: TraceSearchState;
  list: SceneObject;
}

const listQuery = (s: TraceSearchState): HopscopeQuery<'traces'> =>
  // The slowest of the whole range, not the slowest of its 100 newest traces.
  hopscopeQuery('traces', { service: s.service, minDurationMs: s.minDurationMs, status: s.status, limit: 100 });

export class TraceSearchScene extends SceneObjectBase<SearchState> {
  static Component = TraceSearchRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.traces] });
  private readonly runner: SceneQueryRunner;

  constructor(search: TraceSearchState = {}) {
    const runner = hopscopeRunner(listQuery(search));
    const list = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Traces, slowest first')
        .setDescription('Click a trace id to open its root cause.')
        .setData(runner)
        .setOption('sortBy', [{ displayName: 'Duration', desc: true }])
        .setOption('cellHeight', 'sm' as never),
      { key: 'trace-list' }
    );
    super({
      search,
      list: new SceneFlexLayout({ direction: 'column', children: [new SceneFlexItem({ height: 480, body: list })] }),
    });
    this.runner = runner;
  }

  public getUrlState(): SceneObjectUrlValues {
    const { traceId: _ignored, ...rest } = traceSearchToUrl(this.state.search);
    return rest;
  }

  /** Scenes passes only the keys that changed: the others keep their value. */
  public updateFromUrl(values: SceneObjectUrlValues): void {
    const next = traceSearchFromUrl({
      ...this.getUrlState(),
      ...(values as Record<string, string | string[] | null | undefined>),
    });
    if (JSON.stringify(next) !== JSON.stringify(this.state.search)) {
      this.apply(next);
    }
  }

  public setSearch(search: TraceSearchState): void {
    if (search.traceId) {
      navigate(appLinks.trace(search.traceId, currentSearch()));
      return;
    }
    this.apply(search);
  }

  private apply(search: TraceSearchState): void {
    this.setState({ search });
    this.runner.setState({ queries: [listQuery(search)] });
    if (this.runner.isActive) {
      this.runner.runQueries();
    }
  }
}

function TraceSearchRenderer({ model }: SceneComponentProps<TraceSearchScene>) {
  const { search, list } = model.useState();
  const styles = useStyles2(getStyles);
  const [text, setText] = useState('');
  const [minMs, setMinMs] = useState(search.minDurationMs !== undefined ? String(search.minDurationMs) : '');
  const [service, setService] = useState(search.service ?? '');
  const [err, setErr] = useState<string | undefined>();
  const submit = (e: React.FormEvent): void => {
    e.preventDefault();
    const q = text.trim();
    if (q && !isTraceId(q)) {
      setErr('A trace id is 32 hexadecimal digits (e.g. 0af7651916cd43dd8448eb211c80319c).');
      return;
    }
    const min = minMs.trim() === '' ? undefined : Number(minMs);
    if (min !== undefined && (!Number.isFinite(min) || min < 0)) {
      setErr('Minimum duration must be a number of milliseconds ≥ 0.');
      return;
    }
    setErr(undefined);
    model.setSearch({
      ...search,
      traceId: q ? q.toLowerCase() : undefined,
      service: service.trim() || undefined,
      minDurationMs: min,
    });
  };
  return (
    <div className={styles.page}>
      <form className={styles.form} onSubmit={submit} aria-label="Search traces">
        <Field label="Trace id" invalid={!!err} error={err} className={styles.grow}>
          <Input
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            placeholder="Paste a trace id to open its root cause"
            data-testid={testIds.traces.searchInput}
          />
        </Field>
        <Field label="Service">
          <Input value={service} onChange={(e) => setService(e.currentTarget.value)} placeholder="any" width={18} />
        </Field>
        <Field label="Min duration (ms)">
          <Input
            value={minMs}
            onChange={(e) => setMinMs(e.currentTarget.value)}
            placeholder="0"
            width={14}
            inputMode="numeric"
          />
        </Field>
        <Field label="Status">
          <RadioButtonGroup
            options={[
              { label: 'Any', value: '' },
              { label: 'Error', value: 'error' },
              { label: 'Timeout', value: 'timeout' },
              { label: 'OK', value: 'ok' },
            ]}
            value={search.status ?? ''}
            onChange={(v) => model.setSearch({ ...search, status: (v || undefined) as TraceSearchState['status'] })}
          />
        </Field>
        <Button type="submit" icon="search" data-testid={testIds.traces.searchSubmit}>
          Search
        </Button>
      </form>
      <list.Component model={list} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  form: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'flex-end', flexWrap: 'wrap' }),
  grow: css({ flex: 1, minWidth: 320 }),
});
