/**
 * Overview: the golden metrics of the chain on one time range — a stat and a time series per metric (one golden
 * query shared by all of them, each panel its metric's part), the GPU activity heatmap (Grafana's heatmap panel: GPUs
 * × time, each row linking to its pod), the services to drill into, and the insights computed from the same data.
 * Crosshair and fault markers are the page's (features/shared/page.ts); dragging on a chart zooms the time range,
 * and "Explain this window" opens the root cause of the range brushed.
 */
import {
  PanelBuilders,
  SceneCSSGridLayout,
  SceneDataTransformer,
  SceneFlexItem,
  SceneFlexLayout,
  type SceneObject,
  type SceneQueryRunner,
  type VizPanel,
} from '@grafana/scenes';
import { BigValueColorMode, BigValueGraphMode, BigValueTextMode } from '@grafana/ui';

import { preloadOtherPages } from '../../components/App/lazyPages';
import { GOLDEN_METRICS, type GoldenMetricInfo } from '../../datasource/frames/golden';
import { hopscopeQuery, partRefId } from '../../datasource/query';
import { fitToData, hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { markWhenDrawn } from '../../scenes/whenDrawn';
import { INSIGHT_THRESHOLDS } from '../../transforms/insights';
import { ExplainWindowButton } from '../explain/ExplainWindowButton';
import { InsightsScene } from './InsightsScene';

/** Set once every panel of the Overview shows its answer (read by bench/app-render.bench.ts). */
export const OVERVIEW_READY_MARK = 'hopscope:overview:ready';

const GOLDEN = 'golden';
const SERVICES_TITLE = 'Services — P99, click one to drill down';
/** Every metric's combined series (refIds `golden:<metric>:combined`; filterByRefId takes a /regex/). */
const COMBINED = `/^${GOLDEN}:.*:combined$/`;

/**
 * The latest value of every golden metric, all backends together (each metric's combined series), side by side in
 * one stat panel: each value in its metric's unit, the P99 red past the insight's threshold.
 */
function latestPanel(): VizPanel {
  const builder = PanelBuilders.stat()
    .setTitle('Golden metrics — latest')
    .setDescription(
      'The latest value of each golden metric, all backends together: requests and tokens summed, P99s the highest, the KV-cache hit rate their mean.'
    )
    .setData(partOf(COMBINED))
    .setOption('reduceOptions', { calcs: ['lastNotNull'], values: false, fields: '' })
    .setOption('colorMode', BigValueColorMode.Value)
    .setOption('graphMode', BigValueGraphMode.None)
    .setOption('textMode', BigValueTextMode.ValueAndName)
    .setOption('text', { titleSize: 13, valueSize: 26 })
    .setNoValue('No data')
    .setThresholds({ mode: 'absolute' as never, steps: [{ value: -Infinity, color: 'text' }] })
    .setOverrides((b) =>
      b.matchFieldsWithName(GOLDEN_METRICS.find((m) => m.metric === 'e2e_p99_s')!.title).overrideThresholds({
        mode: 'absolute' as never,
        steps: [
          { value: -Infinity, color: 'text' },
          { value: INSIGHT_THRESHOLDS.p99Seconds, color: 'red' },
        ],
      })
    );
  return hopscopePanel(builder, { key: 'golden-latest' });
}

function timeseriesPanel(m: GoldenMetricInfo): VizPanel {
  const builder = PanelBuilders.timeseries()
    .setTitle(m.title)
    .setDescription(
      'Series by backend and model; the PromQL each one ran is in the panel menu (Inspect → Query, or Explore).'
    )
    .setUnit(m.unit)
    .setDecimals(m.decimals)
    .setData(partOf(partRefId(GOLDEN, m.metric)))
    .setCustomFieldConfig('fillOpacity', 8)
    .setCustomFieldConfig('lineWidth', 1)
    .setCustomFieldConfig('spanNulls', false)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return hopscopePanel(builder, { key: `timeseries-${m.metric}` });
}

function heatmapPanel(runner: SceneQueryRunner): VizPanel {
  const builder = PanelBuilders.heatmap()
    .setTitle('GPU activity per GPU')
    .setDescription(
      'Rows are GPUs or MIG instances, columns are time, colour is the activity of the DCGM field the proxy found (SM active, else graphics engine active, else GPU utilisation). No live source gives per-SM figures, so this is per GPU. Click a row to open its pod.'
    )
    .setData(runner)
    .setOption('calculate', false)
    .setOption('rowsFrame', { layout: 'unknown' as never })
    .setOption('color', {
      mode: 'scheme' as never,
      scheme: 'Turbo',
      steps: 64,
      min: 0,
      max: 1,
      exponent: 0.5,
      fill: 'dark-orange',
      reverse: false,
    })
    .setOption('cellValues', { unit: 'percentunit', decimals: 1 })
    .setOption('cellGap', 0)
    .setOption('yAxis', { axisPlacement: 'left' as never, reverse: false })
    .setOption('tooltip', { mode: 'single' as never, yHistogram: false, showColorScale: true })
    .setOption('legend', { show: true })
    .setOption('filterValues', { le: -Infinity })
    .setOption('exemplars', { color: 'orange' });
  return hopscopePanel(builder, { key: 'gpu-heatmap' });
}

/** Each service's P99 as a bar (the slowest first), each bar its drill-down link. */
function servicesPanel(runner: SceneQueryRunner): VizPanel {
  const builder = PanelBuilders.bargauge()
    .setTitle(SERVICES_TITLE)
    .setDescription(
      'P99 latency of each traced service in the range, slowest first; a bar opens the service (its pods and slowest traces).'
    )
    .setData(
      new SceneDataTransformer({
        $data: runner,
        transformations: [
          { id: 'sortBy', options: { sort: [{ field: 'P99', desc: true }] } },
          // The bar's value, the row's name and its link's path: the bars are the P99s.
          { id: 'filterFieldsByName', options: { include: { names: ['Service', 'servicePath', 'P99'] } } },
        ],
      })
    )
    .setOption('reduceOptions', { values: true, calcs: [], fields: '' })
    .setOption('orientation', 'horizontal' as never)
    .setOption('displayMode', 'gradient' as never)
    .setOption('namePlacement', 'left' as never)
    .setOption('showUnfilled', true)
    .setMin(0)
    .setThresholds({
      mode: 'absolute' as never,
      steps: [
        { value: -Infinity, color: 'green' },
        { value: INSIGHT_THRESHOLDS.p99Seconds * 1000, color: 'red' },
      ],
    })
    // Each bar named by its row's service (Grafana interpolates the row's fields in a display name).
    .setOverrides((b) => b.matchFieldsWithName('p99').overrideDisplayName('${__data.fields.service}'));
  return hopscopePanel(builder, { key: 'overview-services' });
}

export function overviewBody(): SceneObject {
  const heatmap = hopscopeRunner(hopscopeQuery('heatmap', {}));
  const services = hopscopeRunner(hopscopeQuery('services', {}));
  // Rows share the heatmap's height (14 px each, 120..480 px of plot) once the answer says how many GPUs there are.
  const heatmapItem = fitToData(new SceneFlexItem({ height: 320, body: heatmapPanel(heatmap) }), heatmap, (data) => {
    const rows = Math.max(0, (data.series[0]?.fields.length ?? 1) - 1);
    return rows ? Math.max(120, Math.min(480, rows * 14)) + 100 : undefined;
  });
  return new SceneFlexLayout({
    direction: 'column',
    // One golden query for every stat and chart of the page; each panel takes its metric's part.
    $data: hopscopeRunner(
      hopscopeQuery('golden', { backend: '$backend', model: '$model', service: '$service' }, GOLDEN)
    ),
    // The Overview is on screen: mark it (the bench reads the mark), then fetch the other pages' code while the user reads it.
    $behaviors: [markWhenDrawn(OVERVIEW_READY_MARK, preloadOtherPages)],
    children: [
      // Brushing a chart zooms the range; this offers its window root cause.
      new SceneFlexItem({ body: new ExplainWindowButton() }),
      new SceneFlexItem({ body: new InsightsScene({ heatmap: heatmap.getRef() }) }),
      new SceneFlexItem({ height: 110, body: latestPanel() }),
      new SceneFlexItem({
        body: new SceneCSSGridLayout({
          templateColumns: 'repeat(auto-fill, minmax(420px, 1fr))',
          autoRows: '240px',
          rowGap: 1,
          columnGap: 1,
          children: GOLDEN_METRICS.map((m) => timeseriesPanel(m)),
        }),
      }),
      heatmapItem,
      // One bar per service.
      fitToData(new SceneFlexItem({ height: 260, body: servicesPanel(services) }), services, (d) => {
        const rows = d.series[0]?.length;
        return rows ? 60 + rows * 30 : undefined;
      }),
    ],
  });
}
