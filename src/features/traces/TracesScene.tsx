/**
 * Traces: a search (trace id, or service / minimum duration / status) whose state lives in the URL, and the trace
 * root-cause view: the trace as an icicle (critical path, exclusive time), the ranked candidates with their evidence,
 * the kernel events of the suspect pods on the same timeline, and broken propagation flagged.
 */
import { css, cx } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import { SceneObjectUrlSyncConfig, type SceneComponentProps, type SceneObjectUrlValues } from '@grafana/scenes';
import { Alert, Button, Field, Input, RadioButtonGroup, useStyles2 } from '@grafana/ui';
import React, { useMemo, useState } from 'react';

import { EVIDENCE_KINDS, type KernelEvent, type RcaAnswer, type TraceDetail, type TraceList } from '../../../contract';
import { api, type ApiResult } from '../../api/client';
import { testIds } from '../../testIds';
import { kernelLanes } from '../../transforms/kernelEvidence';
import { buildTraceTree, podOf } from '../../transforms/traceTree';
import { appLinks, VIEW_URL_KEYS } from '../../../contract/app-urls';
import { isTraceId, traceSearchFromUrl, traceSearchToUrl, type TraceSearchState } from '../../transforms/urlState';
import { KernelTimeline } from '../../viz/KernelTimeline';
import { measureRender } from '../../viz/marks';
import { TraceIcicle } from '../../viz/TraceIcicle';
import { AppLink, currentSearch, navigate } from '../shared/AppLink';
import { Breadcrumbs } from '../shared/Breadcrumbs';
import { fmtMs } from '../shared/format';
import { Panel } from '../shared/Panel';
import { TraceTable } from '../shared/TraceTable';
import { ViewObject, type QueryContext, type ViewState } from '../shared/viewObject';

// ---------- Search ----------

interface SearchState extends ViewState {
  search: TraceSearchState;
}

export class TraceSearchScene extends ViewObject<SearchState> {
  static Component = TraceSearchRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.traces] });

  constructor(search: TraceSearchState = {}) {
    super({ sections: {}, search });
  }

  public getUrlState(): SceneObjectUrlValues {
    const { traceId: _ignored, ...rest } = traceSearchToUrl(this.state.search);
    return rest;
  }

  public updateFromUrl(values: SceneObjectUrlValues): void {
    const next = traceSearchFromUrl(values as Record<string, string | string[] | null | undefined>);
    if (JSON.stringify(next) !== JSON.stringify(this.state.search)) {
      this.setState({ search: next });
      if (this.isActive) {
        this.refresh();
      }
    }
  }

  public setSearch(search: TraceSearchState): void {
    if (search.traceId) {
      navigate(appLinks.trace(search.traceId, currentSearch()));
      return;
    }
    this.setState({ search });
    this.refresh();
  }

  protected load(ctx: QueryContext): void {
    const s = this.state.search;
    // The slowest of the whole range, not the slowest of its 100 newest traces.
    this.section('traces', api.traces({ from: ctx.from, to: ctx.to, service: s.service, minDurationMs: s.minDurationMs, status: s.status, limit: 100, sort: 'duration' }));
  }

  /** The slowest listed traces, for the postmortem export. */
  public exportTraceIds(): string[] {
    const t = this.get<TraceList>('traces');
    return t.status === 'ok' ? [...t.data.traces].sort((a, b) => b.durationMs - a.durationMs).map((x) => x.traceId) : [];
  }
}

function TraceSearchRenderer({ model }: SceneComponentProps<TraceSearchScene>) {
  const { search } = model.useState();
  const styles = useStyles2(getStyles);
  const traces = model.get<TraceList>('traces');
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
    model.setSearch({ ...search, traceId: q ? q.toLowerCase() : undefined, service: service.trim() || undefined, minDurationMs: min });
  };
  return (
    <div className={styles.page} data-testid={testIds.page.container('traces')}>
      <form className={styles.form} onSubmit={submit} aria-label="Search traces">
        <Field label="Trace id" invalid={!!err} error={err} className={styles.grow}>
          <Input value={text} onChange={(e) => setText(e.currentTarget.value)} placeholder="Paste a trace id to open its root cause" data-testid={testIds.traces.searchInput} />
        </Field>
        <Field label="Service">
          <Input value={service} onChange={(e) => setService(e.currentTarget.value)} placeholder="any" width={18} />
        </Field>
        <Field label="Min duration (ms)">
          <Input value={minMs} onChange={(e) => setMinMs(e.currentTarget.value)} placeholder="0" width={14} inputMode="numeric" />
        </Field>
        <Field label="Status">
          <RadioButtonGroup
            options={[{ label: 'Any', value: '' }, { label: 'Error', value: 'error' }, { label: 'Timeout', value: 'timeout' }, { label: 'OK', value: 'ok' }]}
            value={search.status ?? ''}
            onChange={(v) => model.setSearch({ ...search, status: (v || undefined) as TraceSearchState['status'] })}
          />
        </Field>
        <Button type="submit" icon="search" data-testid={testIds.traces.searchSubmit}>
          Search
        </Button>
      </form>
      <Panel id="trace-list" title="Traces, slowest first" section={traces} height={480} isEmpty={(d) => d.traces.length === 0} emptyText="No trace matches in this time range.">
        {(d, _w, h) => <TraceTable traces={d.traces} maxHeight={h} testId={testIds.traces.list} />}
      </Panel>
    </div>
  );
}

// ---------- One trace: root cause ----------

interface TraceViewState extends ViewState {
  traceId: string;
  selectedSpanId?: string;
}

export class TraceScene extends ViewObject<TraceViewState> {
  static Component = TraceRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.trace] });

  constructor(traceId: string) {
    super({ sections: {}, traceId });
  }

  public getUrlState(): SceneObjectUrlValues {
    return { span: this.state.selectedSpanId };
  }

  public updateFromUrl(values: SceneObjectUrlValues): void {
    const span = typeof values.span === 'string' ? values.span : undefined;
    if (span !== this.state.selectedSpanId) {
      this.setState({ selectedSpanId: span });
    }
  }

  public select(spanId: string): void {
    this.setState({ selectedSpanId: spanId });
  }

  protected load(): void {
    // A trace does not depend on the time range; its kernel evidence window is the trace's own.
    const trace = api.trace(this.state.traceId);
    const rca = api.traceRca(this.state.traceId);
    this.section('trace', trace);
    this.section('rca', rca);
    this.section('kernel', kernelForTrace(trace, rca));
  }
}

/** Kernel events of the top candidates' pods inside the trace's window (±1 s), tagged with their pod. */
async function kernelForTrace(trace: Promise<ApiResult<TraceDetail>>, rca: Promise<ApiResult<RcaAnswer>>): Promise<ApiResult<KernelEvent[]>> {
  const [t, r] = await Promise.all([trace, rca]);
  if (!t.ok) {
    return t;
  }
  if (!t.data.spans.length) {
    return { ok: true, data: [] };
  }
  const from = Math.min(...t.data.spans.map((s) => s.startMs)) - 1000;
  const to = Math.max(...t.data.spans.map((s) => s.endMs)) + 1000;
  const pods = new Set<string>();
  if (r.ok) {
    r.data.candidates.slice(0, 3).forEach((c) => c.pod && pods.add(c.pod));
  }
  if (!pods.size) {
    t.data.spans.forEach((s) => {
      const p = podOf(s);
      if (p && pods.size < 3) {
        pods.add(p);
      }
    });
  }
  const answers = await Promise.all([...pods].map((p) => api.kernelEvents(p, { from: Math.floor(from), to: Math.ceil(to) }, `hopscope-trace-kernel-${p}`)));
  const ok = answers.filter((a) => a.ok);
  if (!ok.length && answers.length) {
    return answers[0] as ApiResult<KernelEvent[]>;
  }
  return { ok: true, data: ok.flatMap((a) => (a.ok ? a.data.events : [])) };
}

function TraceRenderer({ model }: SceneComponentProps<TraceScene>) {
  const { traceId, selectedSpanId } = model.useState();
  const styles = useStyles2(getStyles);
  const trace = model.get<TraceDetail>('trace');
  const rca = model.get<RcaAnswer>('rca');
  const kernel = model.get<KernelEvent[]>('kernel');
  const traceData = trace.status === 'ok' ? trace.data : undefined;
  const rcaData = rca.status === 'ok' ? rca.data : undefined;
  // The critical path is the engine's (skew-corrected), drawn once its answer is in.
  const criticalPath = rcaData?.criticalPath;
  const tree = useMemo(
    () => (traceData && traceData.spans.length ? measureRender('trace-tree-build', () => buildTraceTree(traceData.spans, criticalPath)) : undefined),
    [traceData, criticalPath]
  );
  const ranks = useMemo(() => new Map((rcaData?.candidates ?? []).filter((c) => c.spanId).map((c) => [c.spanId!, c.rank])), [rcaData]);
  const selected = selectedSpanId && traceData?.spans.find((s) => s.spanId === selectedSpanId);
  const search = currentSearch();
  const brokenEvidence = (rcaData?.candidates ?? []).flatMap((c) => c.evidence.filter((e) => e.kind === 'broken_propagation').map((e) => `${c.service}: ${e.summary}`));
  const broken = [...(tree?.broken.map((b) => b.summary) ?? []), ...brokenEvidence];

  return (
    <div className={styles.page} data-testid={testIds.page.container('trace')}>
      <Breadcrumbs crumbs={[{ label: 'Traces', href: appLinks.traces(search) }, { label: traceId }]} />
      <Panel
        id="rca"
        title={rcaData ? `Root cause — ranked in ${rcaData.tookMs.toFixed(1)} ms` : 'Root cause'}
        section={rca}
        height={Math.min(360, 60 + (rcaData?.candidates.length ?? 3) * 64)}
        isEmpty={(d) => d.candidates.length === 0}
        emptyText="No candidate: nothing on the critical path stands out from its baseline."
      >
        {(d, _w, h) => (
          <div className={styles.scroll} style={{ maxHeight: h }}>
            {d.missing.length > 0 && (
              <div className={styles.warn} data-testid={testIds.traces.missing}>
                Missing evidence: {d.missing.join('; ')}
              </div>
            )}
            <ol className={styles.candidates} data-testid={testIds.traces.candidates}>
              {d.candidates.map((c) => (
                <li key={`${c.rank}-${c.service}-${c.spanId ?? ''}`} className={cx(styles.candidate, c.spanId !== undefined && c.spanId === selectedSpanId && styles.selected)} data-testid={testIds.traces.candidate(c.rank)}>
                  <div className={styles.candHead}>
                    <span className={styles.rank}>#{c.rank}</span>
                    <strong>{c.service}</strong>
                    <span className={styles.muted}>
                      {c.pod ? (
                        <AppLink href={appLinks.pod(c.service, c.pod, search)} testId={testIds.services.podLink(c.pod)}>
                          {c.pod}
                        </AppLink>
                      ) : (
                        'pod unknown'
                      )}
                      {c.operation ? ` · ${c.operation}` : ''}
                    </span>
                    <span className={styles.score}>score {c.score.toFixed(2)}</span>
                    {c.selfMs !== undefined && (
                      <span className={styles.muted}>
                        self {fmtMs(c.selfMs)}
                        {c.baselineMs !== undefined ? ` vs baseline ${fmtMs(c.baselineMs)}` : ''}
                      </span>
                    )}
                    {c.spanId && (
                      <Button size="sm" variant="secondary" fill="text" onClick={() => model.select(c.spanId!)}>
                        Show span
                      </Button>
                    )}
                  </div>
                  <ul className={styles.evidence}>
                    {c.evidence.map((e, i) => (
                      <li key={i}>
                        <span className={styles.kind} title={EVIDENCE_KINDS[e.kind].description}>
                          {EVIDENCE_KINDS[e.kind].label}
                        </span>{' '}
                        {e.summary}
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ol>
          </div>
        )}
      </Panel>
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
      <Panel
        id="trace-tree"
        title={tree ? `Trace ${traceId.slice(0, 16)}… — ${tree.spanCount} spans, ${fmtMs(tree.endMs - tree.startMs)}${tree.criticalPath.length ? '; critical path solid' : ''}` : `Trace ${traceId}`}
        section={trace}
        height={tree ? Math.min(520, Math.max(80, (tree.root.height + 1) * 20 + 8)) : 120}
        isEmpty={(d) => d.spans.length === 0}
        emptyText="This trace has no spans (yet): it may still be arriving, or it is outside the store's retention."
      >
        {(_d, _w, h) =>
          tree && (
            <div className={styles.scroll} style={{ maxHeight: h }}>
              <TraceIcicle tree={tree} selectedSpanId={selectedSpanId} onSelect={(id) => model.select(id)} ranks={ranks} />
            </div>
          )
        }
      </Panel>
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
      {tree && (
        <Panel
          id="trace-kernel"
          title="Kernel events of the suspect pods, on the trace's timeline"
          section={kernel}
          height={5 * 25 + 8}
          isEmpty={(d) => d.length === 0}
          emptyText="No kernel event on the suspect pods during this trace."
        >
          {(d) => (
            <KernelTimeline
              lanes={kernelLanes(d)}
              fromMs={tree.startMs}
              toMs={tree.endMs}
              highlight={selected ? { fromMs: selected.startMs, toMs: selected.endMs } : undefined}
            />
          )}
        </Panel>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  form: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'flex-end', flexWrap: 'wrap' }),
  grow: css({ flex: 1, minWidth: 320 }),
  scroll: css({ overflow: 'auto' }),
  candidates: css({ listStyle: 'none', margin: 0, padding: 0 }),
  candidate: css({ padding: theme.spacing(0.5, 1), borderBottom: `1px solid ${theme.colors.border.weak}` }),
  selected: css({ background: theme.colors.action.selected }),
  candHead: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'baseline', flexWrap: 'wrap' }),
  rank: css({ fontWeight: theme.typography.fontWeightBold, color: theme.colors.warning.text }),
  score: css({ fontVariantNumeric: 'tabular-nums' }),
  muted: css({ color: theme.colors.text.secondary }),
  evidence: css({ margin: theme.spacing(0.5, 0, 0, 3), fontSize: theme.typography.bodySmall.fontSize }),
  kind: css({ fontFamily: theme.typography.fontFamilyMonospace, color: theme.colors.text.secondary }),
  warn: css({ color: theme.colors.warning.text, fontSize: theme.typography.bodySmall.fontSize, marginBottom: theme.spacing(0.5) }),
  details: css({ padding: theme.spacing(1), background: theme.colors.background.secondary, borderRadius: theme.shape.radius.default, fontSize: theme.typography.bodySmall.fontSize }),
  attrs: css({ display: 'flex', flexWrap: 'wrap', gap: theme.spacing(0.5, 2), marginTop: theme.spacing(0.5), fontFamily: theme.typography.fontFamilyMonospace }),
});
