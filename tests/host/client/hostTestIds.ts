/** Test ids of the host's own pages and stand-ins (not Grafana's): plain data, so Node tests import them. */
export const EXTENSION_POINT_IDS = {
  container: 'host extension point',
  link: (title: string) => `host extension link ${title}`,
} as const;

export const STAND_IN_IDS = {
  addToDashboard: 'host stand-in add-to-dashboard form',
  createAlert: 'host stand-in create-alert-from-panel',
  payload: 'host stand-in payload',
} as const;
