/**
 * The incident story through the host, with the real chain under load, a real Prometheus and the real proxy:
 * Overview → inject a fault on `rag` through the chain's API → see the spike → service → pod → kernel evidence →
 * a slow trace → its root cause ranks the injected hop first (and says where its kernel evidence came from) →
 * back/forward → export PNG + Markdown; the root cause saved and opened from its link; the services table says
 * where each figure comes from; alert rules edited from two pages (the second gets the 409 and reloads), their
 * history and evaluator, export and import; a load-test run picked on the trace search pins it to the run's window.
 * Then every view in both themes is screenshotted, and a dead source degrades one panel, not the page.
 */
// Must not share the machine with another test file (tests/run.ts runs e2e files one at a time, after integration):
// the root cause must rank the injected hop first, which a neighbour's load on the same two cores can outweigh
// (beside the integration files, the gateway's own time ranked it first).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';

import { AlertRulesExport, RcaAnswer, RcaRangeAnswer, SavedRcaAnswer, ServicesAnswer } from '../../../contract';
import { launchTestBrowser, SCREENSHOT_DIR, type TestBrowser } from '../../support/browser';
import { finish, latencies, registration } from '../../integration/db/run-fixtures';
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
let browser: TestBrowser;
const RANGE = { from: 'now-10m', to: 'now' };
const visited: Record<string, string> = {};

before(async () => {
  if (skip) {
    return;
  }
  stack = await startStack({ rps: 6 });
  browser = await launchTestBrowser();
  // Healthy traffic first: the root-cause engine compares each hop with its recent healthy baseline.
  await waitFor(
    'healthy traces in the proxy',
    async () => {
      const r = await (await fetch(`${stack.proxy.url}/api/traces?from=now-5m&to=now&limit=100`)).json();
      return r.traces?.length >= 40;
    },
    60_000
  );
  await waitFor(
    'Prometheus scrapes of the chain',
    async () => {
      const r = await (
        await fetch(`${stack.prometheus.url}/api/v1/query?query=${encodeURIComponent('count_over_time(up[1m])')}`)
      ).json();
      return Number(r.data?.result?.[0]?.value?.[1] ?? 0) >= 4;
    },
    30_000
  );
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
  // What the last answers drew is painted (two frames), then the picture.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
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

test(
  'the incident story: overview → fault → service → pod → kernel evidence → slow trace → root cause → back/forward → export',
  { skip },
  async () => {
    const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'overview', { query: RANGE }));
    try {
      // Overview: golden stats from Prometheus, the heatmap says "per GPU", its tooltip names GPU, host, pod and field.
      const latest = panel(page, 'Golden metrics — latest').getByTestId(hostPanelIds.stat);
      await waitFor(
        'an RPS figure',
        async () =>
          /^Requests \/ s: [\d.]+ req\/s$/.test(
            (await latest
              .locator('[aria-label]')
              .first()
              .getAttribute('aria-label')
              .catch(() => '')) ?? ''
          ),
        20_000
      );
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
      await waitFor(
        'slow traces after the fault',
        async () => {
          const r = await (await fetch(`${stack.proxy.url}/api/traces?from=now-2m&to=now&minDurationMs=1400`)).json();
          return r.traces?.length >= 5;
        },
        60_000
      );

      // The spike: reload the overview (as the refresh picker would) until rag's P99 is above a second (pages do not
      // poll: a reload before enough of the fault's traces were in would keep its lower P99). The proxy's services
      // answer for the page's range says it first, so the page is reloaded once it can show it, not every second.
      await waitFor(
        "rag's P99 above 1 s in the proxy's services answer",
        async () => {
          const r = ServicesAnswer.parse(
            await (await fetch(`${stack.proxy.url}/api/services?from=${RANGE.from}&to=${RANGE.to}`)).json()
          );
          return (r.services.find((x) => x.service === 'rag')?.p99Ms ?? 0) > 1000;
        },
        60_000
      );
      const ragLink = serviceBar(page, 'rag');
      await waitFor(
        'rag P99 above 1 s on the overview',
        async () => {
          await page.reload({ waitUntil: 'domcontentloaded' });
          await ragLink.waitFor();
          return (await serviceP99Ms(page, 'rag')) > 1000;
        },
        60_000,
        1000
      );
      // The fault is drawn as a marker on the charts (from the chain's fault API, through the proxy's annotations).
      const rpsChart = panel(page, 'Requests / s').getByTestId(hostPanelIds.timeseries);
      await waitFor(
        'the fault as an annotation',
        async () => Number(await rpsChart.getAttribute('data-annotations')) >= 1,
        15_000
      );
      visited.overview = page.url();

      // service → its pods
      await ragLink.click();
      await page.getByTestId(testIds.page.container('service')).waitFor();
      const serviceUrl = pathAndQuery(page);
      assert.equal(serviceUrl.pathname, '/a/hopscope-rca-app/services/rag');
      assert.equal(serviceUrl.searchParams.get('from'), 'now-10m', 'the time range follows the drill-down');
      assert.equal(serviceUrl.searchParams.get('to'), 'now');
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

      // a slow trace → its root cause ranks the injected hop first. The trace listed ended at the gateway, so each of
      // its hops' spans has ended too, perhaps still in its hop's export batch: flushed now, the trace is whole.
      await stack.chain.forceFlush();
      await slow.first().click();
      await page.getByTestId(testIds.page.container('trace')).waitFor();
      assert.match(pathAndQuery(page).pathname, /^\/a\/hopscope-rca-app\/traces\/[0-9a-f]{32}$/);
      visited.trace = page.url();
      const candidates = 'Root cause: the hops that explain the delay, ranked';
      await settled(page, candidates);
      const ranked = await tableRows(page, candidates);
      assert.equal(ranked[0]?.['#'], '1');
      assert.equal(ranked[0]?.Service, 'rag', 'the injected hop is ranked first');
      // Where the kernel evidence came from is said on the page, as the proxy's answer has it.
      const rca = RcaAnswer.parse(
        await (await fetch(`${stack.proxy.url}/api/traces/${pathAndQuery(page).pathname.split('/').pop()}/rca`)).json()
      );
      const kernel = page.getByTestId(testIds.traces.kernelEvidence);
      await kernel.waitFor();
      assert.equal(await kernel.getAttribute('data-source'), rca.kernelEvidence?.source);
      assert.match(
        await kernel.innerText(),
        rca.kernelEvidence?.source === 'none' ? /^No kernel evidence/ : /^Kernel evidence from /
      );
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
  }
);

test(
  'trace search: a bad id gets a clear message, a good one opens its root cause; filters are URL state',
  { skip },
  async () => {
    const { page, problems, context } = await openAppPage(
      browser,
      appUrl(stack.host, 'traces', { query: { ...RANGE, minDurationMs: '1400' } })
    );
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
  }
);

test(
  'alerts: a rule with mistakes is refused with one message per mistake, a fixed one is saved and can be disabled',
  { skip },
  async () => {
    const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'alerts', { query: RANGE }));
    try {
      await page.getByTestId(testIds.alerts.newRule).click();
      const editor = page.getByTestId(testIds.alerts.editor);
      const area = editor.getByLabel('Rule JSON');
      const bad = {
        id: 'bad id!',
        name: '',
        conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500 }],
        withinMs: 5000,
      };
      await area.fill(JSON.stringify(bad));
      await page.getByTestId(testIds.alerts.save).click();
      const err = page.getByTestId(testIds.alerts.editorError);
      await err.waitFor();
      const msg = await err.innerText();
      assert.match(msg, /id: The id must be/);
      assert.match(msg, /name:/);
      await area.fill(
        JSON.stringify({
          ...bad,
          id: 'e2e-rule',
          name: 'E2E slow TLS',
          conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500 }],
        })
      );
      await page.getByTestId(testIds.alerts.save).click();
      await waitFor('the semantic check', async () => /needs "consecutive"/.test(await err.innerText()), 5000, 100);
      await area.fill(
        JSON.stringify({
          ...bad,
          id: 'e2e-rule',
          name: 'E2E slow TLS',
          conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 }],
        })
      );
      await page.getByTestId(testIds.alerts.save).click();
      const toggle = page.getByTestId(testIds.alerts.ruleToggle('e2e-rule'));
      await toggle.waitFor();
      const saved = await (await fetch(`${stack.proxy.url}/api/alerts/rules`)).json();
      assert.equal(saved.rules.find((r: { id: string }) => r.id === 'e2e-rule')?.enabled, true);
      await toggle.click({ force: true });
      await waitFor(
        'the rule disabled in the proxy',
        async () => {
          const r = await (await fetch(`${stack.proxy.url}/api/alerts/rules`)).json();
          return r.rules.find((x: { id: string }) => x.id === 'e2e-rule')?.enabled === false;
        },
        5000,
        200
      );
      visited.alerts = page.url();
      await expectNoProblems(problems, 'alerts');
    } finally {
      await context.close();
    }
  }
);

test(
  'services: the table says where each figure comes from, estimates marked, errors over requests',
  { skip },
  async () => {
    const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'services', { query: RANGE }));
    try {
      await settled(page, 'Services');
      await panel(page, 'Services').getByRole('link', { name: 'rag', exact: true }).waitFor();
      const rows = await tableRows(page, 'Services');
      // The proxy's answer of the same range (it moves on: figures are compared loosely, provenance exactly).
      const answer = ServicesAnswer.parse(
        await (await fetch(`${stack.proxy.url}/api/services?from=${RANGE.from}&to=${RANGE.to}`)).json()
      );
      let checked = 0;
      for (const row of rows) {
        const s = answer.services.find((x) => x.service === row.Service);
        if (!s) continue;
        checked++;
        const labels = {
          'service-metrics': 'service metrics',
          spanmetrics: 'span metrics',
          'ingest-counters': 'ingest counters',
          'sampled-traces': 'sampled traces',
        };
        const figures = [
          ['rate', 'requests'],
          ['errors', 'errors'],
          ['latency', 'latency'],
        ] as const;
        for (const [key] of figures)
          assert.ok(
            row.Source.includes(labels[s.figures[key].origin]),
            `${s.service}: "${row.Source}" names ${s.figures[key].origin}`
          );
        // Every estimate is marked; a row of counts says none.
        const estimates = figures.filter(([key]) => !s.figures[key].exact).map(([, word]) => word);
        if (!estimates.length) assert.equal(row.Estimated, 'none', s.service);
        else
          assert.ok(
            row.Estimated === 'all' || estimates.every((w) => row.Estimated.split(', ').includes(w)),
            `${s.service}: "${row.Estimated}" marks ${estimates.join(', ')}`
          );
        // Error rate = errors / requests (never over spans of every kind).
        assert.ok(Number(row.Requests) > 0, `${s.service} has requests`);
        assert.match(row['Error rate'], /^\d+(\.\d)?%$/);
        assert.ok(
          Math.abs(parseFloat(row['Error rate']) / 100 - Number(row.Errors) / Number(row.Requests)) < 0.0006,
          `${s.service}: ${row['Error rate']} = ${row.Errors} / ${row.Requests}`
        );
      }
      assert.ok(checked >= 3, `rows checked against the proxy: ${checked}`);
      // The estimates are drawn in a warning colour, the counts in the text colour.
      const estimated = panel(page, 'Services')
        .getByRole('cell', { name: /^(all|latency|requests|errors)/ })
        .first();
      if (await estimated.count()) {
        const none = panel(page, 'Services').getByRole('cell', { name: 'none', exact: true }).first();
        const color = (l: typeof estimated) => l.evaluate((el) => getComputedStyle(el.querySelector('*') ?? el).color);
        if (await none.count()) assert.notEqual(await color(estimated), await color(none));
      }
      // A non-exact figure is also said next to the title, with the proxy's reason.
      if (answer.services.some((s) => !s.figures.latency.exact)) {
        assert.match(await notices(page, 'Services', 'info'), /P50 and P99 are estimated from /);
      }
      await expectNoProblems(problems, 'services');
    } finally {
      await context.close();
    }
  }
);

test(
  'the root cause saved: its link opens the answer as saved, pasted or clicked, and leads back to the live one',
  { skip },
  async () => {
    assert.ok(visited.trace, 'the story opened a trace');
    const { page, problems, context } = await openAppPage(browser, visited.trace);
    try {
      const traceId = pathAndQuery(page).pathname.split('/').pop()!;
      const candidates = 'Root cause: the hops that explain the delay, ranked';
      await settled(page, candidates);
      await page.getByTestId(testIds.traces.saveAnswer).click();
      const link = page.getByTestId(testIds.traces.savedLink);
      await link.waitFor();
      const id = (await link.innerText()).trim();
      const href = new URL((await link.getAttribute('href'))!, stack.host.url);
      assert.equal(href.pathname, `/a/hopscope-rca-app/traces/${traceId}`);
      assert.equal(href.searchParams.get('answer'), id);
      assert.equal(
        href.searchParams.get('from'),
        pathAndQuery(page).searchParams.get('from'),
        'the link keeps the time range'
      );
      const saved = SavedRcaAnswer.parse(await (await fetch(`${stack.proxy.url}/api/rca/answers/${id}`)).json());
      assert.equal(saved.traceId, traceId);

      // Clicked: the banner names the saved answer, the ranking is the saved one.
      await link.click();
      await page.getByTestId(testIds.traces.savedBanner).waitFor();
      assert.equal(pathAndQuery(page).searchParams.get('answer'), id);
      await settled(page, candidates);
      await waitFor(
        'the saved ranking',
        async () => (await tableRows(page, candidates))[0]?.Service === saved.answer.candidates[0]?.service,
        10_000,
        200
      );
      const shown = await tableRows(page, candidates);
      assert.deepEqual(
        shown.map((r) => r.Service),
        saved.answer.candidates.slice(0, shown.length).map((c) => c.service)
      );
      assert.equal(await page.getByTestId(testIds.traces.saveAnswer).count(), 0, 'a saved answer is not saved again');

      // Pasted into a fresh page: the same view.
      const pasted = await openAppPage(browser, href.toString());
      try {
        await pasted.page.getByTestId(testIds.traces.savedBanner).waitFor();
        await settled(pasted.page, candidates);
        assert.equal((await tableRows(pasted.page, candidates))[0]?.Service, saved.answer.candidates[0]?.service);
        await expectNoProblems(pasted.problems, 'a pasted saved answer');
      } finally {
        await pasted.context.close();
      }

      // Back to the live root cause; the saved answer is listed with the trace's answers.
      await page.getByTestId(testIds.traces.liveLink).click();
      await page.getByTestId(testIds.traces.saveAnswer).waitFor();
      assert.equal(pathAndQuery(page).searchParams.get('answer'), null);
      assert.equal(await page.getByTestId(testIds.traces.savedBanner).count(), 0);
      const list = page.getByTestId(testIds.traces.savedList);
      await list.waitFor();
      assert.equal(await list.locator(`a[href*="answer=${id}"]`).count(), 1);
      await page.goBack();
      await page.getByTestId(testIds.traces.savedBanner).waitFor();
      assert.equal(pathAndQuery(page).searchParams.get('answer'), id, 'back returns to the saved answer');
      await expectNoProblems(problems, 'saved answer');
    } finally {
      await context.close();
    }
  }
);

test(
  'alert rules edited from two pages: the second save is refused (409) with a reload that keeps the change; history, evaluator, export and import',
  { skip, timeout: 120_000 },
  async () => {
    const rulesNow = async () =>
      (await (await fetch(`${stack.proxy.url}/api/alerts/rules`)).json()) as {
        version: number;
        rules: Array<{ id: string; enabled: boolean; name: string }>;
      };
    const before = await rulesNow();
    assert.ok(
      before.rules.some((r) => r.id === 'e2e-rule'),
      'the alerts test saved its rule'
    );
    const other = before.rules.find((r) => r.id !== 'e2e-rule')!;
    const a = await openAppPage(browser, appUrl(stack.host, 'alerts', { query: RANGE }));
    // The second page's 409 is the point of the test: the browser logs its status, nothing else may fail.
    const b = await openAppPage(browser, appUrl(stack.host, 'alerts', { query: RANGE }));
    try {
      for (const p of [a.page, b.page]) {
        await p.getByTestId(testIds.alerts.ruleToggle('e2e-rule')).waitFor();
        assert.equal(await p.getByTestId(testIds.alerts.version).innerText(), `version ${before.version}`);
      }
      // Page A turns the e2e rule on (it fires on the replayed slow TLS handshakes of the rag pods).
      await a.page.getByTestId(testIds.alerts.ruleToggle('e2e-rule')).click({ force: true });
      await a.page
        .getByTestId(testIds.alerts.version)
        .filter({ hasText: `version ${before.version + 1}` })
        .waitFor();
      // Page B, still on the version it read, changes another rule: refused, nothing saved, told to reload.
      await b.page.getByTestId(testIds.alerts.ruleToggle(other.id)).click({ force: true });
      const conflict = b.page.getByTestId(testIds.alerts.conflict);
      await conflict.waitFor();
      assert.match(await conflict.innerText(), /reload them and apply your change again/);
      assert.equal(
        (await rulesNow()).rules.find((r) => r.id === other.id)?.enabled,
        other.enabled,
        'nothing saved by the refused edit'
      );
      await b.page.getByTestId(testIds.alerts.reload).click();
      await b.page.getByTestId(testIds.alerts.info).waitFor();
      await conflict.waitFor({ state: 'detached' });
      assert.equal(await b.page.getByTestId(testIds.alerts.version).innerText(), `version ${before.version + 1}`);
      await b.page.getByTestId(testIds.alerts.ruleToggle(other.id)).click({ force: true });
      await waitFor(
        'both edits kept',
        async () => {
          const r = await rulesNow();
          return (
            r.rules.find((x) => x.id === other.id)?.enabled === !other.enabled &&
            r.rules.find((x) => x.id === 'e2e-rule')?.enabled === true
          );
        },
        5000,
        200
      );
      // Who evaluates the rules is said on the page.
      await a.page.getByTestId(testIds.alerts.evaluator).waitFor();
      assert.match(await a.page.getByTestId(testIds.alerts.evaluator).innerText(), /^Evaluated by this proxy \(/);

      // The history: the enabled rule fires on the replayed handshakes; a reload of the page shows the transition.
      const history = 'History: alerts that fired or resolved in the range';
      await waitFor(
        'the e2e rule firing in the history',
        async () => {
          await b.page.reload({ waitUntil: 'domcontentloaded' });
          await settled(b.page, history);
          return (await tableRows(b.page, history)).some((r) => r.Rule === 'E2E slow TLS' && r.Became === 'firing');
        },
        60_000,
        2000
      );
      await settled(b.page, 'Alerts (firing and resolved)');
      assert.ok((await tableRows(b.page, 'Alerts (firing and resolved)')).some((r) => r.Rule === 'E2E slow TLS'));

      // Export: the rule set as a file in the proxy's format.
      const [download] = await Promise.all([
        b.page.waitForEvent('download'),
        b.page.getByTestId(testIds.alerts.exportRules).click(),
      ]);
      const current = await rulesNow();
      assert.equal(download.suggestedFilename(), `hopscope-alert-rules-v${current.version}.json`);
      const file = AlertRulesExport.parse(JSON.parse(readFileSync((await download.path())!, 'utf8')));
      assert.deepEqual(
        file.rules.map((r) => r.id),
        current.rules.map((r) => r.id)
      );
      // Import: the same file with the e2e rule renamed and turned off, confirmed, replaces the rules.
      const edited = {
        ...file,
        rules: file.rules.map((r) =>
          r.id === 'e2e-rule' ? { ...r, name: 'E2E slow TLS (imported)', enabled: false } : r
        ),
      };
      await b.page.getByTestId(testIds.alerts.importFile).setInputFiles({
        name: 'rules.json',
        mimeType: 'application/json',
        buffer: Buffer.from(JSON.stringify(edited)),
      });
      const dialog = b.page.getByRole('dialog');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), new RegExp(`with the ${edited.rules.length} rule\\(s\\) of rules\\.json`));
      await dialog.getByRole('button', { name: 'Import', exact: true }).click();
      await b.page
        .getByTestId(testIds.alerts.info)
        .filter({ hasText: /^Imported \d+ rule\(s\) from rules\.json/ })
        .waitFor();
      const imported = await rulesNow();
      assert.equal(imported.version, current.version + 1);
      assert.equal(imported.rules.find((r) => r.id === 'e2e-rule')?.name, 'E2E slow TLS (imported)');
      await b.page.getByRole('cell', { name: 'E2E slow TLS (imported)', exact: true }).waitFor();
      // A file that is not a rule set says why, and saves nothing.
      await b.page.getByTestId(testIds.alerts.importFile).setInputFiles({
        name: 'bad.json',
        mimeType: 'application/json',
        buffer: Buffer.from('{"rules": [{"id": "x"}]}'),
      });
      await b.page
        .getByTestId(testIds.alerts.saveError)
        .filter({ hasText: /bad\.json: Not a rules file: rules\[0\]\.name/ })
        .waitFor();
      assert.equal((await rulesNow()).version, imported.version);
      // Past the proxy's bounds (500 rules): its 413 says so, nothing is saved.
      const many = {
        rules: Array.from({ length: 501 }, (_, i) => ({ ...file.rules[0], id: `bulk-${i}`, name: `Bulk ${i}` })),
      };
      await b.page
        .getByTestId(testIds.alerts.importFile)
        .setInputFiles({ name: 'many.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(many)) });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Import', exact: true }).click();
      await b.page
        .getByTestId(testIds.alerts.saveError)
        .filter({ hasText: /501 rules, at most 500; nothing was saved/ })
        .waitFor();
      assert.equal((await rulesNow()).version, imported.version);

      await expectNoProblems(a.problems, 'alerts (page A)');
      assert.deepEqual(
        b.problems.all().filter((x) => !/status of (409|413)/.test(x)),
        [],
        'page B: only the 409 and the 413'
      );
      assert.equal(b.problems.all().filter((x) => /status of 409/.test(x)).length, 1, 'page B: the one refused save');
    } finally {
      await a.context.close();
      await b.context.close();
    }
  }
);

test('the trace search over a load-test run: picking the run pins the search to its window', { skip }, async () => {
  // The run's window holds traces: from the oldest trace the stack has (its load may have started less than 150 s
  // ago, after the tests before this one), to 20 s ago (those traces are complete).
  const now = Date.now();
  const recent = (
    (await (await fetch(`${stack.proxy.url}/api/traces?from=${now - 600_000}&to=${now}&limit=1000`)).json()) as {
      traces: Array<{ startMs: number }>;
    }
  ).traces;
  const startMs = Math.ceil(Math.max(now - 150_000, Math.min(...recent.map((t) => t.startMs))));
  const endMs = now - 20_000;
  assert.ok(endMs - startMs >= 5_000, `the stack has traced for long enough (oldest trace ${now - startMs} ms ago)`);
  const post = (path: string, body: unknown) =>
    fetch(`${stack.proxy.url}/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  assert.equal((await post('/runs', registration('e2e-window', 'w1', { startMs }))).status, 201);
  assert.equal((await post('/runs/e2e-window/finish', finish('w1', latencies(50, 300), { endMs }))).status, 200);
  const { page, problems, context } = await openAppPage(browser, appUrl(stack.host, 'traces', { query: RANGE }));
  try {
    await page.getByTestId(testIds.runs.selector).waitFor();
    await page.getByLabel('Run', { exact: true }).click();
    await page
      .getByTestId('data-testid Select option')
      .filter({ hasText: /^e2e-window$/ })
      .click();
    await waitFor(
      'pinned to the run',
      async () =>
        pathAndQuery(page).searchParams.get('var-run') === 'e2e-window' &&
        new Date(pathAndQuery(page).searchParams.get('from') ?? 0).getTime() === startMs,
      10_000,
      100
    );
    assert.equal(new Date(pathAndQuery(page).searchParams.get('to')!).getTime(), endMs);
    const title = 'Traces, slowest first';
    await settled(page, title);
    await panel(page, title).getByRole('link').first().waitFor();
    // Every trace listed is one the proxy finds in the run's window.
    const listed = await panel(page, title).getByRole('link').allInnerTexts();
    const inWindow = new Set(
      (
        (await (await fetch(`${stack.proxy.url}/api/traces?from=${startMs}&to=${endMs}&limit=1000`)).json()) as {
          traces: Array<{ traceId: string }>;
        }
      ).traces.map((t) => t.traceId)
    );
    assert.ok(listed.length > 0);
    for (const id of listed) assert.ok(inWindow.has(id.trim()), `${id} is a trace of the run's window`);
    await page.getByTestId(testIds.runs.selectorLink).waitFor();
    // A trace opened from the run's search keeps the run's window.
    await panel(page, title).getByRole('link').first().click();
    await page.getByTestId(testIds.page.container('trace')).waitFor();
    assert.equal(new Date(pathAndQuery(page).searchParams.get('from')!).getTime(), startMs);
    await page.goBack();
    await page.getByTestId(testIds.page.container('traces')).waitFor();
    assert.equal(pathAndQuery(page).searchParams.get('var-run'), 'e2e-window');
    await expectNoProblems(problems, 'trace search over a run');
  } finally {
    await context.close();
  }
});

test(
  'Explain this window on the real proxy: a brushed Overview range opens its page and link, which shows the window answer as the proxy gives it; the verdict on the trace page when the answer has one',
  { skip },
  async () => {
    const { page, problems, context } = await openAppPage(
      browser,
      appUrl(stack.host, 'overview', { query: { from: 'now-3m', to: 'now' } })
    );
    try {
      const chart = panel(page, 'Requests / s').locator('.u-over');
      await chart.waitFor();
      const box = (await chart.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 4 });
      await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 4 });
      await page.mouse.up();
      const abs = (v: string | null): number => (v && /^\d+$/.test(v) ? Number(v) : Date.parse(v ?? ''));
      await waitFor(
        'a brushed, absolute range',
        async () => Number.isFinite(abs(new URL(page.url()).searchParams.get('from'))),
        5000,
        100
      );
      const brushed = new URL(page.url());
      const [from, to] = [abs(brushed.searchParams.get('from')), abs(brushed.searchParams.get('to'))];
      await page.getByTestId(testIds.explain.button).click();
      await page.getByTestId(testIds.page.container('explain')).waitFor();
      const link = new URL(page.url());
      assert.equal(link.pathname, '/a/hopscope-rca-app/explain');
      assert.deepEqual([abs(link.searchParams.get('from')), abs(link.searchParams.get('to'))], [from, to]);
      // The proxy's own answer for that window: the page shows what it says (its shape, not fixed figures).
      const answer = RcaRangeAnswer.parse(
        await (await fetch(`${stack.proxy.url}/api/rca?from=${from}&to=${to}`)).json()
      );
      const about = page.getByTestId(testIds.explain.about);
      await about.waitFor({ timeout: 30_000 });
      assert.match(await about.innerText(), /\d+ of \d+ trace\(s\) ranked were slower than usual/);
      const title = "Root cause of the window: the hops that explain its traces' delay, ranked";
      await settled(page, title);
      if (answer.candidates.length) assert.ok((await tableRows(page, title)).length > 0, 'ranked hops shown');
      const verdict = page.getByTestId(testIds.traces.verdict);
      if (answer.verdict) assert.ok((await verdict.innerText()).length > 0);
      else assert.equal(await verdict.count(), 0, 'no verdict in the answer: none drawn');
      await expectNoProblems(problems, 'explain this window');

      // A trace's page (the story's, or a recent one): its verdict when the proxy's answer has one, nothing otherwise.
      const traceId =
        (visited.trace && new URL(visited.trace).pathname.split('/').pop()) ||
        (await (await fetch(`${stack.proxy.url}/api/traces?from=now-5m&to=now&limit=1`)).json()).traces[0].traceId;
      await page.goto(appUrl(stack.host, `traces/${traceId}`, { query: RANGE }), { waitUntil: 'domcontentloaded' });
      await page.getByTestId(testIds.page.container('trace')).waitFor();
      await settled(page, 'Root cause: the hops that explain the delay, ranked');
      const rca = RcaAnswer.parse(await (await fetch(`${stack.proxy.url}/api/traces/${traceId}/rca`)).json());
      // Its wording may move as the baseline does: the verdict is there, one non-empty line.
      if (rca.verdict) assert.ok((await page.getByTestId(testIds.traces.verdict).innerText()).trim().length > 0);
      else assert.equal(await page.getByTestId(testIds.traces.verdict).count(), 0);
    } finally {
      await context.close();
    }
  }
);

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
    explain: appUrl(stack.host, 'explain', { query: RANGE }),
  };
  for (const [name, raw] of Object.entries(views)) {
    assert.ok(raw, `${name} was visited by the story`);
    // The chain has run for about two minutes: a tight window makes a readable picture.
    await screenshotBothThemes(name, raw, { from: 'now-3m' });
  }
});

test(
  'a dead source degrades its panels only: Prometheus stopped, traces and services still work',
  { skip },
  async () => {
    await stack.prometheus.stop();
    const { page, context } = await openAppPage(browser, appUrl(stack.host, 'overview', { query: RANGE }));
    try {
      await page.waitForFunction(() => performance.getEntriesByName('hopscope:overview:ready').length > 0, undefined, {
        timeout: 30_000,
      });
      // The golden panels and the heatmap say which source failed; the services (from traces) still answer.
      await waitFor(
        'the golden panels to report prometheus',
        async () => /prometheus/i.test(await notices(page, 'Requests / s', 'warning')),
        20_000
      );
      await serviceBar(page, 'rag').waitFor();
      await waitFor(
        'the heatmap to say why it is empty',
        async () => /prometheus/i.test(await notices(page, 'GPU activity per GPU', 'warning')),
        20_000
      );
    } finally {
      await context.close();
    }
  }
);
