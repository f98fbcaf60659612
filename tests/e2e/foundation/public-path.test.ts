/**
 * Grafana may serve a plugin from elsewhere than public/plugins/<id>/ (sub-path, CDN). module.js sets webpack's
 * public path from the AMD `module.uri`, so its lazy chunks must come from wherever module.js came from.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';

import { startProxy } from '../../../backend-proxy/src/server';
import type { RunningHost } from '../../host/server';
import { launchTestBrowser, openPage, type TestBrowser } from '../../support/browser';
import { appUrl, startTestHost } from '../../support/host';

let proxy: Awaited<ReturnType<typeof startProxy>>;
let host: RunningHost;
let browser: TestBrowser;

before(async () => {
  proxy = await startProxy({ port: 0 });
  host = await startTestHost({ proxyUrl: proxy.url, pluginBaseUrl: 'cdn/hopscope-rca-app/0.1.0' });
  browser = await launchTestBrowser();
});
after(async () => {
  await browser?.close();
  await host?.close();
  await proxy?.close();
});

it('lazy chunks load from the base module.js was served from', async () => {
  const { page, problems } = await openPage(browser);
  const scripts: string[] = [];
  page.on('request', (req) => {
    if (req.resourceType() === 'script') {
      scripts.push(new URL(req.url()).pathname);
    }
  });
  await page.goto(appUrl(host, 'overview'), { waitUntil: 'domcontentloaded' });
  await page.locator('h1', { hasText: 'Overview' }).first().waitFor({ state: 'visible', timeout: 30_000 });
  const pluginScripts = scripts.filter((p) => !p.startsWith('/public/host/'));
  assert.ok(
    pluginScripts.includes('/cdn/hopscope-rca-app/0.1.0/module.js'),
    `module.js from the CDN base: ${pluginScripts.join(', ')}`
  );
  const chunks = pluginScripts.filter((p) => !p.endsWith('/module.js'));
  assert.ok(chunks.length > 0, 'the app page is a lazy chunk');
  assert.deepEqual(
    chunks.filter((p) => !p.startsWith('/cdn/hopscope-rca-app/0.1.0/')),
    [],
    'every chunk from the same base'
  );
  assert.deepEqual(problems.all(), []);
});
