/** Browser helpers for the app's e2e: pages opened through the host at a fixed viewport, and test-id lookups. */
import type { Page } from 'playwright-core';

import { testIds } from '../../../../src/testIds';
import { openPage, waitForHost, type OpenedPage, type TestBrowser } from '../../../support/browser';

export async function openAppPage(browser: TestBrowser, url?: string): Promise<OpenedPage> {
  const opened = await openPage(browser, undefined, { viewport: { width: 1440, height: 900 } });
  if (url) {
    await opened.page.goto(url, { waitUntil: 'domcontentloaded' });
    await waitForHost(opened.page);
  }
  return opened;
}

export const byId = (page: Page, id: string) => page.getByTestId(id);

export { testIds };
