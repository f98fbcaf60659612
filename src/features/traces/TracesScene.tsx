/**
 * Traces: a search (trace id, or service / minimum duration / status) whose state lives in the URL, over a table of
 * the matching traces, slowest first; and one trace's root cause as Grafana panels: the ranked candidates with their
 * evidence (a table), where its kernel evidence came from and what the engine could not see (said on the page), the
 * trace as an icicle with the engine's critical path (a runtime panel), the kernel events of the suspect pods on the
 * trace's own timeline, broken propagation flagged, and the selected span (URL key `span`). The answer can be saved
 * for a postmortem: its link opens this page on the saved answer (URL key `answer`), as it was ranked then.
 */
import { css } from '@emotion/css';
import type { DataFrame, GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  VizPanelBuilder,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectRef,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
  type VizPanel,
} from '@grafana/scenes';
import { Alert, Button, ClipboardButton, Field, Input, RadioButtonGroup, useStyles2 } from '@grafana/ui';
import React, { useMemo, useState } from 'react';

import { appLinks, VIEW_URL_KEYS } from '../../../contract/app-urls';
import type { SavedRcaAnswerMeta } from '../../../contract';
import { api } from '../../api/client';
import { podOf, rcaAboutOfFrame, spansOfFrame } from '../../datasource/frames/traces';
import { hopscopeQuery, type HopscopeQuery } from '../../datasource/query';
import { KERNEL_LANES_PANEL, type KernelLanesOptions } from '../../panels/kernelLanes';
import { TRACE_ICICLE_PANEL, type TraceIcicleOptions } from '../../panels/traceIcicle';
import { fitToData, hopscopePanel, hopscopeRunner, setPanelOptions } from '../../scenes/panels';
import { testIds } from '../../testIds';
import { buildTraceTree } from '../../transforms/traceTree';
import { isTraceId, traceSearchFromUrl, traceSearchToUrl, type TraceSearchState } from '../../transforms/urlState';
import { AppLink, currentSearch, navigate } from '../shared/AppLink';
import { fmtMs } from '../shared/format';

// ---------- Search ----------

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

// ---------- One trace: root cause ----------

interface TraceViewState extends SceneObjectState {
  traceId: string;
  selectedSpanId?: string;
  /** A saved answer shown instead of the live root cause (URL `answer`). */
  answerId?: string;
  body: SceneObject;
}

const rcaQuery = (traceId: string, answer?: string) => hopscopeQuery('rca', { traceId, ...(answer ? { answer } : {}) });

export class TraceScene extends SceneObjectBase<TraceViewState> {
  static Component = TraceRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.trace] });
  private readonly icicle: VizPanel<TraceIcicleOptions>;
  private readonly lanes: VizPanel<KernelLanesOptions>;
  private readonly findings: TraceFindings;
  private readonly answers: SavedAnswers;
  private readonly runners: { trace: SceneQueryRunner; rca: SceneQueryRunner };

  constructor(traceId: string) {
    // The trace and its root cause (one call each, shared by the panels that ask in the same refresh).
    const traceRunner = hopscopeRunner(hopscopeQuery('trace', { traceId }), rcaQuery(traceId));
    const rcaRunner = hopscopeRunner(rcaQuery(traceId));
    const candidates = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Root cause: the hops that explain the delay, ranked')
        .setDescription(
          'Each candidate with its evidence (labels from the evidence catalogue). Click a pod for its kernel evidence, an operation to show its span.'
        )
        .setData(rcaRunner)
        .setOption('sortBy', [{ displayName: '#', desc: false }])
        .setOption('cellHeight', 'lg' as never),
      { key: 'rca' }
    );
    const icicle = hopscopePanel(
      new VizPanelBuilder<TraceIcicleOptions, object>(TRACE_ICICLE_PANEL, '1.0.0')
        .setTitle(`Trace ${traceId.slice(0, 16)}…`)
        .setDescription(
          "x is time, y is depth; the engine's critical path (clock skew corrected) solid, the other spans faded, root-cause ranks as badges. Click or Enter selects a span."
        )
        .setData(traceRunner),
      { key: 'trace-tree', traceId }
    );
    const lanes = hopscopePanel(
      new VizPanelBuilder<KernelLanesOptions, object>(KERNEL_LANES_PANEL, '1.0.0')
        .setTitle("Kernel events of the suspect pods, on the trace's timeline")
        .setData(hopscopeRunner(hopscopeQuery('traceKernelEvents', { traceId }))),
      { key: 'trace-kernel' }
    );
    const findings = new TraceFindings({ data: traceRunner.getRef() });
    const answers = new SavedAnswers({ traceId, data: rcaRunner.getRef() });
    super({
      traceId,
      body: new SceneFlexLayout({
        direction: 'column',
        children: [
          new SceneFlexItem({ body: answers }),
          // As tall as what they draw: the candidates, the trace's depth.
          fitToData(new SceneFlexItem({ height: 240, body: candidates }), rcaRunner, (d) => {
            const rows = d.series.find((f) => f.refId === 'rca')?.length;
            return rows === undefined ? undefined : Math.min(520, 90 + Math.max(1, rows) * 48);
          }),
          new SceneFlexItem({ body: findings }),
          fitToData(new SceneFlexItem({ height: 240, body: icicle }), traceRunner, (d) => {
            const trace = d.series.find((f) => f.meta?.preferredVisualisationType === 'trace');
            return trace ? Math.min(560, Math.max(120, traceDepth(trace) * 20 + 70)) : undefined;
          }),
          new SceneFlexItem({ height: 5 * 25 + 60, body: lanes }),
        ],
      }),
    });
    this.icicle = icicle;
    this.lanes = lanes;
    this.findings = findings;
    this.answers = answers;
    this.runners = { trace: traceRunner, rca: rcaRunner };
    // A span selected from the URL before the trace arrived: its window is shaded once the spans are known.
    this.addActivationHandler(() => {
      const sub = traceRunner.subscribeToState(
        () => this.state.selectedSpanId && this.select(this.state.selectedSpanId)
      );
      return () => sub.unsubscribe();
    });
  }

  public getUrlState(): SceneObjectUrlValues {
    return { span: this.state.selectedSpanId, answer: this.state.answerId };
  }

  /** Scenes passes only the keys that changed. */
  public updateFromUrl(values: SceneObjectUrlValues): void {
    if ('answer' in values) {
      const answer =
        typeof values.answer === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(values.answer) ? values.answer : undefined;
      if (answer !== this.state.answerId) {
        this.showAnswer(answer);
      }
    }
    if ('span' in values) {
      const span = typeof values.span === 'string' && values.span ? values.span : undefined;
      if (span !== this.state.selectedSpanId) {
        this.select(span);
      }
    }
  }

  /** Shows a saved answer (its ranking and critical path as they were saved), or the live root cause (undefined). */
  public showAnswer(answerId: string | undefined): void {
    const { traceId } = this.state;
    this.setState({ answerId });
    this.answers.setState({ answerId });
    this.runners.trace.setState({ queries: [hopscopeQuery('trace', { traceId }), rcaQuery(traceId, answerId)] });
    this.runners.rca.setState({ queries: [rcaQuery(traceId, answerId)] });
    for (const r of [this.runners.trace, this.runners.rca]) {
      if (r.isActive) {
        r.runQueries();
      }
    }
  }

  /** The selected span: drawn on the icicle, its window shaded on the kernel lanes, its attributes listed. */
  public select(spanId: string | undefined): void {
    this.setState({ selectedSpanId: spanId });
    setPanelOptions(this.icicle, { selectedSpanId: spanId });
    this.findings.setState({ selectedSpanId: spanId });
    const span = spanId ? this.findings.span(spanId) : undefined;
    setPanelOptions(this.lanes, { highlight: span ? { fromMs: span.startMs, toMs: span.endMs } : undefined });
  }
}

function TraceRenderer({ model }: SceneComponentProps<TraceScene>) {
  const { body } = model.useState();
  return <body.Component model={body} />;
}

/** Levels of a trace frame's span tree (its parent links), for the icicle's height. */
function traceDepth(frame: DataFrame): number {
  const ids = frame.fields.find((f) => f.name === 'spanID')?.values ?? [];
  const parents = frame.fields.find((f) => f.name === 'parentSpanID')?.values ?? [];
  const parentOf = new Map<string, string>(ids.map((id: string, i: number) => [id, parents[i]]));
  const depth = new Map<string, number>();
  const of = (id: string, guard = 0): number => {
    const known = depth.get(id);
    if (known !== undefined) {
      return known;
    }
    const p = parentOf.get(id);
    const d = p && parentOf.has(p) && guard < 10_000 ? of(p, guard + 1) + 1 : 1;
    depth.set(id, d);
    return d;
  };
  return ids.reduce((m: number, id: string) => Math.max(m, of(id)), 0);
}

// ---------- What the trace says beyond the panels: broken propagation, the selected span ----------

interface FindingsState extends SceneObjectState {
  /** The trace + root-cause runner (the icicle's). */
  data: SceneObjectRef<SceneQueryRunner>;
  selectedSpanId?: string;
}

class TraceFindings extends SceneObjectBase<FindingsState> {
  static Component = TraceFindingsRenderer;

  span(spanId: string) {
    const frame = this.state.data
      .resolve()
      .state.data?.series.find((f) => f.meta?.preferredVisualisationType === 'trace');
    return frame ? spansOfFrame(frame).find((s) => s.spanId === spanId) : undefined;
  }
}

function TraceFindingsRenderer({ model }: SceneComponentProps<TraceFindings>) {
  const { data, selectedSpanId } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const spans = useMemo(() => {
    const frame = series?.find((f) => f.meta?.preferredVisualisationType === 'trace');
    return frame ? spansOfFrame(frame) : [];
  }, [series]);
  const broken = useMemo(() => {
    const fromTree = spans.length ? buildTraceTree(spans).broken.map((b) => b.summary) : [];
    const rca = series?.find((f) => f.fields.some((x) => x.name === 'evidenceKinds'));
    const service = rca?.fields.find((x) => x.name === 'service')?.values ?? [];
    const kinds = rca?.fields.find((x) => x.name === 'evidenceKinds')?.values ?? [];
    const text = rca?.fields.find((x) => x.name === 'evidence')?.values ?? [];
    const fromEngine = kinds.flatMap((k: string, i: number) =>
      k.split(',').includes('broken_propagation')
        ? String(text[i])
            .split('\n')
            .filter((l) => l.startsWith('Broken propagation'))
            .map((l) => `${service[i]}: ${l}`)
        : []
    );
    return [...fromTree, ...fromEngine];
  }, [spans, series]);
  const selected = selectedSpanId ? spans.find((s) => s.spanId === selectedSpanId) : undefined;
  const about = rcaAboutOfFrame(series?.find((f) => f.meta?.custom?.rca));
  return (
    <div className={styles.findings}>
      {about && (
        <div className={styles.evidence} aria-label="What the root cause saw">
          {about.kernelEvidenceText && (
            <p
              className={styles.line}
              data-testid={testIds.traces.kernelEvidence}
              data-source={about.kernelEvidence?.source}
            >
              {about.kernelEvidenceText}
            </p>
          )}
          {about.inferredCalls > 0 && (
            <p className={styles.line}>
              {about.inferredCalls} candidate(s) rest on calls inferred from the trace tree: their spans say no kind, so
              a child on another service or pod was taken as the server side.
            </p>
          )}
          {about.missing.length > 0 && (
            <div data-testid={testIds.traces.missing}>
              <span className={styles.muted}>What the engine could not see:</span>
              <ul className={styles.list}>
                {about.missing.map((m, i) => (
                  <li key={i}>{m}</li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
      {broken.length > 0 && (
        <div data-testid={testIds.traces.broken}>
          <Alert severity="warning" title="Broken context propagation">
            <ul>
              {broken.map((b, i) => (
                <li key={i}>{b}</li>
              ))}
            </ul>
          </Alert>
        </div>
      )}
      {selected && (
        <div className={styles.details} data-testid={testIds.viz.icicleSelected}>
          <strong>
            {selected.service} · {selected.name}
          </strong>{' '}
          <span className={styles.muted}>
            {fmtMs(selected.endMs - selected.startMs)} · {selected.kind} · {selected.status}
            {selected.statusMessage ? ` (${selected.statusMessage})` : ''} · pod {podOf(selected) ?? '—'}
          </span>
          <div className={styles.attrs}>
            {Object.entries({ ...selected.resource, ...selected.attributes }).map(([k, v]) => (
              <span key={k}>
                <span className={styles.muted}>{k}</span>={String(v)}
              </span>
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

// ---------- Saved answers: save this one, its shareable link, the trace's others, and the saved one shown ----------

interface SavedAnswersState extends SceneObjectState {
  traceId: string;
  /** The root-cause runner (its candidates' frame says which saved answer is shown). */
  data: SceneObjectRef<SceneQueryRunner>;
  answerId?: string;
  saved?: SavedRcaAnswerMeta[];
  saving?: boolean;
  error?: string;
  /** The answer saved in this visit (its link is shown). */
  justSaved?: string;
}

class SavedAnswers extends SceneObjectBase<SavedAnswersState> {
  static Component = SavedAnswersRenderer;

  constructor(state: SavedAnswersState) {
    super(state);
    this.addActivationHandler(() => void this.list());
  }

  private async list(): Promise<void> {
    const res = await api.savedRcaOfTrace(this.state.traceId);
    // The database down or an older proxy: the list is left out, saving still says why it fails.
    this.setState({ saved: res.ok ? res.data.answers : undefined });
  }

  public async save(): Promise<void> {
    this.setState({ saving: true, error: undefined });
    const res = await api.saveTraceRca(this.state.traceId);
    if (!res.ok) {
      this.setState({ saving: false, error: `${res.error.message} (${res.error.code})` });
      return;
    }
    this.setState({ saving: false, justSaved: res.data.id });
    await this.list();
  }
}

/** The app link of a saved answer: this trace's page on it, keeping the carried keys (time range, variables). */
const answerHref = (traceId: string, id: string): string => appLinks.trace(traceId, currentSearch(), { answer: id });

const when = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

function SavedAnswersRenderer({ model }: SceneComponentProps<SavedAnswers>) {
  const { traceId, data, answerId, saved, saving, error, justSaved } = model.useState();
  const styles = useStyles2(getStyles);
  const series = data.resolve().useState().data?.series;
  const shown = rcaAboutOfFrame(series?.find((f) => f.meta?.custom?.rca))?.savedAnswer;
  const others = (saved ?? []).filter((a) => a.id !== answerId);
  const absolute = (id: string): string => new URL(answerHref(traceId, id), window.location.origin).toString();
  return (
    <div className={styles.findings}>
      {answerId && (
        <div data-testid={testIds.traces.savedBanner}>
          <Alert
            severity="info"
            title={`Saved answer ${answerId}${shown ? `, as ranked on ${when(shown.createdMs)}` : ''}`}
          >
            {shown?.traceId && shown.traceId !== traceId
              ? `It was saved for trace ${shown.traceId}, not this one. `
              : ''}
            The ranking below is the one saved; the engine may rank the trace differently now.{' '}
            <AppLink href={appLinks.trace(traceId, currentSearch())} testId={testIds.traces.liveLink}>
              Open the live root cause
            </AppLink>
          </Alert>
        </div>
      )}
      <div className={styles.saveRow}>
        {!answerId && (
          <Button
            size="sm"
            variant="secondary"
            icon="save"
            onClick={() => model.save()}
            disabled={saving}
            data-testid={testIds.traces.saveAnswer}
          >
            {saving ? 'Saving…' : 'Save this answer'}
          </Button>
        )}
        {justSaved && (
          <span className={styles.line}>
            Saved as{' '}
            <AppLink
              href={answerHref(traceId, justSaved)}
              testId={testIds.traces.savedLink}
              title="A link to this answer as saved, for the postmortem"
            >
              {justSaved}
            </AppLink>{' '}
            <ClipboardButton size="sm" variant="secondary" fill="text" icon="copy" getText={() => absolute(justSaved)}>
              Copy link
            </ClipboardButton>
          </span>
        )}
        {others.length > 0 && (
          <span className={styles.line} data-testid={testIds.traces.savedList}>
            <span className={styles.muted}>
              {answerId ? 'Other saved answers of this trace:' : 'Saved answers of this trace:'}
            </span>{' '}
            {others.slice(0, 5).map((a, i) => (
              <React.Fragment key={a.id}>
                {i > 0 && ' · '}
                <AppLink href={answerHref(traceId, a.id)} title={a.title ?? undefined}>
                  {when(a.createdMs)}
                </AppLink>
              </React.Fragment>
            ))}
          </span>
        )}
      </div>
      {error && (
        <Alert severity="error" title="The answer could not be saved">
          {error}
        </Alert>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  form: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'flex-end', flexWrap: 'wrap' }),
  grow: css({ flex: 1, minWidth: 320 }),
  findings: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  muted: css({ color: theme.colors.text.secondary }),
  details: css({
    padding: theme.spacing(1),
    background: theme.colors.background.secondary,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  attrs: css({
    display: 'flex',
    flexWrap: 'wrap',
    gap: theme.spacing(0.5, 2),
    marginTop: theme.spacing(0.5),
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  evidence: css({
    padding: theme.spacing(1),
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  line: css({ margin: 0 }),
  list: css({ margin: theme.spacing(0.5, 0, 0, 2) }),
  saveRow: css({ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: theme.spacing(2) }),
});
