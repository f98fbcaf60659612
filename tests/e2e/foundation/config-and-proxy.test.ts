/**
 * The config page validates and saves the proxy settings, and a request through the plugin's data-proxy route
 * reaches the real backend proxy WITH the token (the route of the built plugin.json, rendered by the host).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';

import { startProxy } from '../../../backend-proxy/src/server';
import { HealthAnswer } from '../../../contract';
import type { RunningHost } from '../../host/server';
import {
  launchTestBrowser,
  openPage,
  screenshot,
  waitForHost,
  type PageProblems,
  type TestBrowser,
} from '../../support/browser';
import { configUrl, startTestHost } from '../../support/host';

const ids = {
  url: 'data-testid hopscope-config-proxy-url',
  urlError: 'data-testid hopscope-config-proxy-url-error',
  token: 'data-testid hopscope-config-proxy-token',
  submit: 'data-testid hopscope-config-submit',
  prometheusUid: 'data-testid hopscope-config-prometheus-uid',
  tempoUid: 'data-testid hopscope-config-tempo-uid',
};

/** Calls the data proxy from inside the page, as the app's api client does (same origin, no token of its own). */
function fetchInPage(page: Page, path: string): Promise<{ status: number; body: unknown }> {
  return page.evaluate(async (p) => {
    const res = await fetch(p, { headers: { accept: 'application/json' } });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  }, path);
}

describe('foundation: config page and data proxy', () => {
  const token = `hopscope-e2e-${process.pid}`;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let host: RunningHost;
  let browser: TestBrowser;
  let page: Page;
  let problems: PageProblems;

  before(async () => {
    proxy = await startProxy({ port: 0, token });
    // The host starts with a wrong URL and no token: the config page must fix both.
    host = await startTestHost({ proxyUrl: 'http://127.0.0.1:9' });
    browser = await launchTestBrowser();
    ({ page, problems } = await openPage(browser, configUrl(host)));
  });
  after(async () => {
    await browser?.close();
    await host?.close();
    await proxy?.close();
  });

  it('a malformed URL gets an inline message and is not saved', async () => {
    const input = page.getByTestId(ids.url);
    await input.fill('htp:/not a url');
    await page.getByTestId(ids.submit).click();
    const error = page.getByTestId(ids.urlError);
    await error.waitFor({ state: 'visible' });
    assert.match(await error.innerText(), /not a valid URL|must start with http/);
    assert.equal(host.settings.jsonData.proxyUrl, 'http://127.0.0.1:9', 'nothing was saved');
    await screenshot(page, 'config-invalid-url');

    await input.fill('ftp://example.com');
    await page.getByTestId(ids.submit).click();
    assert.match(await error.innerText(), /must start with http:\/\/ or https:\/\//);
    assert.equal(host.settings.jsonData.proxyUrl, 'http://127.0.0.1:9');
  });

  it('before saving, the route reaches nothing: 502 with a JSON error', async () => {
    const res = await fetchInPage(page, '/api/plugin-proxy/hopscope-rca-app/api/health');
    assert.equal(res.status, 502);
    assert.equal((res.body as { error: { code: string } }).error.code, 'proxy_unreachable');
    problems.clear();
  });

  it('a good URL and token are saved, survive a reload, and the token is never sent back', async () => {
    await page.getByTestId(ids.url).fill(`${proxy.url}/`);
    await page.getByTestId(ids.token).fill(token);
    await Promise.all([page.waitForEvent('load'), page.getByTestId(ids.submit).click()]);
    await waitForHost(page);
    assert.equal(host.settings.jsonData.proxyUrl, proxy.url, 'stored without the trailing slash');
    assert.equal(host.settings.secureJsonData.proxyToken, token);

    await page.reload();
    await waitForHost(page);
    assert.equal(await page.getByTestId(ids.url).inputValue(), proxy.url);
    // Grafana's SecretInput: a configured secret shows as "configured" with a Reset button, never the value.
    const tokenInput = page.getByTestId(ids.token);
    assert.equal(await tokenInput.inputValue(), 'configured');
    assert.equal(await tokenInput.isDisabled(), true);
    await page.getByRole('button', { name: 'Reset' }).waitFor({ state: 'visible' });
    const settings = await fetchInPage(page, '/api/plugins/hopscope-rca-app/settings');
    assert.equal(JSON.stringify(settings.body).includes(token), false, 'the settings API never returns the token');
    assert.deepEqual((settings.body as { secureJsonFields: unknown }).secureJsonFields, { proxyToken: true });
    await screenshot(page, 'config-saved');
    assert.deepEqual(problems.all(), []);
  });

  it('the Prometheus and Tempo data source uids (Explore targets) are checked, saved and kept', async () => {
    await page.getByTestId(ids.prometheusUid).fill('not a uid!');
    await page.getByTestId(ids.submit).click();
    await page.getByText('A data source uid is 1–40 letters').first().waitFor();
    assert.equal(host.settings.jsonData.prometheusDatasourceUid, undefined, 'nothing was saved');
    await page.getByTestId(ids.prometheusUid).fill('my-prometheus');
    await page.getByTestId(ids.tempoUid).fill('my-tempo');
    await Promise.all([page.waitForEvent('load'), page.getByTestId(ids.submit).click()]);
    await waitForHost(page);
    assert.equal(host.settings.jsonData.prometheusDatasourceUid, 'my-prometheus');
    assert.equal(host.settings.jsonData.tempoDatasourceUid, 'my-tempo');
    assert.equal(host.settings.jsonData.proxyUrl, proxy.url, 'the proxy URL is kept');
    assert.equal(await page.getByTestId(ids.prometheusUid).inputValue(), 'my-prometheus');
    assert.deepEqual(problems.all(), []);
  });

  it('a request through the plugin route reaches the proxy with the token', async () => {
    const res = await fetchInPage(page, '/api/plugin-proxy/hopscope-rca-app/api/health');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const health = HealthAnswer.safeParse(res.body);
    assert.ok(health.success, `the proxy's health answer matches the contract: ${JSON.stringify(res.body)}`);

    // The same call straight to the proxy, without the route's header, is refused: the token came from the route.
    const direct = await fetch(`${proxy.url}/api/health`);
    assert.equal(direct.status, 401);
    assert.ok((await direct.json()).error, '401 carries a JSON error');
  });

  it('a wrong token, set through the settings API, is refused by the proxy (401 passed through)', async () => {
    const saved = await page.evaluate(async () => {
      const res = await fetch('/api/plugins/hopscope-rca-app/settings', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secureJsonData: { proxyToken: 'wrong-token' } }),
      });
      return res.status;
    });
    assert.equal(saved, 200);
    const res = await fetchInPage(page, '/api/plugin-proxy/hopscope-rca-app/api/health');
    assert.equal(res.status, 401);
    assert.ok((res.body as { error?: unknown }).error, 'the proxy error body is passed through');
  });

  it('Reset clears the stored token (SecretInput), and the proxy then refuses the route', async () => {
    await page.reload();
    await waitForHost(page);
    await page.getByRole('button', { name: 'Reset' }).click();
    const tokenInput = page.getByTestId(ids.token);
    assert.equal(await tokenInput.isDisabled(), false);
    assert.equal(await tokenInput.inputValue(), '');
    await Promise.all([page.waitForEvent('load'), page.getByTestId(ids.submit).click()]);
    await waitForHost(page);
    assert.deepEqual(host.settings.secureJsonFields, {});
    assert.equal(host.settings.jsonData.proxyUrl, proxy.url, 'the URL is kept');
    const res = await fetchInPage(page, '/api/plugin-proxy/hopscope-rca-app/api/health');
    assert.equal(res.status, 401);
    problems.clear();
  });

  it('paths outside the routes are not forwarded (Grafana\'s 404 "plugin route match not found")', async () => {
    const res = await fetchInPage(page, '/api/plugin-proxy/hopscope-rca-app/metrics');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { message: 'plugin route match not found' });
  });
});
