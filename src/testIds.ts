import { appTestIds } from './features/testIds';

/**
 * `data-testid` values shared by the app and its end-to-end tests: the tests find elements by these, never by text
 * or CSS, so a copy change does not break them.
 */
export const testIds = {
  appConfig: {
    container: 'data-testid hopscope-config',
    proxyUrl: 'data-testid hopscope-config-proxy-url',
    proxyUrlError: 'data-testid hopscope-config-proxy-url-error',
    proxyToken: 'data-testid hopscope-config-proxy-token',
    submit: 'data-testid hopscope-config-submit',
    saved: 'data-testid hopscope-config-saved',
  },
  page: {
    container: (page: string) => `data-testid hopscope-page-${page}`,
    placeholder: (page: string) => `data-testid hopscope-placeholder-${page}`,
  },
  // The views' own ids (issue 6).
  ...appTestIds,
} as const;
