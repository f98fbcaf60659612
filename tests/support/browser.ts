/**
 * Chromium for end-to-end tests (playwright-core + Debian's /usr/bin/chromium): launch, open a host page while
 * collecting every console error, uncaught page error and failed request, and write screenshots to
 * artifacts/screenshots/ (git-ignored).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** What the tests ask of a browser: a fresh context (cookies and storage of its own) and closing it all. */
export interface TestBrowser {
  newContext(options?: { viewport?: { width: number; height: number } }): Promise<BrowserContext>;
  close(): Promise<void>;
}

const DEFAULT_VIEWPORT = { width: 1400, height: 900 };
/** What a test's context leaves behind, cleared when its last context closes (not the HTTP cache, not V8's code). */
const SITE_DATA = 'cookies,local_storage,indexeddb,websql,file_systems,service_workers,cache_storage,shared_storage';

/**
 * Chromium on one on-disk profile (a temp dir, removed on close) for a test file. Playwright's own contexts are
 * off the record, so each compiled the host's 8 MB client bundle from scratch on every page (about 7 s of a page's
 * 10 s on a busy 2-core machine); an on-disk profile keeps V8's code cache, and from the third page on the bundle loads
 * from it (about 2 s). A context here is the pages it opened in that profile: closing it closes them, and once no
 * context is open the sites' cookies and storage are cleared, so every test still starts with none.
 */
export async function launchTestBrowser(): Promise<TestBrowser> {
  const dir = mkdtempSync(join(tmpdir(), `hopscope-chromium-${process.pid}-`));
  const profile = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    viewport: DEFAULT_VIEWPORT,
  });
  // A page's first load compiles the host's bundle (no code cache yet): on a busy machine that passed Playwright's
  // 30 s default, so navigations get twice that before the page is called broken.
  profile.setDefaultNavigationTimeout(60_000);
  // The profile's first tab stays open (a persistent context ends with its last page) and clears the sites' data.
  const keeper = profile.pages()[0] ?? (await profile.newPage());
  const origins = new Set<string>();
  let open = 0;
  const clearSiteData = async (): Promise<void> => {
    await profile.clearCookies();
    const cdp = await profile.newCDPSession(keeper);
    try {
      for (const origin of origins) await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: SITE_DATA });
    } finally {
      await cdp.detach();
    }
    origins.clear();
  };
  return {
    async newContext(options = {}) {
      const pages: Page[] = [];
      let closed = false;
      open++;
      const own = {
        newPage: async (): Promise<Page> => {
          const page = await profile.newPage();
          await page.setViewportSize(options.viewport ?? DEFAULT_VIEWPORT);
          pages.push(page);
          return page;
        },
        pages: (): Page[] => pages.filter((p) => !p.isClosed()),
        close: async (): Promise<void> => {
          if (closed) return;
          closed = true;
          for (const page of pages) {
            const url = page.isClosed() ? '' : page.url();
            if (/^https?:/.test(url)) origins.add(new URL(url).origin);
            await page.close().catch(() => undefined);
          }
          if (--open === 0) await clearSiteData();
        },
      };
      // Everything else (events, routes, cookies) is the profile's own.
      return new Proxy(profile, {
        get(target, prop) {
          if (Object.hasOwn(own, prop)) return own[prop as keyof typeof own];
          const v: unknown = Reflect.get(target, prop, target);
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    },
    async close() {
      await profile.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
  browser: TestBrowser,
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

export async function waitForHost(page: Page, timeoutMs = 60_000): Promise<void> {
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
