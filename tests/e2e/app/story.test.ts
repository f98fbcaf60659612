/**
 * The incident story through the host, with the real chain under load, a real Prometheus and the real proxy:
 * Overview → inject a fault on `rag` through the chain's API → see the spike → service → pod → kernel evidence →
 * a slow trace → its root cause ranks the injected hop first → back/forward → export PNG + Markdown. Then every view
 * in both themes is screenshotted, and a dead source degrades one panel, not the page.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';

import { launchBrowser, SCREENSHOT_DIR } from '../../support/browser';
import { appUrl } from '../../support/host';
import { openAppPage, testIds } from './support/pages';
import { hostPanelIds, notices, panel, serviceBar, serviceP99Ms, settled, tableRows } from './support/panels';
import { startStack, waitFor, type Stack } from './support/stack';

const hasChromium = (() => {
  try {
    readFileSync('/usr/bin/chromium');
    return true;
  } catch {
    return false;
  }
})();
const skip = hasChromium ? false : 'no /usr/bin/chromium';

let stack: Stack;
let browser: Browser;
const RANGE = { from: 'now-10m', to: 'now' };
const visited: Record<string, string> = {};

before(async () => {
  if (skip) {
    return;
  }
  stack = await startStack({ rps: 6 });
  browser = await launchBrowser();
  // Healthy traffic first: the root-cause engine compares each hop with its recent healthy baseline.
  await waitFor('healthy traces in the proxy', async () => {
    const r = await (await fetch(`${stack.proxy.url}/api/traces?from=now-5m&to=now&limit=100`)).json();
    return r.traces?.length >= 40;
  }, 60_000);
  await waitFor('Prometheus scrapes of the chain', async () => {
    const r = await (await fetch(`${stack.prometheus.url}/api/v1/query?query=${encodeURIComponent('count_over_time(up[1m])')}`)).json();
    return Number(r.data?.result?.[0]?.value?.[1] ?? 0) >= 4;
  }, 30_000);
});

after(async () => {
  await browser?.close();
  await stack?.close();
});

async function expectNoProblems(problems: { all(): string[] }, where: string): Promise<void> {
  assert.deepEqual(problems.all(), [], `console/page errors on ${where}`);
}

const pathAndQuery = (page: Page): URL => new URL(page.url());

/** Waits until no panel is loading (Grafana panels' loading bars), then writes artifacts/screenshots/app-<name>-<theme>.png. */
async function settleAndShoot(page: Page, name: string, theme: 'dark' | 'light'): Promise<void> {
  await page.getByTestId(testIds.page.container(name)).waitFor();
  await page.locator('[data-testid^="data-testid Panel header"]').first().waitFor();
  const loading = '[aria-label="Panel loading bar"]';
  await waitFor(`${name} loaded`, async () => (await page.locator(loading).count()) === 0, 20_000, 200);
  await page.waitForTimeout(300);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `app-${name}-${theme}.png`), fullPage: true });
}

/** Clicks "Export for postmortem" and returns the two downloads (PNG checked for its signature, Markdown as text). */
async function exportView(page: Page): Promise<{ pngName: string; md: string }> {
  const downloads: Array<{ name: string; path: string }> = [];
  const onDownload = async (d: import('playwright-core').Download): Promise<void> => {
    downloads.push({ name: d.suggestedFilename(), path: (await d.path()) ?? '' });
  };
  page.on('download', onDownload);
  try {
    await page.getByTestId(testIds.export.button).click();
    await page.getByTestId(testIds.export.done).waitFor({ timeout: 60_000 });
    await waitFor('two downloads', async () => downloads.length === 2 && downloads.every((d) => d.path), 10_000, 100);
  } finally {
    page.off('download', onDownload);
  }
  const png = downloads.find((d) => d.name.endsWith('.png'))!;
  const md = downloads.find((d) => d.name.endsWith('.md'))!;
  assert.deepEqual([...readFileSync(png.path).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
  return { pngName: png.name, md: readFileSync(md.path, 'utf8') };
}

async function screenshotBothThemes(name: string, raw: string, query: Record<string, string> = {}): Promise<void> {
  for (const theme of ['dark', 'light'] as const) {
    const url = new URL(raw);
    url.searchParams.set('theme', theme);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const { page, problems, context } = await openAppPage(browser, url.toString());
    try {
      await settleAndShoot(page, name, theme);
      await expectNoProblems(problems, `${name} (${theme})`);
    } finally {
      await context.close();
    }
  }
}

test('the incident story: overview → fault → service → pod → kernel evidence → slow trace → root cause → back/forward → export', { skip }, async () => {
  const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'overview', { query: RANGE }));
  try {
    // Overview: golden stats from Prometheus, the heatmap says "per GPU", its tooltip names GPU, host, pod and field.
    const latest = panel(page, 'Golden metrics — latest').getByTestId(hostPanelIds.stat);
    await waitFor('an RPS figure', async () => /^Requests \/ s: [\d.]+ req\/s$/.test((await latest.locator('[aria-label]').first().getAttribute('aria-label').catch(() => '')) ?? ''), 20_000);
    const canvas = page.getByTestId(hostPanelIds.heatmapCanvas);
    await canvas.waitFor();
    assert.match(await notices(page, 'GPU activity per GPU', 'info'), /per-SM.*DCGM_FI_/);
    const box = (await canvas.boundingBox())!;
    await canvas.hover({ position: { x: box.width - 3, y: 3 } });
    const tip = page.getByTestId(hostPanelIds.heatmapTooltip);
    await tip.waitFor();
    const tipText = await tip.innerText();
    assert.match(tipText, /GPU \d/);
    assert.match(tipText, /host: gpu-node-\d/);
    assert.match(tipText, /field: DCGM_FI_/);

    // Inject the fault through the chain's own API, and wait until slow traces reach the proxy.
    const fault = await fetch(`${stack.chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Short, so the proxy's baseline (the most recent healthy traces) stays mostly pre-fault traffic.
      body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 1500, durationS: 10 }),
    });
    assert.equal(fault.status, 201);
    await waitFor('slow traces after the fault', async () => {
      const r = await (await fetch(`${stack.proxy.url}/api/traces?from=now-2m&to=now&minDurationMs=1400`)).json();
      return r.traces?.length >= 5;
    }, 60_000);

    // The spike: reload the overview (as the refresh picker would); rag's P99 is now above a second.
    await page.reload({ waitUntil: 'domcontentloaded' });
    const ragLink = serviceBar(page, 'rag');
    await ragLink.waitFor();
    await waitFor('rag P99 above 1 s on the overview', async () => (await serviceP99Ms(page, 'rag')) > 1000, 15_000);
    // The fault is drawn as a marker on the charts (from the chain's fault API, through the proxy's annotations).
    const rpsChart = panel(page, 'Requests / s').getByTestId(hostPanelIds.timeseries);
    await waitFor('the fault as an annotation', async () => Number(await rpsChart.getAttribute('data-annotations')) >= 1, 15_000);
    visited.overview = page.url();

    // service → its pods
    await ragLink.click();
    await page.getByTestId(testIds.page.container('service')).waitFor();
    const serviceUrl = pathAndQuery(page);
    assert.equal(serviceUrl.pathname, '/a/hopscope-rca-app/services/rag');
    assert.equal(serviceUrl.searchParams.get('from'), 'now-10m', 'the time range follows the drill-down');
    visited.service = page.url();
    const podLinks = panel(page, 'Pods of rag').getByRole('link');
    await podLinks.first().waitFor();
    const pod = (await podLinks.first().innerText()).trim();
    assert.match(pod, /^rag-[0-9a-f]{5}-\d$/);

    // pod → kernel evidence (the panel answers: events, or an honest empty/error state) and its slowest traces
    await podLinks.first().click();
    await page.getByTestId(testIds.page.container('pod')).waitFor();
    assert.equal(pathAndQuery(page).pathname, `/a/hopscope-rca-app/services/rag/pods/${pod}`);
    visited.pod = page.url();
    await settled(page, `Kernel evidence on ${pod}`);
    await panel(page, `Kernel evidence on ${pod}`).getByTestId(testIds.viz.kernelTimeline).waitFor();
    const slow = panel(page, 'Slowest traces through rag').getByRole('link');
    await slow.first().waitFor();

    // a slow trace → its root cause ranks the injected hop first
    await slow.first().click();
    await page.getByTestId(testIds.page.container('trace')).waitFor();
    assert.match(pathAndQuery(page).pathname, /^\/a\/hopscope-rca-app\/traces\/[0-9a-f]{32}$/);
    visited.trace = page.url();
    const candidates = 'Root cause: the hops that explain the delay, ranked';
    await settled(page, candidates);
    const ranked = await tableRows(page, candidates);
    assert.equal(ranked[0]?.['#'], '1');
    assert.equal(ranked[0]?.Service, 'rag', 'the injected hop is ranked first');
    await page.getByTestId(testIds.viz.icicleCanvas).waitFor();
    // The trace view is screenshotted now, while the ranking above is what the reader sees (later, the faulty traffic
    // becomes the "recent" baseline and the scores shift).
    await screenshotBothThemes('trace', page.url());

    // back/forward through the drill-down
    await page.goBack();
    await page.getByTestId(testIds.page.container('pod')).waitFor();
    assert.equal(page.url(), visited.pod);
    await page.goBack();
    await page.getByTestId(testIds.page.container('service')).waitFor();
    assert.equal(page.url(), visited.service);
    await page.goForward();
    await page.getByTestId(testIds.page.container('pod')).waitFor();
    await page.goForward();
    await page.getByTestId(testIds.page.container('trace')).waitFor();
    assert.equal(page.url(), visited.trace);

    // export for the postmortem: a PNG and a Markdown file, both from the proxy
    const traceId = pathAndQuery(page).pathname.split('/').pop()!;
    const out = await exportView(page);
    assert.match(out.pngName, new RegExp(`^hopscope-traces-${traceId}-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d\\.png$`));
    assert.match(out.md, /\| 1 \| rag \|/, 'the Markdown ranks rag first');
    assert.ok(out.md.includes(traceId), 'the Markdown names the trace');

    // the pod view's export names its slowest traces, so the Markdown carries their ranked causes too
    await page.goto(visited.pod, { waitUntil: 'domcontentloaded' });
    await panel(page, 'Slowest traces through rag').getByRole('link').first().waitFor();
    const podOut = await exportView(page);
    assert.match(podOut.pngName, /^hopscope-services-rag-pods-rag-/);
    assert.match(podOut.md, /\| 1 \| rag \|/);

    await expectNoProblems(problems, 'the story');
  } finally {
    await context.close();
  }
});

test('trace search: a bad id gets a clear message, a good one opens its root cause; filters are URL state', { skip }, async () => {
  const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'traces', { query: { ...RANGE, minDurationMs: '1400' } }));
  try {
    const links = panel(page, 'Traces, slowest first').getByRole('link');
    await links.first().waitFor();
    const id = (await links.first().getAttribute('href'))!.split('/traces/')[1].split('?')[0];
    await page.getByTestId(testIds.traces.searchInput).fill('not-a-trace');
    await page.getByTestId(testIds.traces.searchSubmit).click();
    await page.getByText('A trace id is 32 hexadecimal digits').waitFor();
    await page.getByTestId(testIds.traces.searchInput).fill(id.toUpperCase());
    await page.getByTestId(testIds.traces.searchSubmit).click();
    await page.getByTestId(testIds.page.container('trace')).waitFor();
    assert.equal(new URL(page.url()).pathname, `/a/hopscope-rca-app/traces/${id}`);

    // Keyboard: the icicle takes focus, arrows move along the tree, Enter selects; the selection is URL state.
    const icicle = page.getByTestId(testIds.viz.icicleCanvas);
    await icicle.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.getByTestId(testIds.viz.icicleSelected).waitFor();
    const span = new URL(page.url()).searchParams.get('span');
    assert.match(span ?? '', /^[0-9a-f]{16}$/, 'the selected span is in the URL');
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.getByTestId(testIds.viz.icicleSelected).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('span'), span, 'a pasted link opens the same span');

    // Keyboard: a breadcrumb is a link reachable by focus and followed with Enter.
    await page.getByTestId(testIds.services.breadcrumbs).getByRole('link', { name: 'Traces' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId(testIds.page.container('traces')).waitFor();
    visited.traces = appUrl(stack.host, 'traces', { query: { ...RANGE, minDurationMs: '1400' } });
    await expectNoProblems(problems, 'trace search');
  } finally {
    await context.close();
  }
});

test('alerts: a rule with mistakes is refused with one message per mistake, a fixed one is saved and can be disabled', { skip }, async () => {
  const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'alerts', { query: RANGE }));
  try {
    await page.getByTestId(testIds.alerts.newRule).click();
    const editor = page.getByTestId(testIds.alerts.editor);
    const area = editor.getByLabel('Rule JSON');
    const bad = { id: 'bad id!', name: '', conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500 }], withinMs: 5000 };
    await area.fill(JSON.stringify(bad));
    await page.getByTestId(testIds.alerts.save).click();
    const err = page.getByTestId(testIds.alerts.editorError);
    await err.waitFor();
    const msg = await err.innerText();
    assert.match(msg, /id: The id must be/);
    assert.match(msg, /name:/);
    await area.fill(JSON.stringify({ ...bad, id: 'e2e-rule', name: 'E2E slow TLS', conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500 }] }));
    await page.getByTestId(testIds.alerts.save).click();
    await waitFor('the semantic check', async () => /needs "consecutive"/.test(await err.innerText()), 5000, 100);
    await area.fill(JSON.stringify({ ...bad, id: 'e2e-rule', name: 'E2E slow TLS', conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 }] }));
    await page.getByTestId(testIds.alerts.save).click();
    const toggle = page.getByTestId(testIds.alerts.ruleToggle('e2e-rule'));
    await toggle.waitFor();
    const saved = await (await fetch(`${stack.proxy.url}/api/alerts/rules`)).json();
    assert.equal(saved.rules.find((r: { id: string }) => r.id === 'e2e-rule')?.enabled, true);
    await toggle.click({ force: true });
    await waitFor('the rule disabled in the proxy', async () => {
      const r = await (await fetch(`${stack.proxy.url}/api/alerts/rules`)).json();
      return r.rules.find((x: { id: string }) => x.id === 'e2e-rule')?.enabled === false;
    }, 5000, 200);
    visited.alerts = page.url();
    await expectNoProblems(problems, 'alerts');
  } finally {
    await context.close();
  }
});

test('linked panels: hovering a chart shows the same instant on the heatmap; dragging zooms the shared time range', { skip }, async () => {
  const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'overview', { query: { from: 'now-3m', to: 'now' } }));
  try {
    const chart = panel(page, 'Requests / s').locator('.u-over');
    await chart.waitFor();
    await page.getByTestId(hostPanelIds.heatmapCanvas).waitFor();
    await chart.hover({ position: { x: 200, y: 40 } });
    await chart.hover({ position: { x: 220, y: 40 } });
    await page.getByTestId(hostPanelIds.heatmapCrosshair).waitFor();
    const box = (await chart.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.85, box.y + box.height / 2, { steps: 4 });
    await page.mouse.move(box.x + box.width * 0.95, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    // Scenes writes an absolute range as ISO timestamps.
    const abs = (v: string | null): number => (v && !v.startsWith('now') ? (/^\d+$/.test(v) ? Number(v) : Date.parse(v)) : NaN);
    await waitFor('an absolute, zoomed range in the URL', async () => Number.isFinite(abs(new URL(page.url()).searchParams.get('from'))), 5000, 100);
    const u = new URL(page.url());
    const span = abs(u.searchParams.get('to')) - abs(u.searchParams.get('from'));
    assert.ok(span > 0 && span < 60_000, `zoomed to ${span} ms (15% of 3 min ≈ 27 s)`);
    await expectNoProblems(problems, 'linked panels');

    // A heatmap row is its pod's data link: it opens the pod that owns that GPU.
    await page.goto(appUrl(stack.host, 'overview', { query: RANGE }), { waitUntil: 'domcontentloaded' });
    const row = page.locator(`a[data-testid^="${hostPanelIds.heatmapRow('')}"][href*="/pods/"]`).first();
    await row.waitFor();
    await row.click();
    await page.getByTestId(testIds.page.container('pod')).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/a\/hopscope-rca-app\/services\/llm-(vllm|tgi)\/pods\/llm-(vllm|tgi)-[0-9a-f]{5}-\d$/);
  } finally {
    await context.close();
  }
});

test('every view in both themes, screenshotted for the README and the postmortem', { skip }, async () => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const views: Record<string, string> = {
    overview: appUrl(stack.host, 'overview', { query: RANGE }),
    services: appUrl(stack.host, 'services', { query: RANGE }),
    service: visited.service,
    pod: visited.pod,
    traces: visited.traces ?? appUrl(stack.host, 'traces', { query: RANGE }),
    compare: appUrl(stack.host, 'compare', { query: { ...RANGE, a: 'backend=vllm', b: 'backend=tgi' } }),
    alerts: appUrl(stack.host, 'alerts', { query: RANGE }),
  };
  for (const [name, raw] of Object.entries(views)) {
    assert.ok(raw, `${name} was visited by the story`);
    // The chain has run for about two minutes: a tight window makes a readable picture.
    await screenshotBothThemes(name, raw, { from: 'now-3m' });
  }
});

test('a dead source degrades its panels only: Prometheus stopped, traces and services still work', { skip }, async () => {
  await stack.prometheus.stop();
  const { page, context } = await openAppPage(browser, appUrl(stack.host, 'overview', { query: RANGE }));
  try {
    await page.waitForFunction(() => performance.getEntriesByName('hopscope:overview:ready').length > 0, undefined, { timeout: 30_000 });
    // The golden panels and the heatmap say which source failed; the services (from traces) still answer.
    await waitFor('the golden panels to report prometheus', async () => /prometheus/i.test(await notices(page, 'Requests / s', 'warning')), 20_000);
    await serviceBar(page, 'rag').waitFor();
    await waitFor('the heatmap to say why it is empty', async () => /prometheus/i.test(await notices(page, 'GPU activity per GPU', 'warning')), 20_000);
  } finally {
    await context.close();
  }
});
