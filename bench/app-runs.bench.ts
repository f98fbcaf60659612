/**
 * The Runs page with 1,000 stored runs, ready warm (target ≤ 300 ms): the real proxy on embedded PGlite (runs seeded
 * through its own POST API: register + finish, as hopscope-load reports them), the built plugin in the host, Chromium.
 * Warm = the app is already open (its code loaded, the proxy's database warm); each round is what a person does: from
 * another page, open Runs in the menu. The time is measured in the page, from the navigation to the first animation
 * frame in which the table is drawn with an answer to a request made after the navigation (each round asks for a
 * window of its own, so no answer of an earlier round counts).
 * A/B, alternated in one run (≥ 5 rounds): A = 1,000 stored runs, B = 100 stored runs (the page's own cost at a tenth
 * of the data), each on its own proxy and host; the median of each, the ratio B/A and its spread.
 * Usage: npm run bench -- app-runs   (needs a built dist/: npm run build)   HOPSCOPE_BENCH_ROUNDS=9 …
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

import { startProxy, type RunningProxy } from '../backend-proxy/src/server';
import { finish, latencies, registration } from '../tests/integration/db/run-fixtures';
import { launchBrowser } from '../tests/support/browser';
import { appUrl, startTestHost } from '../tests/support/host';
import { abCompare, abRow, median, report, smoke, SMOKE } from './lib/ab';

const ROUNDS = smoke(Math.max(5, Number(process.env.HOPSCOPE_BENCH_ROUNDS ?? 7)), 1);
const TARGET_MS = 300;
/** Stored runs of A and B (a smoke run stores a few). */
const BIG = smoke(1000, 20);
const SMALL = smoke(100, 10);
const SCENARIOS = ['single-turn-short', 'multi-hop-agent', 'rag-recall', 'chaos-gpu-oom'];

async function post(proxy: RunningProxy, path: string, body: unknown): Promise<void> {
  const r = await fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) {
    throw new Error(`${path}: HTTP ${r.status} ${await r.text()}`);
  }
}

/** `n` runs over the last `n` hours, one a minute apart per scenario; every 25th still running, the rest finished. */
async function seed(proxy: RunningProxy, n: number): Promise<void> {
  const fin = finish('w1', latencies(400, 300));
  const t0 = Date.now() - n * 60_000;
  const one = async (i: number): Promise<void> => {
    const runId = `bench-${i}`;
    const startMs = t0 + i * 60_000;
    await post(proxy, '/api/runs', registration(runId, 'w1', { startMs, scenario: SCENARIOS[i % SCENARIOS.length] }));
    if (i % 25) {
      await post(proxy, `/api/runs/${runId}/finish`, {
        ...fin,
        endMs: startMs + 30_000,
        status: i % 7 ? 'passed' : 'failed',
      });
    }
  };
  for (let i = 0; i < n; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => one(i + j)));
  }
}

/**
 * One warm round: from the Alerts page, open Runs in the menu over a window of its own; resolves with the ms from the
 * click to the first frame with the table drawn from an answer requested after the click.
 */
async function openRuns(page: Page, round: number, expectRows: number): Promise<number> {
  const from = Date.now() - 30 * 24 * 3600_000 - round;
  await page.evaluate(`window.__hopscopeNav(${JSON.stringify(`/a/hopscope-rca-app/alerts`)})`);
  await page.waitForFunction(
    `!!document.querySelector('[data-testid="data-testid hopscope-page-alerts"], [data-testid^="data-testid Panel header"]')`,
    undefined,
    { timeout: 30_000 }
  );
  await page.waitForTimeout(300);
  const url = `/a/hopscope-rca-app/runs?from=${from}&to=${Date.now() + 60_000}`;
  return (await page.evaluate(`new Promise((resolve, reject) => {
    const t0 = performance.now();
    const runsAnswered = () => performance.getEntriesByType('resource').some((e) => e.startTime >= t0 && e.responseEnd > 0 && /\\/api\\/plugin-proxy\\/[^/]+\\/api\\/runs\\?/.test(e.name));
    const table = () => document.querySelector('[data-testid="data-testid Panel header Load-test runs"]');
    const drawn = () => { const t = table(); return !!t && t.querySelectorAll('[role="row"]').length > 1 && t.textContent.includes('bench-${expectRows - 1}'); };
    const deadline = setTimeout(() => reject(new Error('the Runs table was not drawn within 30 s')), 30000);
    const tick = () => {
      if (runsAnswered() && drawn()) { clearTimeout(deadline); requestAnimationFrame(() => resolve(performance.now() - t0)); }
      else requestAnimationFrame(tick);
    };
    window.__hopscopeNav(${JSON.stringify(url)});
    requestAnimationFrame(tick);
  })`)) as number;
}

const dir = mkdtempSync(join(tmpdir(), 'hopscope-bench-app-runs-'));
const proxies: RunningProxy[] = [];
const browser = await launchBrowser();
try {
  const big = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 0,
    dataDir: join(dir, 'a'),
    logLevel: 'silent',
  });
  proxies.push(big);
  const small = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 0,
    dataDir: join(dir, 'b'),
    logLevel: 'silent',
  });
  proxies.push(small);
  const s0 = performance.now();
  await seed(big, BIG);
  const seedMs = performance.now() - s0;
  await seed(small, SMALL);
  const hosts = [await startTestHost({ proxyUrl: big.url }), await startTestHost({ proxyUrl: small.url })];
  const pages: Page[] = [];
  for (const h of hosts) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    // In-app navigation as the menu does it (Grafana's locationService), exposed for the bench.
    await page.addInitScript(
      `window.__hopscopeNav = (url) => { const a = document.createElement('a'); a.href = url; document.body.appendChild(a); a.click(); a.remove(); };`
    );
    await page.goto(appUrl(h, 'runs'), { waitUntil: 'domcontentloaded' });
    await page.getByTestId('data-testid Panel header Load-test runs').waitFor({ timeout: 60_000 });
    pages.push(page);
  }
  // Warm-up: a first visit of each page (code, plans, caches); a smoke run (bench/lib/ab.ts) needs none.
  if (!SMOKE) {
    await openRuns(pages[0], 0, BIG);
    await openRuns(pages[1], 0, SMALL);
  }
  let round = 1;
  const proxyShare: number[] = [];
  const ab = await abCompare({
    name: 'Runs page ready, warm (menu click → table drawn)',
    unit: 'ms',
    rounds: ROUNDS,
    a: {
      label: '1,000 stored runs',
      run: async () => {
        const ms = await openRuns(pages[0], round++, BIG);
        proxyShare.push(
          (await pages[0].evaluate(
            `(() => { const e = performance.getEntriesByType('resource').filter((x) => /\\/api\\/runs\\?/.test(x.name)).pop(); return e.responseEnd - e.startTime; })()`
          )) as number
        );
        return ms;
      },
    },
    b: { label: '100 stored runs', run: () => openRuns(pages[1], round++, SMALL) },
  });
  const a = ab.a.values;
  const title = `Runs page with 1,000 stored runs, warm (Chromium, real proxy on PGlite; target ≤ ${TARGET_MS} ms)`;
  report(`${title}: A/B`, [abRow(ab)], ab);
  report(
    title,
    [
      {
        measure: 'A: 1,000 runs, ready (ms)',
        median: Math.round(median(a)),
        'min–max': `${Math.round(Math.min(...a))}–${Math.round(Math.max(...a))}`,
        target: TARGET_MS,
        rounds: a.length,
      },
      {
        measure: 'A: of which GET /api/runs (ms)',
        median: Math.round(median(proxyShare)),
        'min–max': `${Math.round(Math.min(...proxyShare))}–${Math.round(Math.max(...proxyShare))}`,
        target: '',
        rounds: proxyShare.length,
      },
    ],
    { ab, proxyMs: proxyShare, seedMs: Math.round(seedMs), targetMs: TARGET_MS, pass: median(a) <= TARGET_MS }
  );
  for (const h of hosts) {
    await h.close();
  }
} finally {
  await browser.close();
  for (const p of proxies) {
    await p.close();
  }
  rmSync(dir, { recursive: true, force: true });
}
