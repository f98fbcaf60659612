/** `data-testid`s of the host's stand-in panels (what e2e tests look inside a panel for; Grafana's own differ). */
const id = (s: string) => `data-testid host-panel-${s}`;

export const hostPanelIds = {
  timeseries: id('timeseries'),
  timeseriesTooltip: id('timeseries-tooltip'),
  stat: id('stat'),
  bargauge: id('bargauge'),
  table: id('table'),
  histogram: id('histogram'),
  heatmap: id('heatmap'),
  heatmapCanvas: id('heatmap-canvas'),
  heatmapTooltip: id('heatmap-tooltip'),
  heatmapCrosshair: id('heatmap-crosshair'),
  heatmapRow: (name: string) => id(`heatmap-row-${name}`),
  stateTimeline: id('state-timeline'),
} as const;
