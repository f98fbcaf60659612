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
    icicle: id('icicle'),
    icicleCanvas: id('icicle-canvas'),
    icicleSelected: id('icicle-selected'),
    kernelTimeline: id('kernel-timeline'),
  },
  overview: {
    insight: (insight: string) => id(`insight-${insight}`),
    insightDismiss: (insight: string) => id(`insight-dismiss-${insight}`),
  },
  services: {
    breadcrumbs: id('breadcrumbs'),
  },
  traces: {
    searchInput: id('trace-search-input'),
    searchSubmit: id('trace-search-submit'),
    broken: id('rca-broken-propagation'),
    /** Where the root cause's kernel evidence came from, and what it could not see. */
    kernelEvidence: id('rca-kernel-evidence'),
    missing: id('rca-missing'),
    saveAnswer: id('rca-save-answer'),
    savedLink: id('rca-saved-link'),
    savedList: id('rca-saved-list'),
    /** The banner over a saved answer, and its link back to the live root cause. */
    savedBanner: id('rca-saved-banner'),
    liveLink: id('rca-live-link'),
    /** The answer's one-sentence verdict, at the top of a root-cause page. */
    verdict: id('rca-verdict'),
  },
  explain: {
    /** "Explain this window" on the Overview and a run's page: a link to the window root cause of the range. */
    button: id('explain-window'),
    /** The window's range and what the answer read (traces analysed, sampled or not). */
    about: id('explain-about'),
  },
  compare: {
    selectorA: id('compare-a'),
    selectorB: id('compare-b'),
    apply: id('compare-apply'),
  },
  alerts: {
    rules: id('alert-rules'),
    ruleToggle: (rule: string) => id(`alert-rule-toggle-${rule}`),
    ruleEdit: (rule: string) => id(`alert-rule-edit-${rule}`),
    newRule: id('alert-rule-new'),
    editor: id('alert-rule-editor'),
    editorError: id('alert-rule-editor-error'),
    save: id('alert-rule-save'),
    saveError: id('alert-rules-save-error'),
    conflict: id('alert-rules-conflict'),
    reload: id('alert-rules-reload'),
    stale: id('alert-rules-stale'),
    info: id('alert-rules-info'),
    version: id('alert-rules-version'),
    evaluator: id('alert-evaluator'),
    exportRules: id('alert-rules-export'),
    importRules: id('alert-rules-import'),
    importFile: id('alert-rules-import-file'),
  },
  runs: {
    filters: id('runs-filters'),
    header: id('run-header'),
    status: id('run-status'),
    overviewLink: id('run-overview-link'),
    tracesLink: id('run-traces-link'),
    capacity: id('run-capacity'),
    saturation: id('run-saturation'),
    fallback: id('run-fallback'),
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
