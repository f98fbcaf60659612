/**
 * Every app page opens in Chromium through the Grafana-compatible host, in both themes, without a console error,
 * an uncaught error or a failed request; a screenshot of each goes to artifacts/screenshots/<page>-<theme>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';

import { startProxy } from '../../../backend-proxy/src/server';
import type { RunningHost } from '../../host/server';
import { launchTestBrowser, screenshot, waitForHost, watchProblems, type TestBrowser } from '../../support/browser';
import { appUrl, startTestHost } from '../../support/host';

const PAGES = [
  { route: 'overview', title: 'Overview' },
  { route: 'services', title: 'Services' },
  { route: 'traces', title: 'Traces' },
  { route: 'compare', title: 'Compare' },
  { route: 'alerts', title: 'Alerts' },
];

describe('foundation: every page in both themes', () => {
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let host: RunningHost;
  let browser: TestBrowser;

  before(async () => {
    // The real backend proxy (no sources behind it): pages that call it get real answers, and a page whose calls
    // fail shows up here as console errors or failed requests.
    proxy = await startProxy({ port: 0 });
    host = await startTestHost({ proxyUrl: proxy.url });
    browser = await launchTestBrowser();
  });
  after(async () => {
    await browser?.close();
    await host?.close();
    await proxy?.close();
  });

  for (const theme of ['dark', 'light'] as const) {
    describe(`${theme} theme`, () => {
      let context: BrowserContext;
      before(async () => {
        // One context per theme: the host bundle is fetched once and cached, like a person browsing.
        context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      });
      after(async () => {
        await context?.close();
      });

      for (const { route, title } of PAGES) {
        it(`${route} opens without errors`, async () => {
          const page = await context.newPage();
          const problems = watchProblems(page);
          await page.goto(appUrl(host, route, { theme }), { waitUntil: 'domcontentloaded' });
          await waitForHost(page);
          await page.locator('h1', { hasText: title }).first().waitFor({ state: 'visible' });
          assert.equal(await page.locator('h1').first().innerText(), title);
          // The time picker is in the page header, and the scene wrote its time range into the URL.
          await page.getByTestId('data-testid TimePicker Open Button').waitFor({ state: 'visible' });
          const url = new URL(page.url());
          assert.equal(url.pathname, `/a/hopscope-rca-app/${route}`);
          assert.ok(url.searchParams.get('from'), 'from= in the URL');
          assert.ok(url.searchParams.get('to'), 'to= in the URL');
          // The theme really applied: Grafana's canvas colour differs between the two.
          const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          assert.equal(isDark(bg), theme === 'dark', `body background ${bg} does not match the ${theme} theme`);
          await page.waitForLoadState('networkidle');
          await screenshot(page, `${route}-${theme}`);
          assert.deepEqual(problems.all(), [], `problems on ${route} (${theme})`);
          await page.close();
        });
      }
    });
  }
});

function isDark(rgb: string): boolean {
  const [r, g, b] = (rgb.match(/\d+/g) ?? ['255', '255', '255']).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
}
