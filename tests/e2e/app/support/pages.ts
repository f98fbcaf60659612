/**
 * Browser helpers for the app's e2e: pages opened through the host with the CSS Grafana's own bundle provides
 * (uPlot's base stylesheet, loaded by Grafana's global styles and absent from the small host), and test-id lookups.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';

import { testIds } from '../../../../src/testIds';
import { openPage, waitForHost, type OpenedPage } from '../../../support/browser';
import { ROOT } from '../../../support/host';

const UPLOT_CSS = readFileSync(join(ROOT, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');

export async function openAppPage(browser: Browser, url?: string): Promise<OpenedPage> {
  const opened = await openPage(browser, undefined, { viewport: { width: 1440, height: 900 } });
  await opened.context.addInitScript(`(() => {
    const add = () => { const s = document.createElement('style'); s.dataset.grafanaCss = 'uplot'; s.textContent = ${JSON.stringify(UPLOT_CSS)}; document.head.appendChild(s); };
    if (document.head) { add(); } else { document.addEventListener('DOMContentLoaded', add); }
  })()`);
  if (url) {
    await opened.page.goto(url, { waitUntil: 'domcontentloaded' });
    await waitForHost(opened.page);
  }
  return opened;
}

export const byId = (page: Page, id: string) => page.getByTestId(id);

export { testIds };
