/**
 * App render benchmarks, measured in Chromium through the host with performance marks the app sets itself:
 *  - Overview ready after a COLD load (target ≤ 1.5 s): `hopscope:overview:ready`, the mark the Overview sets once
 *    every section (golden metrics, heatmap, annotations, services) has answered and is drawn (uPlot has drawn each
 *    chart, the heatmap is painted). The bench checks it rather than trusts it: an init script notes what is on
 *    screen at the instant of the mark (rounds with a chart, the heatmap or the services missing are counted), and
 *    the first animation frame with everything drawn — a like-for-like measure for any build. Each cold round is a
 *    fresh browser context (empty HTTP cache, its own renderer: nothing fetched or compiled before),
 *    `HOPSCOPE_BENCH_COLD_ROUNDS` rounds (default 7), median and min–max, split into phases from the page's resource
 *    timing: the host's own boot (Grafana's page and shared modules: not the plugin's cost) until module.js is
 *    requested, then the plugin: its JS (files, bytes), first data request, last data answer, ready. Plus warm
 *    navigations (same context, HTTP cache filled);
 *  - A/B of the cold load against another build: `HOPSCOPE_BENCH_BASELINE_DIST=<dir>` (a copy of an older dist/)
 *    serves that build from a second host and alternates cold loads A (dist/) / B (baseline), side by side;
 *  - GPU heatmap 64 rows × 720 columns paint (target ≤ 50 ms): `hopscope:heatmap`; plus an A/B against painting the
 *    same grid cell by cell with fillRect (the obvious alternative), alternated in the same page;
 *  - a 5,000-span trace: tree build + icicle draw (target ≤ 200 ms): `hopscope:trace-tree-build` + `hopscope:icicle`;
 *  - a drill-down click (service → its pods) until the pods are on screen, warm (target ≤ 100 ms).
 * The data comes from a small stand-in proxy answering contract-valid JSON, so the numbers are the app's own cost.
 * Usage: npm run bench -- app-render   (needs a built dist/: npm run build)
 *        HOPSCOPE_BENCH_BASELINE_DIST=/tmp/dist-old npm run bench -- app-render   (cold load, this build vs that one)
 *        HOPSCOPE_BENCH_DIST=/tmp/dist-new …   (measure that build as A instead of dist/)
 *        HOPSCOPE_BENCH_COLD_ROUNDS=11 …   (more cold rounds)   HOPSCOPE_BENCH_ONLY=cold …   (the cold load only)
 *        HOPSCOPE_BENCH_PROXY_DELAY_MS=200 …   (the stand-in proxy answers that much later, as a real one querying
 *        Prometheus would; by default it answers at once, so only the app's own cost is measured)
 */
import type { Browser } from 'playwright-core';

import { FROM, HEATMAP_ROWS as ROWS, NOW, SERVICES, startStandInProxy, TRACE_ID } from '../tests/host/standInProxy';
import { launchBrowser } from '../tests/support/browser';
import { appUrl, startTestHost } from '../tests/support/host';
import { openAppPage } from '../tests/e2e/app/support/pages';
import { abCompare, abRow, median, report, type AbResult, smoke } from './lib/ab';

const ROUNDS = smoke(5, 1);
const COLS = 720;
const COLD_ROUNDS = smoke(Math.max(3, Number(process.env.HOPSCOPE_BENCH_COLD_ROUNDS ?? 7)), 1);
const BASELINE_DIST = process.env.HOPSCOPE_BENCH_BASELINE_DIST;
const COLD_ONLY = process.env.HOPSCOPE_BENCH_ONLY === 'cold';
/** Latency added to every answer of the stand-in proxy (a real one queries Prometheus and Tempo first). */
const PROXY_DELAY_MS = Number(process.env.HOPSCOPE_BENCH_PROXY_DELAY_MS ?? 0);
const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
const entries = (name: string): string =>
  `performance.getEntriesByName(${JSON.stringify(name)}).map((e) => e.entryType === 'mark' ? e.startTime : e.duration)`;
const heatmapEntries = `[...${entries('hopscope:heatmap')}, ...${entries('host:heatmap')}]`;

/** One cold load's timeline, in ms from navigation start (resource timing of the page). */
interface ColdSample {
  ready: number;
  /** First animation frame with the ready mark set and every chart, the heatmap and the services on screen. */
  drawnFrame: number;
  /** What was on screen when the app set its ready mark (checked by the bench, not told by the app). */
  atMark: { charts: number; heatmap: boolean; services: number };
  /** module.js requested: everything before is the host's (Grafana's) own boot. */
  moduleStart: number;
  /** The last plugin JS file (module.js or a chunk) fetched before ready. */
  pluginJsEnd: number;
  /** First / last data request (Grafana's data proxy) before ready. */
  firstData: number;
  dataEnd: number;
  jsFiles: string[];
  jsBytes: number;
}

const CHARTS = 6;
/**
 * Runs in the page before anything else: notes what is on screen at the instant the app sets its ready mark, and the
 * first frame in which everything is (the same check for any build, so an A/B compares like with like).
 */
// The heatmap paint: the app's own canvas (older builds) or the host's stand-in for Grafana's heatmap panel (this one).
const HEATMAP_MEASURES = ['hopscope:heatmap', 'host:heatmap'];
// The services: the app's own links (older builds) or the links of the services table panel (this one).
const SERVICE_LINKS =
  '[data-testid^="data-testid hopscope-overview-service-"], [data-testid^="data-testid Panel header Services"] a[href*="/services/"]';
const WATCH_READY = `(() => {
  const drawn = () => ({
    charts: document.querySelectorAll('.uplot canvas').length,
    heatmap: ${JSON.stringify(HEATMAP_MEASURES)}.some((n) => performance.getEntriesByName(n).length > 0),
    services: document.querySelectorAll(${JSON.stringify(SERVICE_LINKS)}).length,
  });
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    if (name === 'hopscope:overview:ready' && !window.__hopscopeAtMark) window.__hopscopeAtMark = drawn();
    return mark(name, options);
  };
  // performance.now(), not the callback's frame time: a long task may have started after the frame was due.
  const tick = () => {
    const d = drawn();
    if (window.__hopscopeAtMark && d.charts >= ${CHARTS} && d.heatmap && d.services >= ${SERVICES.length}) window.__hopscopeDrawnFrame = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`;

const PLUGIN_BASE = '/public/plugins/hopscope-rca-app/';

/** A cold load: a fresh context (empty cache, new renderer), the Overview opened, its ready mark awaited. */
async function coldLoad(browser: Browser, url: string): Promise<ColdSample> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    await context.addInitScript(WATCH_READY);
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForFunction('window.__hopscopeDrawnFrame !== undefined', undefined, {
      timeout: 30_000,
      polling: 10,
    });
    return (await page.evaluate(`(() => {
      const ready = performance.getEntriesByName('hopscope:overview:ready')[0].startTime;
      const res = performance.getEntriesByType('resource').filter((e) => e.startTime < ready);
      const js = res.filter((e) => new URL(e.name).pathname.startsWith(${JSON.stringify(PLUGIN_BASE)}) && e.name.endsWith('.js'));
      const data = res.filter((e) => new URL(e.name).pathname.startsWith('/api/plugin-proxy/'));
      const mod = js.find((e) => e.name.endsWith('/module.js'));
      return {
        ready,
        drawnFrame: window.__hopscopeDrawnFrame,
        atMark: window.__hopscopeAtMark,
        moduleStart: mod ? mod.startTime : NaN,
        pluginJsEnd: Math.max(...js.map((e) => e.responseEnd)),
        firstData: Math.min(...data.map((e) => e.startTime)),
        dataEnd: Math.max(...data.map((e) => e.responseEnd)),
        jsFiles: js.map((e) => new URL(e.name).pathname.split('/').pop()),
        jsBytes: js.reduce((n, e) => n + e.encodedBodySize, 0),
      };
    })()`)) as ColdSample;
  } finally {
    await context.close();
  }
}

/** The phases of a cold load as table rows (median, min–max over the rounds). */
function coldRows(label: string, xs: ColdSample[]): Array<Record<string, string | number>> {
  const row = (measure: string, vals: number[], target: number | string = '') => ({
    measure: `${label}${measure}`,
    median: Math.round(median(vals)),
    'min–max': `${Math.round(Math.min(...vals))}–${Math.round(Math.max(...vals))}`,
    target,
    rounds: vals.length,
  });
  return [
    row(
      'Overview ready, cold load (ms)',
      xs.map((x) => x.ready),
      1500
    ),
    row(
      '  first frame with every chart, the heatmap and the services drawn (ms)',
      xs.map((x) => x.drawnFrame)
    ),
    {
      measure: `${label}  rounds whose mark came before all data was drawn (charts/heatmap/services)`,
      median: xs.filter((x) => x.atMark.charts < CHARTS || !x.atMark.heatmap || x.atMark.services < SERVICES.length)
        .length,
      'min–max': '',
      target: 0,
      rounds: xs.length,
    },
    row(
      "  host boot until module.js requested (Grafana's share, ms)",
      xs.map((x) => x.moduleStart)
    ),
    row(
      '  plugin: module.js requested → ready (ms)',
      xs.map((x) => x.ready - x.moduleStart)
    ),
    row(
      '    module.js requested → plugin JS fetched (ms)',
      xs.map((x) => x.pluginJsEnd - x.moduleStart)
    ),
    row(
      '    module.js requested → first data request (ms)',
      xs.map((x) => x.firstData - x.moduleStart)
    ),
    row(
      '    first data request → last data answer (ms)',
      xs.map((x) => x.dataEnd - x.firstData)
    ),
    row(
      '    last data answer → ready (render, ms)',
      xs.map((x) => x.ready - x.dataEnd)
    ),
    row(
      `  plugin JS before ready (KiB, ${xs[0].jsFiles.length} files: ${xs[0].jsFiles.join(' ')})`,
      xs.map((x) => x.jsBytes / 1024)
    ),
  ];
}

/** An A/B result from values measured elsewhere (same round order as abCompare: round i holds A[i] and B[i]). */
function pairResult(
  name: string,
  unit: string,
  a: { label: string; values: number[] },
  b: { label: string; values: number[] }
): AbResult {
  const ratios = a.values.map((v, i) => b.values[i] / v);
  return {
    name,
    unit,
    a: { ...a, median: median(a.values) },
    b: { ...b, median: median(b.values) },
    ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
  };
}

const proxy = await startStandInProxy({ delayMs: PROXY_DELAY_MS });
const host = await startTestHost({
  proxyUrl: proxy.url,
  ...(process.env.HOPSCOPE_BENCH_DIST ? { dist: process.env.HOPSCOPE_BENCH_DIST } : {}),
});
const baselineHost = BASELINE_DIST ? await startTestHost({ proxyUrl: proxy.url, dist: BASELINE_DIST }) : undefined;
const browser = await launchBrowser();
const rows: Array<Record<string, string | number>> = [];
const json: Record<string, unknown> = {};
const overviewQuery = { query: { from: String(FROM), to: String(NOW) } };
try {
  // Cold loads: one fresh context per round; against a baseline build, alternated A/B (abCompare).
  const cold: ColdSample[] = [];
  const coldB: ColdSample[] = [];
  let coldAb: AbResult | undefined;
  if (baselineHost) {
    coldAb = await abCompare({
      name: 'Overview ready, cold load',
      unit: 'ms',
      rounds: COLD_ROUNDS,
      a: {
        label: process.env.HOPSCOPE_BENCH_DIST ?? 'dist/',
        run: async () => {
          const x = await coldLoad(browser, appUrl(host, 'overview', overviewQuery));
          cold.push(x);
          return x.ready;
        },
      },
      b: {
        label: BASELINE_DIST!,
        run: async () => {
          const x = await coldLoad(browser, appUrl(baselineHost, 'overview', overviewQuery));
          coldB.push(x);
          return x.ready;
        },
      },
    });
  } else {
    for (let i = 0; i < COLD_ROUNDS; i++) {
      cold.push(await coldLoad(browser, appUrl(host, 'overview', overviewQuery)));
    }
  }
  rows.push(...coldRows(baselineHost ? 'A: ' : '', cold));
  if (baselineHost) {
    rows.push(...coldRows('B: ', coldB));
  }
  json.cold = cold;
  json.coldBaseline = coldB;

  let heatAb: AbResult | undefined;
  if (!COLD_ONLY) {
    const { page, context } = await openAppPage(browser);
    const wait = (expr: string, timeout = 30_000) => page.waitForFunction(expr, undefined, { timeout, polling: 10 });

    // Overview ready + heatmap paint, ROUNDS navigations in one context: the first fills the cache, the rest are warm.
    const ready: number[] = [];
    const heat: number[] = [];
    for (let i = 0; i < ROUNDS + 1; i++) {
      await page.goto(appUrl(host, 'overview', overviewQuery), { waitUntil: 'commit' });
      await wait(`${entries('hopscope:overview:ready')}.length > 0 && ${heatmapEntries}.length > 0`);
      ready.push(((await page.evaluate(entries('hopscope:overview:ready'))) as number[])[0]);
      heat.push(Math.max(...((await page.evaluate(heatmapEntries)) as number[])));
    }
    const warm = ready.slice(1);
    rows.push({
      measure: 'Overview ready, warm navigations (HTTP cache filled, ms)',
      median: Math.round(median(warm)),
      'min–max': `${Math.round(Math.min(...warm))}–${Math.round(Math.max(...warm))}`,
      target: 1500,
      rounds: warm.length,
    });
    rows.push({
      measure: `Heatmap ${ROWS}×${COLS} paint (ms)`,
      median: median(heat),
      'min–max': `${Math.min(...heat).toFixed(1)}–${Math.max(...heat).toFixed(1)}`,
      target: 50,
      rounds: heat.length,
    });
    json.overviewWarmReadyMs = warm;
    json.heatmapMs = heat;

    // A/B: the heatmap's ImageData path vs one fillRect per cell, same grid, same canvas size, alternated.
    heatAb = await abCompare({
      name: `heatmap ${ROWS}×${COLS} paint`,
      unit: 'ms',
      rounds: ROUNDS,
      a: {
        label: 'ImageData + scaled drawImage (app)',
        run: () =>
          page.evaluate(`(() => { const W = 1200, H = 480, R = ${ROWS}, C = ${COLS}; const cv = document.createElement('canvas'); cv.width = W; cv.height = H; const ctx = cv.getContext('2d'); const t0 = performance.now();
          const img = new ImageData(C, R); for (let i = 0; i < R * C; i++) { const v = ((Math.floor(i / C) * 13 + i % C) % 97) / 97; img.data[i*4] = v*255; img.data[i*4+1] = 80; img.data[i*4+2] = 255 - v*255; img.data[i*4+3] = 255; }
          const off = document.createElement('canvas'); off.width = C; off.height = R; off.getContext('2d').putImageData(img, 0, 0); ctx.imageSmoothingEnabled = false; ctx.drawImage(off, 0, 0, W, H); ctx.getImageData(0, 0, 1, 1);
          return performance.now() - t0; })()`) as Promise<number>,
      },
      b: {
        label: 'fillRect per cell',
        run: () =>
          page.evaluate(`(() => { const W = 1200, H = 480, R = ${ROWS}, C = ${COLS}; const cv = document.createElement('canvas'); cv.width = W; cv.height = H; const ctx = cv.getContext('2d'); const t0 = performance.now();
          const w = W / C, h = H / R; for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) { const v = ((r * 13 + c) % 97) / 97; ctx.fillStyle = 'rgb(' + Math.round(v*255) + ',80,' + Math.round(255 - v*255) + ')'; ctx.fillRect(c * w, r * h, w, h); } ctx.getImageData(0, 0, 1, 1);
          return performance.now() - t0; })()`) as Promise<number>,
      },
    });
    json.heatmapAb = heatAb;

    // 5,000-span trace: build (d3-hierarchy, exclusive time, critical path) + icicle draw.
    const build: number[] = [];
    const draw: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(appUrl(host, `traces/${TRACE_ID}`, { query: { from: String(FROM), to: String(NOW) } }), {
        waitUntil: 'commit',
      });
      await wait(`${entries('hopscope:trace-tree-build')}.length > 0 && ${entries('hopscope:icicle')}.length > 0`);
      build.push(((await page.evaluate(entries('hopscope:trace-tree-build'))) as number[])[0]);
      draw.push(Math.max(...((await page.evaluate(entries('hopscope:icicle'))) as number[])));
    }
    const total = build.map((b, i) => b + draw[i]);
    rows.push({
      measure: '5,000-span trace: tree build (ms)',
      median: median(build),
      'min–max': spread(build),
      target: '',
      rounds: ROUNDS,
    });
    rows.push({
      measure: '5,000-span trace: icicle draw (ms)',
      median: median(draw),
      'min–max': spread(draw),
      target: '',
      rounds: ROUNDS,
    });
    rows.push({
      measure: '5,000-span trace: build + draw (ms)',
      median: median(total),
      'min–max': spread(total),
      target: 200,
      rounds: ROUNDS,
    });
    json.traceBuildMs = build;
    json.traceDrawMs = draw;

    // Drill-down click (warm: the pages' code is loaded): on Services, click a service; time until its pods are on
    // screen, measured in the page. Links found by test id (older builds) or as the tables' links (this one).
    const clicks: number[] = [];
    const linkTo = (text: string, oldId: string) =>
      `(document.querySelector('[data-testid="${oldId}"]') || [...document.querySelectorAll('[data-testid^="data-testid Panel header"] a')].find((a) => a.textContent.trim() === ${JSON.stringify(text)}))`;
    for (let i = 0; i < ROUNDS; i++) {
      const svc = SERVICES[i % SERVICES.length];
      const serviceLink = linkTo(svc, `data-testid hopscope-service-link-${svc}`);
      const podLink = linkTo(`${svc}-1`, `data-testid hopscope-pod-link-${svc}-1`);
      await page.goto(appUrl(host, 'services', { query: { from: String(FROM), to: String(NOW) } }), {
        waitUntil: 'commit',
      });
      await wait(`!!${serviceLink}`);
      const ms = (await page.evaluate(`new Promise((resolve) => {
        const t0 = performance.now();
        const done = () => ${podLink};
        const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); requestAnimationFrame(() => resolve(performance.now() - t0)); } });
        obs.observe(document.body, { childList: true, subtree: true });
        ${serviceLink}.click();
      })`)) as number;
      clicks.push(ms);
    }
    rows.push({
      measure: 'Drill-down click → pods on screen, warm (ms)',
      median: median(clicks),
      'min–max': spread(clicks),
      target: 100,
      rounds: ROUNDS,
    });
    json.drilldownClickMs = clicks;
    await context.close();
  }
  report(
    `App render (Chromium, performance marks${PROXY_DELAY_MS ? `, proxy answers after ${PROXY_DELAY_MS} ms` : ''})`,
    rows,
    json
  );
  if (heatAb) {
    report('Heatmap paint A/B', [abRow(heatAb)], heatAb);
  }
  if (coldAb) {
    const plugin = pairResult(
      'plugin: module.js requested → ready',
      'ms',
      { label: coldAb.a.label, values: cold.map((x) => x.ready - x.moduleStart) },
      { label: coldAb.b.label, values: coldB.map((x) => x.ready - x.moduleStart) }
    );
    const drawn = pairResult(
      'first frame with all data drawn',
      'ms',
      { label: coldAb.a.label, values: cold.map((x) => x.drawnFrame) },
      { label: coldAb.b.label, values: coldB.map((x) => x.drawnFrame) }
    );
    report('Cold load A/B (fresh context per round, alternated)', [abRow(coldAb), abRow(plugin), abRow(drawn)], {
      ready: coldAb,
      plugin,
      drawn,
    });
  }
} finally {
  await browser.close();
  await host.close();
  await baselineHost?.close();
  await proxy.close();
}
