/**
 * GET /api/export/postmortem — the current view for a postmortem.
 *   format=md  (default): Markdown with the time range, trace ids, ranked causes with evidence, faults, alerts, links back.
 *   format=png: a PNG of an app view (`view=/a/hopscope-rca-app/...`, a path under HOPSCOPE_APP_URL only, so the
 *               renderer cannot be pointed at arbitrary hosts) rendered with playwright-core in Chromium.
 */
import { existsSync } from 'node:fs';
import { Router } from 'express';
import type { ProxyConfig } from '../config';
import { HttpError, badRequest, notImplemented } from '../http/errors';
import { enumParam, nameParam, stringParam, timeRange } from '../http/params';
import { eventsFromAll } from '../sources/exporters';
import { settle } from '../sources/http';
import type { Sources } from '../sources';
import type { AlertManager } from '../alerts/manager';
import { rcaForTrace } from './rca';

const iso = (ms: number): string => new Date(ms).toISOString();
const md = (s: string): string => s.replace(/([\\`*_[\]|<>])/g, '\\$1');

function viewPath(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\/[A-Za-z0-9_.~\-/%?&=:,+]*$/.test(raw) || raw.startsWith('//')) throw badRequest('view: must be a path of the app, e.g. /a/hopscope-rca-app/traces/<id>?from=...');
  return raw;
}

export function exportRoutes(config: ProxyConfig, sources: Sources, alerts: AlertManager): Router {
  const r = Router();
  r.get('/export/postmortem', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const format = enumParam(q, 'format', ['md', 'png'] as const) ?? 'md';
    const range = timeRange(q, 60 * 60_000);
    const view = viewPath(stringParam(q, 'view'));
    const ids = (stringParam(q, 'traceId') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    if (ids.length > 10) throw badRequest('traceId: at most 10 trace ids per export');
    const service = nameParam(q, 'service');
    const pod = nameParam(q, 'pod');
    const base = config.appUrl.replace(/\/$/, '');
    if (format === 'png') {
      if (!view) throw badRequest('view: the app path to render is required for format=png');
      if (!existsSync(config.chromiumPath)) throw notImplemented(`PNG export needs Chromium at ${config.chromiumPath} (set HOPSCOPE_CHROMIUM); Markdown export works without it`);
      res.type('image/png').send(await renderPng(`${base}${view}`, config.chromiumPath));
      return;
    }
    const lines: string[] = [];
    lines.push('# Postmortem: Hopscope export', '');
    lines.push(`- **Time range:** ${iso(range.from)} → ${iso(range.to)} (${Math.round((range.to - range.from) / 60_000)} min)`);
    lines.push(`- **Generated:** ${iso(Date.now())}`);
    if (view) lines.push(`- **View:** [${md(view)}](${base}${view})`);
    lines.push(`- **Overview:** [golden metrics](${base}/a/hopscope-rca-app/overview?from=${range.from}&to=${range.to})`, '');
    const rcas = await Promise.all(ids.map(async (id) => {
      try { return { id, a: await rcaForTrace(sources, id) }; } catch (err) { return { id, err: err instanceof HttpError ? err.message : (err as Error).message }; }
    }));
    if (service) lines.push(`- **Service:** [${md(service)}](${base}/a/hopscope-rca-app/services/${encodeURIComponent(service)}?from=${range.from}&to=${range.to})`);
    if (pod) {
      lines.push(`- **Pod:** ${md(pod)}`);
      const k = await eventsFromAll(sources.exporters, { from: range.from, to: range.to, pod, limit: 100_000 });
      const counts: Record<string, number> = {};
      for (const e of k.events) if (e.pod === pod) counts[e.type] = (counts[e.type] ?? 0) + 1;
      const list = Object.entries(counts).map(([t, n]) => `${t} ×${n}`).join(', ');
      const failed = k.sources.filter((x) => !x.ok).map((x) => x.error).join('; ');
      lines.push(`- **Kernel evidence on ${md(pod)}:** ${list || 'none'}${failed ? ` (unavailable from: ${md(failed)})` : ''}`);
    }
    lines.push('');
    lines.push('## Traces and ranked causes', '');
    if (!ids.length) lines.push('_No trace ids given (add `traceId=` to the export)._', '');
    for (const x of rcas) {
      lines.push(`### Trace [\`${x.id}\`](${base}/a/hopscope-rca-app/traces/${x.id}?from=${range.from}&to=${range.to})`, '');
      if (!('a' in x) || !x.a) { lines.push(`Root cause unavailable: ${md(x.err ?? 'unknown error')}`, ''); continue; }
      lines.push(`Root cause computed in ${x.a.tookMs.toFixed(1)} ms${x.a.partial ? ' (partial trace)' : ''}.`, '');
      lines.push('| rank | service | pod | operation | score | self ms | baseline ms |', '|---|---|---|---|---|---|---|');
      for (const c of x.a.candidates.slice(0, 5)) {
        lines.push(`| ${c.rank} | ${md(c.service)} | ${md(c.pod)} | ${md(c.operation ?? '')} | ${c.score.toFixed(2)} | ${c.selfMs?.toFixed(1) ?? ''} | ${c.baselineMs?.toFixed(1) ?? ''} |`);
      }
      lines.push('');
      for (const c of x.a.candidates.slice(0, 3)) {
        lines.push(`**#${c.rank} ${md(c.service)} / ${md(c.pod)}** — evidence:`);
        for (const e of c.evidence) lines.push(`- \`${e.kind}\`: ${md(e.summary)}`);
        lines.push('');
      }
      if (x.a.missing.length) lines.push('Missing evidence:', ...x.a.missing.map((m) => `- ${md(m)}`), '');
    }
    const faults = sources.chain ? await settle('chain-control', () => sources.chain!.faults()) : undefined;
    const inRange = (faults?.value?.annotations ?? []).filter((a) => a.startMs <= range.to && (a.endMs ?? Infinity) >= range.from);
    lines.push('## Injected faults in range', '');
    if (!faults) lines.push('_No chain control configured._');
    else if (!faults.status.ok) lines.push(`_Unavailable: ${md(faults.status.error ?? '')}_`);
    else if (!inRange.length) lines.push('_None._');
    for (const f of inRange) lines.push(`- ${md(f.kind)} on ${md(f.target)}${f.magnitude !== undefined ? ` (magnitude ${f.magnitude})` : ''}: ${iso(f.startMs)} → ${f.endMs ? iso(f.endMs) : 'ongoing'}`);
    lines.push('', '## Alerts', '');
    const al = alerts.list().filter((a) => a.startsAt <= range.to && (a.endsAt ?? Infinity) >= range.from);
    if (!al.length) lines.push('_None in range._');
    for (const a of al) lines.push(`- **${a.state}** ${md(a.summary)} since ${iso(a.startsAt)} — [drill down](${base}${a.link})`);
    lines.push('');
    res.type('text/markdown; charset=utf-8').send(lines.join('\n'));
  });
  return r;
}

async function renderPng(url: string, executablePath: string): Promise<Buffer> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const resp = await page.goto(url, { waitUntil: 'networkidle', timeout: 20_000 });
    if (!resp || resp.status() >= 400) throw new HttpError(502, 'render_failed', `the app answered ${resp?.status() ?? 'nothing'} for ${url}`);
    return await page.screenshot({ fullPage: true, type: 'png' });
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(502, 'render_failed', `could not render ${url}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await browser.close();
  }
}
