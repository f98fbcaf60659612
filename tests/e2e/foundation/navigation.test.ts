/**
 * Navigation through the host's menu, the browser's back/forward, the bare app URL redirect, and the time range
 * carried by the URL (a link with from/to opens that range; changing it in the picker writes it back).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';

import { startProxy } from '../../../backend-proxy/src/server';
import type { RunningHost } from '../../host/server';
import { launchTestBrowser, openPage, screenshot, type PageProblems, type TestBrowser } from '../../support/browser';
import { appUrl, startTestHost } from '../../support/host';

async function expectPage(page: Page, route: string, title: string): Promise<void> {
  await page.waitForURL((u) => u.pathname === `/a/hopscope-rca-app/${route}`);
  await page.locator('h1', { hasText: title }).first().waitFor({ state: 'visible' });
  assert.equal(await page.locator('h1').first().innerText(), title);
  const current = page.getByTestId('data-testid host-nav').locator('[aria-current="page"]');
  assert.equal(await current.innerText(), title, 'the menu marks the current page');
  const crumb = page.getByTestId('data-testid host-top-bar').locator('[aria-current="page"]');
  assert.equal(await crumb.innerText(), title, 'the breadcrumb ends with the page (from PluginPage pageNav)');
}

describe('foundation: navigation', () => {
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let host: RunningHost;
  let browser: TestBrowser;
  let page: Page;
  let problems: PageProblems;

  before(async () => {
    proxy = await startProxy({ port: 0 });
    host = await startTestHost({ proxyUrl: proxy.url });
    browser = await launchTestBrowser();
    ({ page, problems } = await openPage(browser, appUrl(host)));
  });
  after(async () => {
    await browser?.close();
    await host?.close();
    await proxy?.close();
  });

  it('the bare app URL opens the Overview', async () => {
    await expectPage(page, 'overview', 'Overview');
  });

  it('menu links navigate, and back/forward retrace the steps', async () => {
    const nav = page.getByTestId('data-testid host-nav');
    await nav.getByText('Services', { exact: true }).click();
    await expectPage(page, 'services', 'Services');
    await nav.getByText('Traces', { exact: true }).click();
    await expectPage(page, 'traces', 'Traces');
    await nav.getByText('Alerts', { exact: true }).click();
    await expectPage(page, 'alerts', 'Alerts');

    await page.goBack();
    await expectPage(page, 'traces', 'Traces');
    await page.goBack();
    await expectPage(page, 'services', 'Services');
    await page.goForward();
    await expectPage(page, 'traces', 'Traces');
    await page.goForward();
    await expectPage(page, 'alerts', 'Alerts');
    assert.deepEqual(problems.all(), []);
  });

  it('a link with a time range opens that range, and the picker writes a new one into the URL', async () => {
    await page.goto(appUrl(host, 'compare', { query: { from: 'now-6h', to: 'now' } }));
    await expectPage(page, 'compare', 'Compare');
    const picker = page.getByTestId('data-testid TimePicker Open Button');
    // The picker shows the scene's SceneTimeRange, which read the URL.
    assert.match(await picker.innerText(), /Last 6 hours/);

    await picker.click();
    await page.getByText('Last 24 hours', { exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get('from') === 'now-24h');
    assert.match(await picker.innerText(), /Last 24 hours/);
    // Changing the range is a history step: back returns to the 6 hour view.
    await page.goBack();
    await page.waitForURL((u) => u.searchParams.get('from') === 'now-6h');
    await page.waitForFunction(() =>
      /Last 6 hours/.test(
        document.querySelector('[data-testid="data-testid TimePicker Open Button"]')?.textContent ?? ''
      )
    );
    await screenshot(page, 'navigation-compare-6h');
    assert.deepEqual(problems.all(), []);
  });
});
