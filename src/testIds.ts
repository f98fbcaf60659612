/**
 * `data-testid` values shared by the app and its end-to-end tests: the tests find elements by these, never by text
 * or CSS, so a copy change does not break them. Grouped by view; functions take the id of the thing they mark.
 */
const id = (s: string): string => `data-testid hopscope-${s}`;

export const testIds = {
  appConfig: {
    container: 'data-testid hopscope-config',
    proxyUrl: 'data-testid hopscope-config-proxy-url',
    proxyUrlError: 'data-testid hopscope-config-proxy-url-error',
    proxyToken: 'data-testid hopscope-config-proxy-token',
    prometheusUid: 'data-testid hopscope-config-prometheus-uid',
    tempoUid: 'data-testid hopscope-config-tempo-uid',
    submit: 'data-testid hopscope-config-submit',
    saved: 'data-testid hopscope-config-saved',
  },
  page: {
    container: (page: string) => `data-testid hopscope-page-${page}`,
  },
  /** The panel chrome the app adds to Grafana's (PanelChrome's own ids name a panel by its title). */
  panel: {
    notices: (severity: string) => id(`panel-notices-${severity}`),
  },
  inspect: {
    drawer: id('inspect'),
    tab: (tab: string) => id(`inspect-tab-${tab}`),
    data: id('inspect-data'),
    table: id('inspect-table'),
    query: id('inspect-query'),
    json: id('inspect-json'),
  },
  viz: {
    heatmap: id('heatmap'),
    heatmapCanvas: id('heatmap-canvas'),
    heatmapTooltip: id('heatmap-tooltip'),
    heatmapCrosshair: id('heatmap-crosshair'),
    heatmapRow: (row: string) => id(`heatmap-row-${row}`),
    icicle: id('icicle'),
    icicleCanvas: id('icicle-canvas'),
    icicleSelected: id('icicle-selected'),
    kernelTimeline: id('kernel-timeline'),
    histogram: id('histogram'),
    timeseries: (name: string) => id(`timeseries-${name}`),
    stat: (name: string) => id(`stat-${name}`),
  },
  state: {
    loading: (panel: string) => id(`loading-${panel}`),
    empty: (panel: string) => id(`empty-${panel}`),
    error: (panel: string) => id(`error-${panel}`),
    panel: (panel: string) => id(`panel-${panel}`),
  },
  overview: {
    insight: (insight: string) => id(`insight-${insight}`),
    insightDismiss: (insight: string) => id(`insight-dismiss-${insight}`),
    serviceLink: (service: string) => id(`overview-service-${service}`),
  },
  services: {
    table: id('services-table'),
    serviceLink: (service: string) => id(`service-link-${service}`),
    podLink: (pod: string) => id(`pod-link-${pod}`),
    breadcrumbs: id('breadcrumbs'),
    kernelEvents: id('kernel-events'),
    eventTraceLink: (traceId: string) => id(`event-trace-${traceId}`),
    slowTraces: id('slow-traces'),
  },
  traces: {
    searchInput: id('trace-search-input'),
    searchSubmit: id('trace-search-submit'),
    list: id('trace-list'),
    traceLink: (traceId: string) => id(`trace-link-${traceId}`),
    candidates: id('rca-candidates'),
    candidate: (rank: number) => id(`rca-candidate-${rank}`),
    broken: id('rca-broken-propagation'),
    missing: id('rca-missing'),
  },
  compare: {
    selectorA: id('compare-a'),
    selectorB: id('compare-b'),
    apply: id('compare-apply'),
    stats: id('compare-stats'),
  },
  alerts: {
    rules: id('alert-rules'),
    ruleToggle: (rule: string) => id(`alert-rule-toggle-${rule}`),
    ruleEdit: (rule: string) => id(`alert-rule-edit-${rule}`),
    newRule: id('alert-rule-new'),
    editor: id('alert-rule-editor'),
    editorError: id('alert-rule-editor-error'),
    save: id('alert-rule-save'),
    list: id('alerts-list'),
    alertLink: (alert: string) => id(`alert-link-${alert}`),
  },
  runs: {
    filters: id('runs-filters'),
    header: id('run-header'),
    status: id('run-status'),
    overviewLink: id('run-overview-link'),
    tracesLink: id('run-traces-link'),
    compareWith: id('run-compare-with'),
    anyScenario: id('run-compare-any-scenario'),
    compareClear: id('run-compare-clear'),
    selector: id('run-selector'),
    selectorLink: id('run-selector-link'),
  },
  export: {
    button: id('export-postmortem'),
    done: id('export-done'),
    error: id('export-error'),
  },
} as const;
