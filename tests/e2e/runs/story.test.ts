/**
 * The load-test story through the browser, with the real parts: the simulated chain, a real Prometheus (scraping the
 * chain and the running hopscope-load workers), the real proxy on PGlite in a temp dir, and hopscope-load itself.
 * Two runs of one scenario; the second with its fault schedule (a latency fault on rag) and gated against the first:
 * its gate fails (exit 1). Then, as a person would: the Runs page lists both with their verdicts (a filter narrows it,
 * in the URL); the failed run's page, pinned to its window, shows its verdicts, client vs server TTFT and the gap, the
 * fault on the timeline; "Compare with" the first ranks rag first; the slowest request opens its trace's root cause;
 * back and forward retrace every step; both themes; screenshots of the run page (artifacts/screenshots/run-*.png).
 */
// Must not share the machine with another test file (tests/run.ts runs e2e files one at a time, after integration):
// the gate and the comparison measure two runs' latencies, which a neighbour file's chain and browser on the same two
// cores move (run beside the app story, its first run's TTFT reached 1 s and rag was not ranked first).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';

import { RunRecord } from '../../../contract';
import { testIds } from '../../../src/testIds';
import {
  launchTestBrowser,
  openPage,
  screenshot,
  waitForHost,
  type OpenedPage,
  type TestBrowser,
} from '../../support/browser';
import { appUrl } from '../../support/host';
import { PROMETHEUS, startRunsStack, storyScenario, waitFor, type RunsStack } from './support/stack';

const skip = !existsSync('/usr/bin/chromium')
  ? 'no /usr/bin/chromium'
  : !existsSync(PROMETHEUS)
    ? `${PROMETHEUS} is missing (apt-get install prometheus)`
    : false;
// Large against the chain's own latency at this time scale (tens of ms), so a busy machine cannot hide it.
const FAULT_MS = 600;

let stack: RunsStack;
let browser: TestBrowser;
let first: Awaited<ReturnType<RunsStack['load']>>;
let second: Awaited<ReturnType<RunsStack['load']>>;

before(async () => {
  if (skip) {
    return;
  }
  stack = await startRunsStack({ timeScale: 0.1 });
  const scenario = storyScenario(stack.dir, 'runs-story', [
    `{ at: 2s, target: rag, kind: latency, magnitude: ${FAULT_MS}, for: 9s }`,
  ]);
  // A short unrecorded warm-up first (JIT, connection pools), so the first run is not the chain's cold start.
  await stack.load('warm-up', [
    '--scenario',
    scenario,
    '--no-faults',
    '--duration',
    '3s',
    '--report',
    'none',
    '--metrics',
    'none',
  ]);
  first = await stack.load('story-1', ['--scenario', scenario, '--no-faults']);
  second = await stack.load('story-2', ['--scenario', scenario, '--baseline-run', 'story-1']);
  // vLLM's last samples of the second run's window scraped (every hop scraped after the run's end); the browser only
  // now (the runs had the CPUs).
  const r2 = RunRecord.parse(await (await fetch(`${stack.proxy.url}/api/runs/story-2`)).json());
  await waitFor(
    "every hop scraped after the second run's end",
    async () => {
      const q = encodeURIComponent('min(timestamp(up{job="chain"}))');
      const r = (await (await fetch(`${stack.promUrl}/api/v1/query?query=${q}`)).json()) as {
        data: { result: Array<{ value: [number, string] }> };
      };
      return Number(r.data.result[0]?.value[1] ?? 0) * 1000 > (r2.endMs ?? Infinity);
    },
    30_000,
    250
  );
  browser = await launchTestBrowser();
});

after(async () => {
  await browser?.close();
  await stack?.close();
});

const panel = (page: Page, title: string): Locator => page.getByTestId(`data-testid Panel header ${title}`);
const rows = async (page: Page, title: string): Promise<string[]> =>
  (await panel(page, title).getByRole('row').allInnerTexts()).slice(1).map((r) => r.replace(/\s*\n\s*/g, ' | '));
const path = (page: Page): string => new URL(page.url()).pathname;
const query = (page: Page): URLSearchParams => new URL(page.url()).searchParams;
/**
 * A time in the URL as Grafana reads it: epoch ms (how the app's links carry a window) or an ISO date (how the time
 * range writes itself back once synced, a moment later); a relative 'now-…' or none is NaN.
 */
const urlMs = (page: Page, key: 'from' | 'to'): number => {
  const v = query(page).get(key) ?? '';
  return /^\d+$/.test(v) ? Number(v) : Date.parse(v);
};

async function open(url: string): Promise<OpenedPage> {
  const opened = await openPage(browser, undefined, { viewport: { width: 1440, height: 900 } });
  await opened.page.goto(url, { waitUntil: 'domcontentloaded' });
  await waitForHost(opened.page);
  return opened;
}

/** Waits until a table panel has rows matching `re` (panels answer asynchronously). */
/** The title of a trace's ranked causes (the trace page's table panel). */
const RANKED_CAUSES = 'Root cause: the hops that explain the delay, ranked';

async function rowsMatching(page: Page, title: string, re: RegExp, timeoutMs = 20_000): Promise<string[]> {
  return waitFor(
    `rows of "${title}" matching ${re}`,
    async () => {
      const r = await rows(page, title);
      return r.some((x) => re.test(x)) ? r : undefined;
    },
    timeoutMs,
    200
  );
}

/** A full-page screenshot from the top, nothing focused (the host's header is sticky). */
async function shoot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  // The blur and the scroll painted (two frames), then the picture.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await screenshot(page, name);
}

/** What the run page must show for the faulted run: verdicts, client vs server TTFT and the gap, the fault marked. */
async function expectRunPage(page: Page): Promise<void> {
  await page.getByTestId(testIds.runs.header).waitFor();
  const summary = panel(page, 'Run summary');
  await waitFor('the summary', async () => (await summary.getByLabel('Verdict: failed').count()) === 1, 20_000, 200);
  const verdicts = await rowsMatching(page, 'Verdicts', /FAIL \| regression vs story-1 \| p99_ms:\+10%/);
  assert.ok(
    verdicts.some((r) => /^pass \| threshold \| error_rate<0\.05/.test(r)),
    verdicts.join('\n')
  );
  assert.match(
    (await rows(page, 'Faults of the run'))[0],
    new RegExp(`^rag \\| latency \\| ${FAULT_MS} \\| .* \\| applied \\(chain fault`)
  );

  // Client vs server TTFT: both sides over time, the fault marked on the same timeline.
  const ttft = panel(page, 'Client vs server TTFT');
  const chart = ttft.locator('[data-annotations]');
  await waitFor(
    'TTFT series with the fault marked',
    async () => Number(await chart.getAttribute('data-annotations')) === 1,
    20_000,
    200
  );
  assert.match(
    (await chart.getAttribute('aria-label')) ?? '',
    new RegExp(`fault latency on rag, magnitude ${FAULT_MS}`)
  );
  for (const name of ['Client TTFT P99', 'Client TTFT P50', 'vLLM TTFT P99', 'vLLM TTFT P50']) {
    assert.equal(await ttft.getByText(name, { exact: true }).count(), 1, `legend ${name}`);
  }
  const clocks = await rowsMatching(page, 'TTFT per clock', /^Client \(hopscope-load\)/);
  assert.deepEqual(
    clocks.map((r) => r.split(' | ')[0]),
    ['Client (hopscope-load)', 'Gateway (GenAI client metric)', 'vLLM', 'vLLM queue (WAITING)', 'vLLM prefill']
  );
  // The gap named for what it is: remainders between clocks, measured parts by their metric.
  const gap = await rowsMatching(page, "Where the client's TTFT goes", /^Before the LLM call/);
  assert.match(gap[0], /remainder: client mean − caller mean \| before vLLM \(the gap\)$/);
  assert.match(gap[1], /^Gateway → vLLM: .* \| remainder: caller mean − vLLM mean/);
  assert.ok(
    gap.some((r) => /^vLLM queue .* \| measured: vllm:request_queue_time_seconds \| inside vLLM's TTFT$/.test(r)),
    gap.join('\n')
  );
  // The fault sits on rag, before the LLM call: that part is the largest share.
  const share = (r: string) => Number(r.split(' | ')[2].replace('%', ''));
  assert.ok(share(gap[0]) > 50, gap.join('\n'));

  // The golden metrics over the run's window, the fault marked on them too.
  const e2e = panel(page, 'End-to-end P99 during the run').locator('[data-annotations]');
  await waitFor(
    'golden series with the fault marked',
    async () => Number(await e2e.getAttribute('data-annotations')) === 1,
    20_000,
    200
  );
  const quality = await rowsMatching(page, 'Baseline table', /^runs-story \| story-2/);
  assert.match(quality[0], /\| \d+(\.\d)? ms \|/, 'average TTFT');
  // A constant run has no capacity: nothing about a knee or a bottleneck at the top of its page.
  assert.equal(await page.getByTestId(testIds.runs.capacity).count(), 0);
}

test('two runs of one scenario: the proxy records both, the gate fails the faulted second one', { skip }, async () => {
  assert.equal(first.code, 0, first.err);
  assert.equal(second.code, 1, `exit ${second.code}: ${second.err}`);
  assert.match(second.err, /regressed against baseline story-1: p99_ms/);
  const r2 = RunRecord.parse(await (await fetch(`${stack.proxy.url}/api/runs/story-2`)).json());
  assert.equal(r2.status, 'failed');
  assert.equal(r2.faults[0].target, 'rag');
  assert.ok(r2.faults[0].id, 'the fault API applied the scheduled fault');
});

test(
  "Runs → the failed run → compare with the first → the slowest request's root cause, back and forward (dark)",
  { skip, timeout: 240_000 },
  async () => {
    const { page, problems, context } = await open(appUrl(stack.host, 'runs', { theme: 'dark' }));
    try {
      // The Runs page: both runs, newest first, with their verdicts and the client's figures.
      const list = await rowsMatching(page, 'Load-test runs', /^story-1 /);
      assert.match(
        list[0],
        /^story-2 \| runs-story \| failed \| .* \| 12 s \| 8\.0 req\/s \| [\d.]+ req\/s \| [\d.]+ m?s \| [\d.]+ m?s \| [\d.]+% \| 0 \|/
      );
      assert.match(list[1], /^story-1 \| runs-story \| passed \|/);

      // A filter narrows the list, in the URL; back restores it.
      await page.getByLabel('Verdict').click();
      await page
        .getByTestId('data-testid Select option')
        .filter({ hasText: /^failed$/ })
        .click();
      await waitFor('the filtered list', async () => (await rows(page, 'Load-test runs')).length === 1, 10_000, 200);
      assert.equal(query(page).get('var-status'), 'failed');
      await page.goBack();
      await waitFor('the whole list again', async () => (await rows(page, 'Load-test runs')).length === 2, 10_000, 200);
      assert.equal(query(page).get('var-status'), '$__all');

      // One click opens the failed run over its own window.
      await panel(page, 'Load-test runs').getByRole('link', { name: 'story-2' }).click();
      await waitFor('the run page', async () => path(page).endsWith('/runs/story-2'), 10_000, 100);
      const r2 = RunRecord.parse(await (await fetch(`${stack.proxy.url}/api/runs/story-2`)).json());
      assert.equal(urlMs(page, 'from'), r2.startMs, `pinned to the run's start (from=${query(page).get('from')})`);
      assert.equal(urlMs(page, 'to'), r2.endMs, `and its end (to=${query(page).get('to')})`);
      await expectRunPage(page);

      // Compare with the first run: the faulted hop ranks first, with its evidence and the per-hop delta.
      await page.getByTestId(testIds.runs.compareWith).click();
      await page.getByRole('option', { name: /story-1/ }).click();
      await waitFor('compareWith in the URL', async () => query(page).get('compareWith') === 'story-1', 10_000, 100);
      const ranked = await rowsMatching(page, 'Which hop regressed', /^1 \| /, 30_000);
      assert.match(ranked[0], /^1 \| rag \|/, ranked.join('\n'));
      const hops = await rowsMatching(page, 'Own time per hop: this run vs the other', /^rag /, 30_000);
      assert.match(hops[0], /^rag /, hops.join('\n'));
      const delta = Number(hops[0].split(' | ')[1].replace(/ ms$/, ''));
      assert.ok(
        delta > FAULT_MS * 0.8 && delta < FAULT_MS * 1.5,
        `rag own-time P50 +${delta} ms for a ${FAULT_MS} ms fault`
      );
      const client = await rowsMatching(page, 'Client figures side by side', /^Client E2E P99/);
      assert.match(client[0], /^Client E2E P99 \| [\d.]+ \| [\d.]+ \| [\d.]+%$/);
      await shoot(page, 'run-dark');

      // The slowest request: one click to its trace's root cause, keeping the run's window.
      const slowest = await rowsMatching(page, 'Slowest requests', /^[0-9a-f]{32} /);
      const traceId = slowest[0].split(' | ')[0];
      await panel(page, 'Slowest requests').getByRole('link', { name: traceId }).click();
      await waitFor('the trace page', async () => path(page).endsWith(`/traces/${traceId}`), 10_000, 100);
      assert.equal(urlMs(page, 'from'), r2.startMs);
      // The trace's ranked causes are a table panel: rank 1 is the faulted hop.
      await rowsMatching(page, RANKED_CAUSES, /^1 \| rag \|/, 30_000);

      // Back: the run page with its comparison; back again: no comparison; forward twice: the trace.
      await page.goBack();
      await waitFor(
        'back on the run page',
        async () => path(page).endsWith('/runs/story-2') && query(page).get('compareWith') === 'story-1',
        10_000,
        100
      );
      await rowsMatching(page, 'Which hop regressed', /^1 \| rag \|/, 30_000);
      await page.goBack();
      await waitFor(
        'no comparison',
        async () => path(page).endsWith('/runs/story-2') && !query(page).get('compareWith'),
        10_000,
        100
      );
      await waitFor(
        'the comparison gone',
        async () => (await panel(page, 'Which hop regressed').count()) === 0,
        10_000,
        100
      );
      await page.goForward();
      await waitFor('the comparison again', async () => query(page).get('compareWith') === 'story-1', 10_000, 100);
      await rowsMatching(page, 'Which hop regressed', /^1 \| rag \|/, 30_000);
      await page.goForward();
      await waitFor('the trace again', async () => path(page).endsWith(`/traces/${traceId}`), 10_000, 100);
      await rowsMatching(page, RANKED_CAUSES, /^1 \| /, 30_000);
      assert.deepEqual(problems.all(), []);
    } finally {
      await context.close();
    }
  }
);

test(
  "the run page in the light theme, opened from a pasted link without a time range: it pins itself to the run's window",
  { skip, timeout: 120_000 },
  async () => {
    const { page, problems, context } = await open(
      appUrl(stack.host, 'runs/story-2', { theme: 'light', query: { compareWith: 'story-1' } })
    );
    try {
      const r2 = RunRecord.parse(await (await fetch(`${stack.proxy.url}/api/runs/story-2`)).json());
      await waitFor("pinned to the run's window", async () => urlMs(page, 'from') === r2.startMs, 10_000, 100);
      assert.equal(urlMs(page, 'to'), r2.endMs);
      // What the page shows is that window, not its default hour.
      await waitFor(
        "the time picker on the run's window",
        async () => / to /.test(await page.getByTestId('data-testid TimePicker Open Button').innerText()),
        10_000,
        100
      );
      assert.equal(await page.evaluate(() => document.body.classList.contains('theme-light')), true);
      await expectRunPage(page);
      await rowsMatching(page, 'Which hop regressed', /^1 \| rag \|/, 30_000);
      await shoot(page, 'run-light');
      assert.deepEqual(problems.all(), []);
    } finally {
      await context.close();
    }
  }
);

test(
  "the Overview over a run: the run page's link selects it and keeps its window, runs are marked on the charts, picking another run pins the range to it, back returns",
  { skip, timeout: 120_000 },
  async () => {
    const [r1, r2] = await Promise.all(
      ['story-1', 'story-2'].map(async (id) =>
        RunRecord.parse(await (await fetch(`${stack.proxy.url}/api/runs/${id}`)).json())
      )
    );
    const { page, problems, context } = await open(
      appUrl(stack.host, 'runs/story-2', { theme: 'dark', query: { from: String(r2.startMs), to: String(r2.endMs) } })
    );
    try {
      await page.getByTestId(testIds.runs.overviewLink).click();
      await waitFor(
        'the Overview with the run',
        async () => path(page).endsWith('/overview') && query(page).get('var-run') === 'story-2',
        10_000,
        100
      );
      assert.equal(urlMs(page, 'from'), r2.startMs);
      assert.equal(urlMs(page, 'to'), r2.endMs);
      // Every time series marks the run's start … end (with the fault it applied).
      const marked = async (text: string) =>
        (
          await page
            .locator('[data-annotations]')
            .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''))
        ).filter((l) => l.includes(text)).length;
      await waitFor(
        'the run marked on the charts',
        async () => (await marked('run story-2 (runs-story): failed')) >= 4,
        30_000,
        200
      );
      await page.getByTestId(testIds.runs.selectorLink).waitFor();
      await shoot(page, 'overview-run-dark');

      // Picking the first run pins the range to its window (a history step); back returns to the second.
      await page.getByLabel('Run', { exact: true }).click();
      await page
        .getByTestId('data-testid Select option')
        .filter({ hasText: /^story-1$/ })
        .click();
      await waitFor(
        'pinned to story-1',
        async () => query(page).get('var-run') === 'story-1' && urlMs(page, 'from') === r1.startMs,
        10_000,
        100
      );
      await waitFor('story-1 marked', async () => (await marked('run story-1 (runs-story): passed')) >= 4, 30_000, 200);
      await page.goBack();
      await waitFor(
        'back to story-2',
        async () => query(page).get('var-run') === 'story-2' && urlMs(page, 'from') === r2.startMs,
        10_000,
        100
      );
      // The run's page is one click away, over the same window.
      await page.getByTestId(testIds.runs.selectorLink).click();
      await waitFor('the run page', async () => path(page).endsWith('/runs/story-2'), 10_000, 100);
      assert.equal(urlMs(page, 'from'), r2.startMs);
      assert.deepEqual(problems.all(), []);
    } finally {
      await context.close();
    }
  }
);
