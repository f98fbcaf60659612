/**
 * One run (`/runs/:runId`): every panel a Scenes VizPanel over the data source, so inside Grafana each has Grafana's
 * panel menu. The page's time range is the run's window (start … end, or … now while it runs): the golden metrics
 * and client vs server TTFT over it, with the run's faults as annotations; the verdicts of its thresholds and
 * regression gate; the seed's baseline row (average TTFT, RAG recall, agent task completion); the slowest and the
 * failed requests, each one click from its trace's root cause; and "Compare with…" another run.
 */
import {
  dataLayers,
  PanelBuilders,
  SceneCSSGridLayout,
  SceneDataLayerSet,
  SceneFlexItem,
  SceneFlexLayout,
  SceneQueryRunner,
  type SceneObject,
  type VizPanel,
} from '@grafana/scenes';
import { BigValueColorMode, BigValueGraphMode, BigValueTextMode } from '@grafana/ui';

import { GOLDEN_METRICS } from '../../datasource/frames/golden';
import { HOPSCOPE_DATASOURCE, hopscopeQuery, partRefId } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { markWhenDrawn } from '../../scenes/whenDrawn';
import { ExplainWindowButton } from '../explain/ExplainWindowButton';
import { CompareWithScene } from './CompareWithScene';
import { liveWhileRunning } from './live';
import { RunCapacityScene } from './RunCapacityScene';
import { RunFallbackScene } from './RunFallbackScene';
import { RunHeader } from './RunHeader';

/** Set once the run page's panels show their answers. */
export const RUN_READY_MARK = 'hopscope:run:ready';

const RUN = 'run';
const GOLDEN = 'golden';
const TTFT = 'ttft';
const TTFT_REQUESTS = 'ttftRequests';
const RUN_GOLDEN = ['rps', 'e2e_p99_s', 'ttft_p99_s', 'error_rate'] as const;

/** The run's faults (from its record) as annotations on the time series of the runner that carries this layer. */
export function runFaultLayer(runId: string): SceneDataLayerSet {
  return new SceneDataLayerSet({
    layers: [
      new dataLayers.AnnotationsDataLayer({
        name: 'Run faults',
        query: {
          name: 'Run faults',
          enable: true,
          iconColor: 'orange',
          datasource: { ...HOPSCOPE_DATASOURCE },
          target: hopscopeQuery('run', { runId, parts: ['faults'] }, 'runFaults'),
        },
      }),
    ],
  });
}

/** A runner whose time series also get the run's faults. */
function annotatedRunner(runId: string, ...queries: Array<ReturnType<typeof hopscopeQuery>>): SceneQueryRunner {
  return new SceneQueryRunner({ datasource: { ...HOPSCOPE_DATASOURCE }, queries, $data: runFaultLayer(runId) });
}

// No panel-wide "no value": in a table it would fill every empty cell; an empty table says "No data".
const table = (title: string, refId: string, key: string, description: string): VizPanel =>
  hopscopePanel(
    PanelBuilders.table()
      .setTitle(title)
      .setDescription(description)
      .setData(partOf(refId))
      .setOption('cellHeight', 'sm' as never),
    { key }
  );

function summaryPanel(): VizPanel {
  const builder = PanelBuilders.stat()
    .setTitle('Run summary')
    .setDescription(
      'What the client measured over the whole run (hopscope-load): its verdict, duration, target and achieved rate, client TTFT P99, end-to-end P99, goodput against the SLOs and errors.'
    )
    .setData(partOf(RUN))
    .setOption('reduceOptions', { calcs: ['lastNotNull'], values: false, fields: '/.*/' })
    .setOption('colorMode', BigValueColorMode.Value)
    .setOption('graphMode', BigValueGraphMode.None)
    .setOption('textMode', BigValueTextMode.ValueAndName)
    .setThresholds({ mode: 'absolute' as never, steps: [{ value: -Infinity, color: 'text' }] })
    .setNoValue('—');
  return hopscopePanel(builder, { key: 'run-summary' });
}

function goldenPanel(metric: (typeof RUN_GOLDEN)[number]): VizPanel {
  const m = GOLDEN_METRICS.find((x) => x.metric === metric)!;
  const builder = PanelBuilders.timeseries()
    .setTitle(`${m.title} during the run`)
    .setDescription(
      "The chain's golden metric over the run's window (server side, by backend and model); the run's faults are marked."
    )
    .setUnit(m.unit)
    .setDecimals(m.decimals)
    .setData(partOf(partRefId(GOLDEN, metric)))
    .setCustomFieldConfig('fillOpacity', 8)
    .setCustomFieldConfig('spanNulls', false)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return hopscopePanel(builder, { key: `run-golden-${metric}` });
}

function ttftSeriesPanel(): VizPanel {
  const builder = PanelBuilders.timeseries()
    .setTitle('Client vs server TTFT')
    .setDescription(
      "P50 (dashed) and P99 of time to first token as the client measured it (hopscope-load, this run only) and as vLLM measured it (vllm:time_to_first_token_seconds, every request it served). The distance between the two is the gap: time spent before vLLM's clock starts."
    )
    .setUnit('ms')
    .setData(partOf(partRefId(TTFT, 'series')))
    .setCustomFieldConfig('spanNulls', true)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return hopscopePanel(builder, { key: 'run-ttft-series' });
}

export function runBody(runId: string, pinWindow: boolean): SceneObject {
  const record = hopscopeRunner(hopscopeQuery('run', { runId }, RUN));
  const header = new RunHeader({ runId, pinWindow });
  return new SceneFlexLayout({
    direction: 'column',
    $data: record,
    $behaviors: [
      markWhenDrawn(RUN_READY_MARK),
      // While the run runs, everything on the page follows it (its window grows to now).
      liveWhileRunning(
        record,
        (d) => d.series.find((f) => f.refId === RUN)?.fields.find((x) => x.name === 'status')?.values[0] === 'running'
      ),
    ],
    children: [
      new SceneFlexItem({ body: header }),
      // Brushing a chart of the run zooms the range; this offers its window root cause.
      new SceneFlexItem({ body: new ExplainWindowButton() }),
      new SceneFlexItem({ body: new RunCapacityScene({ runId }) }),
      new SceneFlexItem({ body: new RunFallbackScene({ runId }) }),
      new SceneFlexItem({ height: 120, body: summaryPanel() }),
      new SceneFlexLayout({
        direction: 'row',
        height: 220,
        children: [
          new SceneFlexItem({
            body: table(
              'Verdicts',
              partRefId(RUN, 'thresholds'),
              'run-verdicts',
              "The run's thresholds, and its regression gate against the baseline run when it had one: each rule, the actual figure and whether it passed."
            ),
          }),
          new SceneFlexItem({
            body: table(
              'Faults of the run',
              partRefId(RUN, 'faultList'),
              'run-faults',
              "The scenario's fault schedule as the load generator applied it through the chain's fault API; marked on the time series too."
            ),
          }),
        ],
      }),
      new SceneFlexItem({
        height: 110,
        body: table(
          'Baseline table',
          partRefId(RUN, 'quality'),
          'run-quality',
          "The seed's baseline figures of this run's scenario: average TTFT, RAG recall (retrieved ∩ expected document ids, for prompts that carry them) and agent task completion (the agent's own task outcome)."
        ),
      }),
      new SceneFlexItem({
        body: new SceneCSSGridLayout({
          $data: annotatedRunner(runId, hopscopeQuery('golden', {}, GOLDEN)),
          templateColumns: 'repeat(auto-fill, minmax(420px, 1fr))',
          autoRows: '220px',
          rowGap: 1,
          columnGap: 1,
          children: RUN_GOLDEN.map(goldenPanel),
        }),
      }),
      new SceneFlexLayout({
        direction: 'column',
        $data: annotatedRunner(runId, hopscopeQuery('runTtft', { runId }, TTFT)),
        children: [
          new SceneFlexLayout({
            direction: 'row',
            height: 280,
            children: [
              new SceneFlexItem({ width: '45%', body: ttftSeriesPanel() }),
              new SceneFlexItem({
                body: table(
                  'TTFT per clock',
                  partRefId(TTFT, 'layers'),
                  'run-ttft-layers',
                  "Each clock's count, mean and percentiles over the run's window (percentiles estimated from the histogram's buckets)."
                ),
              }),
            ],
          }),
          new SceneFlexItem({
            height: 240,
            body: table(
              "Where the client's TTFT goes",
              partRefId(TTFT, 'gap'),
              'run-ttft-gap',
              "The client's mean TTFT part by part (means add up, percentiles do not). A part a metric times says which; a remainder is the difference of two measured means, named for what lies between those two clocks."
            ),
          }),
        ],
      }),
      new SceneFlexLayout({
        direction: 'row',
        height: 300,
        $data: hopscopeRunner(hopscopeQuery('runTtftRequests', { runId }, TTFT_REQUESTS)),
        children: [
          new SceneFlexItem({
            width: '65%',
            body: table(
              'TTFT per request, decomposed',
              partRefId(TTFT_REQUESTS, 'requests'),
              'run-ttft-requests',
              "The client's TTFT of the run's slowest and failed requests, split along each trace: client→gateway network, the hops before the LLM, the engine's queue and prefill (from the engine's own span: vLLM's gen_ai.latency.*), and the first chunk's way back (the remainder). An empty cell is not known for that request; the notices say why."
            ),
          }),
          new SceneFlexItem({
            body: table(
              'TTFT per request, on average',
              partRefId(TTFT_REQUESTS, 'average'),
              'run-ttft-requests-average',
              'Each part’s mean over the slowest and failed requests that have it (the count says how many).'
            ),
          }),
        ],
      }),
      new SceneFlexLayout({
        direction: 'row',
        height: 340,
        children: [
          new SceneFlexItem({
            body: table(
              'Slowest requests',
              partRefId(RUN, 'slowest'),
              'run-slowest',
              "The slowest served requests of the run as the client timed them; click one to open its trace's root cause."
            ),
          }),
          new SceneFlexItem({
            body: table(
              'Failed requests',
              partRefId(RUN, 'failed'),
              'run-failed',
              "A sample of the run's failed and degraded requests with what went wrong; click one to open its trace's root cause."
            ),
          }),
        ],
      }),
      new SceneFlexItem({ body: new CompareWithScene({ runId }) }),
    ],
  });
}
