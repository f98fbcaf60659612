/**
 * Links in from Grafana: the host renders the links plugins add to an extension point (its /host/extension-point
 * page, through @grafana/runtime's usePluginLinks, with the context shapes Grafana passes) and a click opens the app
 * where the link says — the trace view's "Root cause in Hopscope" on that trace's ranked causes, a dashboard panel's
 * on the Overview at the panel's range — with Back returning to where the link was. Known data: the stand-in proxy.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';

import type { RunningHost } from '../../host/server';
import { EXTENSION_POINT_IDS } from '../../host/client/hostTestIds';
import { FROM, NOW, startStandInProxy, TRACE_ID, type StandInProxy } from '../../host/standInProxy';
import {
  CHROMIUM_PATH,
  launchTestBrowser,
  openPage,
  waitForHost,
  type PageProblems,
  type TestBrowser,
} from '../../support/browser';
import { startTestHost } from '../../support/host';

const skip = existsSync(CHROMIUM_PATH) ? false : `no Chromium at ${CHROMIUM_PATH}`;
const LINK = 'Root cause in Hopscope';

let proxy: StandInProxy;
let host: RunningHost;
let browser: TestBrowser;

before(async () => {
  if (skip) {
    return;
  }
  proxy = await startStandInProxy();
  host = await startTestHost({ proxyUrl: proxy.url });
  browser = await launchTestBrowser();
});

after(async () => {
  await browser?.close();
  await host?.close();
  await proxy?.close();
});

/** Grafana's trace view context for the stand-in's trace: `{ ...trace, datasource }`, times in µs. */
const traceViewContext = (traceID = TRACE_ID.toUpperCase()) => ({
  traceID,
  traceName: 'gateway: gateway op',
  startTime: (NOW - 10_000) * 1000,
  endTime: NOW * 1000,
  duration: 10_000 * 1000,
  spans: [],
  processes: {},
  services: [{ name: 'gateway', numberOfSpans: 1 }],
  datasource: { name: 'Tempo', uid: 'hopscope-tempo', type: 'tempo' },
});

async function extensionPoint(
  id: string,
  context: unknown
): Promise<{ page: Page; problems: PageProblems; close(): Promise<void> }> {
  const { page, problems, context: browserContext } = await openPage(browser);
  const url = new URL('/host/extension-point', host.url);
  url.searchParams.set('id', id);
  url.searchParams.set('context', JSON.stringify(context));
  await page.goto(url.toString(), { waitUntil: 'domcontentloaded' });
  await waitForHost(page);
  await page.getByTestId(EXTENSION_POINT_IDS.container).waitFor();
  return { page, problems, close: () => browserContext.close() };
}

describe("the app's links on Grafana's extension points", { skip }, () => {
  test("trace view header → 'Root cause in Hopscope' opens that trace's ranked causes on its window; Back returns", async () => {
    const { page, problems, close } = await extensionPoint('grafana/traceview/header/actions', traceViewContext());
    try {
      const link = page.getByTestId(EXTENSION_POINT_IDS.link(LINK));
      const href = new URL((await link.getAttribute('href'))!, host.url);
      assert.equal(href.pathname, `/a/hopscope-rca-app/traces/${TRACE_ID}`);
      assert.equal(Number(href.searchParams.get('from')), NOW - 10_000 - 5 * 60_000);
      assert.equal(Number(href.searchParams.get('to')), NOW + 5 * 60_000);
      assert.equal(
        href.searchParams.get('uel_epid'),
        'grafana/traceview/header/actions',
        "Grafana's tracking parameters are added"
      );
      await link.click();
      // The trace page, on the trace the link named: its ranked causes, rag first (the stand-in's answer).
      const rca = page.getByTestId('data-testid Panel header Root cause: the hops that explain the delay, ranked');
      await rca.getByRole('row').nth(1).waitFor({ timeout: 30_000 });
      assert.match(await rca.getByRole('row').nth(1).innerText(), /rag/);
      assert.equal(new URL(page.url()).pathname, `/a/hopscope-rca-app/traces/${TRACE_ID}`);
      await page.goBack();
      await page.getByTestId(EXTENSION_POINT_IDS.link(LINK)).waitFor();
      await page.goForward();
      await rca.waitFor();
      assert.deepEqual(problems.all(), []);
    } finally {
      await close();
    }
  });

  test("a dashboard panel menu → the link opens the Overview on the panel's (absolute) range", async () => {
    const panelContext = {
      pluginId: 'timeseries',
      id: 4,
      title: 'End-to-end latency P99',
      timeRange: { from: { $dateTime: FROM }, to: { $dateTime: NOW } },
      timeZone: 'browser',
      dashboard: { uid: 'hopscope-golden', title: 'Hopscope — golden metrics', tags: ['hopscope'] },
      targets: [{ refId: 'A', datasource: { type: 'prometheus', uid: 'hopscope-prometheus' }, expr: 'up' }],
      scopedVars: { service: { value: 'rag', text: 'rag' } },
    };
    const { page, problems, close } = await extensionPoint('grafana/dashboard/panel/menu', panelContext);
    try {
      await page.getByTestId(EXTENSION_POINT_IDS.link(LINK)).click();
      await page.waitForFunction(() => performance.getEntriesByName('hopscope:overview:ready').length > 0, undefined, {
        timeout: 30_000,
      });
      const url = new URL(page.url());
      assert.equal(url.pathname, '/a/hopscope-rca-app/overview');
      // (The page's time range writes an absolute range back as ISO times.)
      assert.equal(new Date(url.searchParams.get('from')!).getTime() || Number(url.searchParams.get('from')), FROM);
      assert.equal(new Date(url.searchParams.get('to')!).getTime() || Number(url.searchParams.get('to')), NOW);
      assert.equal(url.searchParams.get('var-service'), 'rag', "the repeated panel's service");
      assert.deepEqual(problems.all(), []);
    } finally {
      await close();
    }
  });

  test('no link where its configure says no: a trace view without a valid trace id, another extension point', async () => {
    for (const [id, context] of [
      ['grafana/traceview/header/actions', traceViewContext('not-a-trace-id')],
      ['grafana/explore/toolbar/action', traceViewContext()],
    ] as const) {
      const { page, problems, close } = await extensionPoint(id, context);
      try {
        await page.getByText('No plugin adds a link here for this context').waitFor();
        assert.equal(await page.getByTestId(EXTENSION_POINT_IDS.link(LINK)).count(), 0, id);
        assert.deepEqual(problems.all(), []);
      } finally {
        await close();
      }
    }
  });
});
