/** The URL keys of the panel inspector, as Grafana names them (`?inspect=<panel key>&inspectTab=data`). */
export const INSPECT_KEYS = { panel: 'inspect', tab: 'inspectTab' } as const;
export const INSPECT_TABS = ['data', 'query', 'json'] as const;
export type InspectTab = (typeof INSPECT_TABS)[number];
