/**
 * Chromium for end-to-end tests (playwright-core + Debian's /usr/bin/chromium): launch, open a host page while
 * collecting every console error, uncaught page error and failed request, and write screenshots to
 * artifacts/screenshots/ (git-ignored).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.HOPSCOPE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Everything that went wrong in a page, as text lines; tests assert it stays empty. */
export interface PageProblems {
  consoleErrors: string[];
  pageErrors: string[];
  failedRequests: string[];
  /** All of the above, one list. */
  all(): string[];
  clear(): void;
}

export function watchProblems(page: Page, options: { ignore?: RegExp[] } = {}): PageProblems {
  const ignored = (text: string) => (options.ignore ?? []).some((re) => re.test(text));
  const problems: PageProblems = {
    consoleErrors: [],
    pageErrors: [],
    failedRequests: [],
    all: () => [...problems.consoleErrors, ...problems.pageErrors, ...problems.failedRequests],
    clear: () => {
      problems.consoleErrors.length = 0;
      problems.pageErrors.length = 0;
      problems.failedRequests.length = 0;
    },
  };
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !ignored(msg.text())) {
      const loc = msg.location();
      problems.consoleErrors.push(`console.error: ${msg.text()}${loc.url ? ` (${loc.url}:${loc.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (err) => {
    if (!ignored(err.message)) {
      problems.pageErrors.push(`uncaught: ${err.message}`);
    }
  });
  page.on('requestfailed', (req) => {
    const text = `${req.method()} ${req.url()}: ${req.failure()?.errorText ?? 'failed'}`;
    // A navigation away aborts in-flight requests: not a problem of the page.
    if (!ignored(text) && req.failure()?.errorText !== 'net::ERR_ABORTED') {
      problems.failedRequests.push(`request failed: ${text}`);
    }
  });
  return problems;
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  problems: PageProblems;
}

/** A fresh context (no shared storage) with a page watched for problems; `url` opened when given. */
export async function openPage(
  browser: Browser,
  url?: string,
  options: { viewport?: { width: number; height: number }; ignore?: RegExp[] } = {}
): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = watchProblems(page, { ignore: options.ignore });
  if (url) {
    await gotoHostPage(page, url);
  }
  return { context, page, problems };
}

/** Opens a host URL and waits until the host has booted and rendered the plugin (or failed trying). */
export async function gotoHostPage(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await waitForHost(page);
}

export async function waitForHost(page: Page, timeoutMs = 30_000): Promise<void> {
  await page.waitForFunction(() => document.body?.dataset.hostState !== 'loading', undefined, { timeout: timeoutMs });
  const state = await page.evaluate(() => document.body.dataset.hostState);
  if (state !== 'ready') {
    const text = await page.evaluate(() => document.getElementById('reactRoot')?.textContent ?? '');
    throw new Error(`host did not boot: ${text}`);
  }
}

/** Saves a full-page PNG as artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
