/**
 * The current view for a postmortem: Markdown (root causes, kernel evidence, faults and alerts gathered together,
 * rendered by ./postmortem-md) and a PNG of an app view rendered with playwright-core in Chromium. The view is a path
 * under HOPSCOPE_APP_URL only, so the renderer cannot be pointed at arbitrary hosts.
 */
import { existsSync } from 'node:fs';
import { appLink } from '../../../contract';
import type { ProxyConfig } from '../config';
import { busy, DomainError, notImplemented, upstream } from '../domain/errors';
import type { TimeRange } from '../domain/time-range';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import type { AlertService } from './alerts';
import { countByType } from '../drilldown';
import type { FaultService } from './faults';
import { renderPostmortem, type PostmortemData } from './postmortem-md';
import type { RcaService } from './rca';

const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]+/g;

/** A copy of `v` whose strings are single lines (control characters, line and paragraph separators → a space). */
export function oneLine<T>(v: T): T {
  if (typeof v === 'string') return v.replace(CONTROL, ' ') as T;
  if (Array.isArray(v)) return v.map(oneLine) as T;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = oneLine(x);
    return out as T;
  }
  return v;
}

/** PNG renders running at once (each its own Chromium), and renders waiting for one to finish. */
export const PNG_RENDERS_AT_ONCE = 2;
export const PNG_RENDERS_WAITING = 4;

/** A counting semaphore with a bounded queue: acquire() resolves to the release, or throws 503 when the queue is full. */
class Slots {
  private running = 0;
  private waiting: Array<() => void> = [];
  constructor(
    private max: number,
    private queue: number
  ) {}

  async acquire(): Promise<() => void> {
    if (this.running >= this.max) {
      if (this.waiting.length >= this.queue)
        throw busy(
          `${this.running} PNG exports are rendering and ${this.waiting.length} waiting (at most ${this.max} at once); retry shortly or use format=md`,
          5
        );
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes on: running stays the same
      else this.running--;
    };
  }
}

interface PostmortemQuery {
  range: TimeRange;
  view?: string;
  traceIds: string[];
  service?: string;
  pod?: string;
  /** Include the window root cause of the range (the Explain page's answer). */
  window?: boolean;
}

export class ExportService {
  constructor(
    private config: Pick<ProxyConfig, 'appUrl' | 'chromiumPath'>,
    private deps: { rca: RcaService; alerts: AlertService; faults: FaultService; exporters: ExporterSource[] }
  ) {}

  async markdown(q: PostmortemQuery): Promise<string> {
    const { range, pod } = q;
    const { rca, alerts, faults, exporters } = this.deps;
    const [traces, podEvidence, faultAnswer, alertsInRange, windowRca] = await Promise.all([
      Promise.all(
        q.traceIds.map(async (id): Promise<PostmortemData['traces'][number]> => {
          try {
            return { id, rca: await rca.forTrace(id) };
          } catch (err) {
            return { id, error: (err as Error).message };
          }
        })
      ),
      pod ? eventsFromAll(exporters, { from: range.from, to: range.to, pod, limit: 100_000 }) : undefined,
      faults.configured ? faults.inRange(range) : undefined,
      alerts.inRange(range),
      q.window
        ? rca.forRange({ range, service: q.service }).catch((err: unknown) => ({ error: (err as Error).message }))
        : undefined,
    ]);
    // What the Markdown echoes comes from spans, sources and users: one line each (a newline in a span name or a
    // source's error would start a heading or end a table row), the renderer escapes the rest.
    return renderPostmortem(
      oneLine({
        range,
        generatedMs: Date.now(),
        appUrl: this.config.appUrl,
        view: q.view,
        service: q.service,
        traces,
        pod:
          pod && podEvidence
            ? {
                name: pod,
                counts: countByType(podEvidence.events.filter((e) => e.pod === pod)),
                failed: podEvidence.sources.filter((s) => !s.ok),
              }
            : undefined,
        faults: faultAnswer ? { status: faultAnswer.sources[0], annotations: faultAnswer.annotations } : undefined,
        alerts: alertsInRange,
        window: windowRca,
      })
    );
  }

  /** Chromium renders at once, and waiting for a turn; past both, 503 with Retry-After. */
  private slots = new Slots(PNG_RENDERS_AT_ONCE, PNG_RENDERS_WAITING);

  /** `view` is an app path (validated by the caller). */
  async png(view: string): Promise<Buffer> {
    const executablePath = this.config.chromiumPath;
    if (!existsSync(executablePath))
      throw notImplemented(
        `PNG export needs Chromium at ${executablePath} (set HOPSCOPE_CHROMIUM); Markdown export works without it`
      );
    // A Chromium is hundreds of MB: a burst of exports waits its turn, and beyond the queue is told to come back.
    const release = await this.slots.acquire();
    try {
      return await this.render(executablePath, view);
    } finally {
      release();
    }
  }

  private async render(executablePath: string, view: string): Promise<Buffer> {
    const url = appLink(this.config.appUrl, view);
    const { chromium } = await import('playwright-core');
    let browser: Awaited<ReturnType<typeof chromium.launch>>;
    try {
      browser = await chromium.launch({
        executablePath,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
    } catch (err) {
      throw upstream(
        `could not start Chromium at ${executablePath}: ${(err as Error).message.split('\n')[0]}`,
        'render_failed'
      );
    }
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      const resp = await page.goto(url, { waitUntil: 'networkidle', timeout: 20_000 });
      if (!resp || resp.status() >= 400)
        throw upstream(`the app answered ${resp?.status() ?? 'nothing'} for ${url}`, 'render_failed');
      return await page.screenshot({ fullPage: true, type: 'png' });
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw upstream(`could not render ${url}: ${(err as Error).message.split('\n')[0]}`, 'render_failed');
    } finally {
      await browser.close();
    }
  }
}
