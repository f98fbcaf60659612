/**
 * Overview: the golden metrics of the chain on one time range. Stats, one chart per golden metric (crosshair linked,
 * drag to zoom, faults as markers), the GPU activity heatmap per GPU/MIG instance (click a row → its pod), the services
 * to drill into, and dismissible insights computed from the same data.
 */
import { css } from '@emotion/css';
import { dateTime, type GrafanaTheme2 } from '@grafana/data';
import { sceneGraph, type SceneComponentProps } from '@grafana/scenes';
import { Alert, useStyles2 } from '@grafana/ui';
import React, { useCallback, useEffect, useMemo, useRef } from 'react';

import type { AnnotationsAnswer, GoldenAnswer, HeatmapAnswer, ServicesAnswer } from '../../../contract';
import { api } from '../../api/client';
import { preloadOtherPages } from '../../components/App/lazyPages';
import { testIds } from '../../testIds';
import { goldenFrames, GOLDEN_PANELS, heatmapGrid, insightInput, latestValue } from '../../transforms/golden';
import { computeInsights, INSIGHT_THRESHOLDS } from '../../transforms/insights';
import { appLinks } from '../../../contract/app-urls';
import { Crosshair } from '../../viz/crosshair';
import { GpuHeatmap } from '../../viz/GpuHeatmap';
import { Stat } from '../../viz/Stat';
import { TimeSeriesPanel, type Annotation } from '../../viz/TimeSeriesPanel';
import { useMeasure } from '../../viz/useMeasure';
import { AppLink, currentSearch, navigate } from '../shared/AppLink';
import { Panel } from '../shared/Panel';
import { goldenStepMs, overviewQueries } from './queries';
import { ViewObject, type QueryContext, type ViewState } from '../shared/viewObject';

interface OverviewState extends ViewState {
  dismissed: string[];
}

export { goldenStepMs };

export class OverviewScene extends ViewObject<OverviewState> {
  static Component = OverviewRenderer;
  public readonly crosshair = new Crosshair();

  constructor(state: Partial<OverviewState> = {}) {
    super({ sections: {}, dismissed: [], ...state });
  }

  protected load(ctx: QueryContext): void {
    // The same parameters as the early requests of module.js (queries.ts), which these calls then take.
    const q = overviewQueries(ctx);
    this.section('golden', api.golden(q.golden));
    this.section('heatmap', api.heatmap(q.window));
    this.section('annotations', api.annotations(q.window));
    this.section('services', api.services(q.window));
  }

  public dismiss(id: string): void {
    this.setState({ dismissed: [...this.state.dismissed, id] });
  }

  public zoom(fromMs: number, toMs: number): void {
    const from = dateTime(fromMs);
    const to = dateTime(toMs);
    sceneGraph.getTimeRange(this).onTimeRangeChange({ from, to, raw: { from, to } });
  }
}

function OverviewRenderer({ model }: SceneComponentProps<OverviewScene>) {
  const { sections, dismissed } = model.useState();
  const styles = useStyles2(getStyles);
  const timeRange = sceneGraph.getTimeRange(model).useState().value;
  const [statsRef, statsSize] = useMeasure<HTMLDivElement>();
  const golden = model.get<GoldenAnswer>('golden');
  const heatmap = model.get<HeatmapAnswer>('heatmap');
  const annotationsS = model.get<AnnotationsAnswer>('annotations');
  const services = model.get<ServicesAnswer>('services');
  const goldenData = golden.status === 'ok' ? golden.data : golden.status === 'loading' ? golden.data : undefined;
  const heatData = heatmap.status === 'ok' ? heatmap.data : undefined;

  const annotations: Annotation[] = useMemo(
    () =>
      annotationsS.status === 'ok'
        ? annotationsS.data.annotations.map((a) => ({ timeMs: a.startMs, endMs: a.endMs, label: `fault ${a.kind} on ${a.target}${a.magnitude !== undefined ? ` (${a.magnitude})` : ''}` }))
        : [],
    [annotationsS]
  );
  const insights = useMemo(
    () => (goldenData ? computeInsights(insightInput(goldenData, heatData)).filter((i) => !dismissed.includes(i.id)) : []),
    [goldenData, heatData, dismissed]
  );
  const grid = useMemo(() => (heatData ? heatmapGrid(heatData) : undefined), [heatData]);
  // Stable frames per metric: a new array on every render would rebuild each uPlot chart.
  const frames = useMemo(
    () => new Map(GOLDEN_PANELS.map((def) => [def.metric, goldenData ? goldenFrames(goldenData, def) : []])),
    [goldenData]
  );
  const latest = useMemo(
    () => new Map(GOLDEN_PANELS.map((def) => [def.metric, goldenData ? latestValue(goldenData, def) : undefined])),
    [goldenData]
  );
  const statW = statsSize.width ? Math.floor((statsSize.width - 5 * 8) / 6) : 0;
  // "Ready": every section answered (data or error) and what it answered is on screen — the charts and the heatmap
  // report when they have drawn (their own measuring and uPlot's draw come after this component's commit). A
  // performance mark the benchmark reads, set once per page load.
  const settled = [golden, heatmap, annotationsS, services].every((x) => x.status === 'ok' || x.status === 'error');
  const toDraw = useMemo(() => {
    if (!settled) {
      return undefined;
    }
    const ids = golden.status === 'ok' ? GOLDEN_PANELS.filter((def) => (frames.get(def.metric) ?? []).length > 0).map((def) => def.metric as string) : [];
    return grid && grid.rows.length > 0 && grid.times.length > 0 ? [...ids, 'gpu-heatmap'] : ids;
  }, [settled, golden.status, frames, grid]);
  const drawnRef = useRef(new Set<string>());
  const markIfReady = useRef(() => {});
  markIfReady.current = () => {
    if (toDraw && statW > 0 && toDraw.every((id) => drawnRef.current.has(id)) && !performance.getEntriesByName('hopscope:overview:ready').length) {
      performance.mark('hopscope:overview:ready');
      // The Overview is on screen: fetch the other pages' code while the user reads it.
      preloadOtherPages();
    }
  };
  const onDrawn = useCallback((id: string) => {
    drawnRef.current.add(id);
    markIfReady.current();
  }, []);
  useEffect(() => markIfReady.current(), [toDraw, statW]);
  const search = currentSearch();

  return (
    <div className={styles.page} data-testid={testIds.page.container('overview')}>
      {insights.map((i) => (
        <div key={i.id} data-testid={testIds.overview.insight(i.id)}>
          <Alert
            severity="info"
            title={i.title}
            onRemove={() => model.dismiss(i.id)}
            buttonContent={<span data-testid={testIds.overview.insightDismiss(i.id)}>Dismiss</span>}
          >
            {i.detail} Last seen {dateTime(i.atMs).format('HH:mm:ss')}.
          </Alert>
        </div>
      ))}

      <div ref={statsRef} className={styles.stats}>
        {golden.status === 'error' ? (
          <div data-testid={testIds.state.error('golden')} className={styles.full}>
            <Alert severity="error" title="Golden metrics could not load">
              {golden.error.message} ({golden.error.code})
            </Alert>
          </div>
        ) : (
          statW > 0 &&
          GOLDEN_PANELS.map((def) => (
            <Stat
              key={def.metric}
              id={def.metric}
              title={def.title}
              value={latest.get(def.metric)}
              unit={def.unit}
              decimals={def.decimals}
              width={statW}
              height={80}
              warnAbove={def.metric === 'e2e_p99_s' ? INSIGHT_THRESHOLDS.p99Seconds : undefined}
            />
          ))
        )}
      </div>
      {goldenData && goldenData.missing.length > 0 && (
        <div className={styles.note}>
          Not available: {goldenData.missing.map((m) => `${m.metric} for ${m.backend} (${m.reason})`).join('; ')}
        </div>
      )}

      <div className={styles.grid}>
        {GOLDEN_PANELS.map((def, i) => (
          <Panel
            key={def.metric}
            sourceErrors={i === 0}
            id={def.metric}
            title={def.title}
            description={goldenData?.series.find((s) => s.metric === def.metric)?.query}
            section={golden}
            height={180}
            isEmpty={() => (frames.get(def.metric) ?? []).length === 0}
            emptyText={goldenData?.missing.find((m) => m.metric === def.metric)?.reason ?? 'No series for this metric in this range.'}
          >
            {(_d, width, height) => (
              <div data-testid={testIds.viz.timeseries(def.metric)} data-annotations={annotations.length}>
                <TimeSeriesPanel
                  id={def.metric}
                  frames={frames.get(def.metric) ?? []}
                  timeRange={timeRange}
                  width={width}
                  height={height}
                  crosshair={model.crosshair}
                  annotations={annotations}
                  onZoom={(from, to) => model.zoom(from, to)}
                  onDrawn={() => onDrawn(def.metric)}
                />
              </div>
            )}
          </Panel>
        ))}
      </div>

      <Panel
        id="gpu-heatmap"
        title={`GPU activity per GPU${heatData?.field ? ` (${heatData.field})` : ''}`}
        description={heatData?.note ?? 'Rows are GPUs or MIG instances, columns are time. No live source gives per-SM figures, so this is per GPU.'}
        section={heatmap}
        height={grid ? Math.max(120, Math.min(480, grid.rows.length * 14)) + 44 : 160}
        isEmpty={(d) => d.rows.length === 0 || d.times.length === 0}
        emptyText="No GPU metrics (DCGM) in this time range."
      >
        {() =>
          grid && (
            <GpuHeatmap
              grid={grid}
              crosshair={model.crosshair}
              onDrawn={() => onDrawn('gpu-heatmap')}
              onRowClick={(row) => {
                const svc = services.status === 'ok' ? services.data.services.find((s) => row.pod && s.pods.includes(row.pod)) : undefined;
                if (row.pod && svc) {
                  navigate(appLinks.pod(svc.service, row.pod, search));
                } else if (row.pod) {
                  navigate(appLinks.services(search));
                }
              }}
            />
          )
        }
      </Panel>

      <Panel
        id="overview-services"
        title="Services — click to drill down"
        section={services}
        height={56}
        isEmpty={(d) => d.services.length === 0}
        emptyText="No traced services in this time range."
      >
        {(d) => (
          <div className={styles.services}>
            {d.services.map((s) => (
              <AppLink key={s.service} href={appLinks.service(s.service, search)} testId={testIds.overview.serviceLink(s.service)}>
                {s.service}
                <span className={styles.svcMeta}>
                  {' '}
                  {s.p99Ms !== null ? `P99 ${Math.round(s.p99Ms)} ms` : ''}
                  {s.errors ? ` · ${s.errors} errors` : ''}
                </span>
              </AppLink>
            ))}
          </div>
        )}
      </Panel>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  stats: css({ display: 'flex', gap: theme.spacing(1), minHeight: 80 }),
  full: css({ width: '100%' }),
  note: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  grid: css({ display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(420px, 1fr))', gap: theme.spacing(1) }),
  services: css({ display: 'flex', flexWrap: 'wrap', gap: theme.spacing(2), alignItems: 'center', height: '100%' }),
  svcMeta: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
});
