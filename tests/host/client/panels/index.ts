/**
 * The host's answer to `importPanelPlugin(id)`: Grafana's core panels are in Grafana's own bundle (not on npm), so the
 * host stands in for the ones the app uses with panels built from @grafana/ui's exports, honouring the options and
 * field config the app sets. Imported once each and cached, as Grafana caches panel plugins. Never shipped.
 */
import type { PanelPlugin } from '@grafana/data';

import { barGaugePanel } from './BarGaugePanel';
import { heatmapPanel } from './HeatmapPanel';
import { histogramPanel } from './HistogramPanel';
import { statPanel } from './StatPanel';
import { stateTimelinePanel } from './StateTimelinePanel';
import { tablePanel } from './TablePanel';
import { timeSeriesPanel } from './TimeSeriesPanel';

const FACTORIES: Record<string, () => PanelPlugin> = {
  timeseries: timeSeriesPanel as () => PanelPlugin,
  stat: statPanel as () => PanelPlugin,
  table: tablePanel as () => PanelPlugin,
  histogram: histogramPanel as () => PanelPlugin,
  heatmap: heatmapPanel as () => PanelPlugin,
  'state-timeline': stateTimelinePanel as () => PanelPlugin,
  bargauge: barGaugePanel as () => PanelPlugin,
};

const cache = new Map<string, PanelPlugin>();

export function importPanelPlugin(id: string): Promise<PanelPlugin> {
  const factory = FACTORIES[id];
  if (!factory) {
    return Promise.reject(
      new Error(`Panel plugin "${id}" is part of Grafana's own bundle and has no stand-in in the test host`)
    );
  }
  let plugin = cache.get(id);
  if (!plugin) {
    plugin = factory();
    cache.set(id, plugin);
  }
  return Promise.resolve(plugin);
}

export function getPanelPluginFromCache(id: string): PanelPlugin | undefined {
  return cache.get(id);
}
