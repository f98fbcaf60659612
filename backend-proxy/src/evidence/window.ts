/**
 * The kernel events a root cause reads for a window: the exporters' rings when every one of them still reaches back
 * to the window, else the rings merged with the kept events, with what is missing said (retention, gaps, since when
 * evidence is kept) and which source was used.
 */
import { type KernelEvent, type KernelEvidenceUsed, type SourceStatus } from '../../../contract';
import type { Database } from '../db/database';
import { queryKernelEvidence } from '../db/kernel-evidence-repo';
import * as streams from '../db/kernel-stream-repo';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { callJson } from '../sources/http';
import { formatDuration } from './format-duration';

/** Kept events one root cause reads at most. */
const KEPT_PAGE = 10_000;

const iso = (ms: number): string => new Date(ms).toISOString();

const GAP_WHY: Record<streams.GapReason, string> = {
  evicted: "the exporter's ring overwrote them before they were read",
  exporter_restarted: 'the exporter restarted meanwhile',
  ahead: 'the exporter did not know the resume position',
  suppressed: "over the exporter's per-event budget: counted in its metrics, not recorded one by one",
  queue_full: "the proxy's evidence queue was full",
};

/** The events a root cause reads for a window, and where they came from. */
export interface KernelWindow {
  events: KernelEvent[];
  sources: SourceStatus[];
  dropped: number;
  suppressed: number;
  invalid: number;
  truncated: boolean;
  used: KernelEvidenceUsed;
  /** What the kept evidence could not cover, and which source was used (for the answer's `missing`). */
  notes: string[];
}

/** Where a window's events are read from. */
export interface WindowSources {
  db: Database;
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
  retentionMs: number;
  /** HOPSCOPE_EXPORTER_TOKEN. */
  token?: string;
  /** Deadline of a ring lookup. */
  timeoutMs: number;
}

/** Same event from a ring and from the database (the database normalises `detail`, so it is not part of this). */
const identity = (e: KernelEvent): string =>
  `${e.node ?? ''}\u0000${e.ts}\u0000${e.type}\u0000${e.pid}\u0000${e.durationMs ?? ''}\u0000${e.traceId ?? ''}`;

/** The oldest event an exporter's ring holds now (any type); undefined when unknown or empty. */
async function ringStart(o: WindowSources, e: ExporterSource): Promise<number | undefined> {
  try {
    const r = await callJson<{ events?: Array<{ ts?: unknown }> }>(`${e.baseUrl}/events?after=0&limit=1`, {
      source: e.name,
      timeoutMs: o.timeoutMs,
      retries: 0,
      ...(o.token ? { headers: { authorization: `Bearer ${o.token}` } } : {}),
    });
    const ts = r.status === 200 ? r.body?.events?.[0]?.ts : undefined;
    return typeof ts === 'number' ? ts : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A window's kernel events: the exporters' rings when every one answers and still reaches back to `from`; else the
 * rings merged with the notable events kept in the database, saying so, and what is missing (retention, gaps).
 */
export async function kernelWindow(
  o: WindowSources,
  q: { from: number; to: number; limit: number }
): Promise<KernelWindow> {
  const exporters = o.exporters;
  const ring = exporters.length
    ? await eventsFromAll(exporters, { from: q.from, to: q.to, limit: q.limit })
    : undefined;
  // Asked after the events: a ring that still starts before the window now held all of it when it answered.
  const starts = await Promise.all(exporters.map((e) => ringStart(o, e)));
  const sources = ring ? ring.sources : [];
  let ringsFromMs: number | undefined;
  for (const s of starts) if (s !== undefined && (ringsFromMs === undefined || s > ringsFromMs)) ringsFromMs = s;
  const answered = sources.filter((s) => s.ok).length;
  const covered =
    exporters.length > 0 && answered === exporters.length && starts.every((s) => s !== undefined && s <= q.from);
  const base = {
    events: ring?.events ?? [],
    sources,
    dropped: ring?.dropped ?? 0,
    suppressed: ring?.suppressed ?? 0,
    invalid: ring?.invalid ?? 0,
    truncated: ring?.truncated ?? false,
  };
  if (covered)
    return { ...base, used: { source: 'rings', ...(ringsFromMs !== undefined ? { ringsFromMs } : {}) }, notes: [] };
  const notes: string[] = [];
  const t0 = performance.now();
  try {
    const db = o.db;
    const [kept, gaps, keptSince] = await Promise.all([
      queryKernelEvidence(db, { from: q.from, to: q.to, limit: KEPT_PAGE }),
      streams.gapsOverlapping(db, q.from, q.to, 50),
      streams.keptSinceMs(db),
    ]);
    sources.push({
      source: 'database (kept kernel evidence)',
      ok: true,
      latencyMs: Math.round(performance.now() - t0),
    });
    const seen = new Set(base.events.map(identity));
    const events = base.events.slice();
    let added = 0;
    for (const e of kept.events)
      if (!seen.has(identity(e))) {
        events.push(e);
        added++;
      }
    events.sort((a, b) => a.ts - b.ts);
    const source = answered ? 'rings+kept' : 'kept';
    const reach =
      ringsFromMs !== undefined
        ? `the oldest event they still hold is from ${iso(ringsFromMs)}`
        : 'they hold nothing older';
    const why = !exporters.length
      ? 'no bpf-exporter is configured'
      : answered < exporters.length
        ? `${exporters.length - answered} of ${exporters.length} exporter(s) did not answer`
        : `the exporters' rings no longer reach back to ${iso(q.from)} (${reach})`;
    notes.push(
      `kernel events: ${why}; ${added} notable event(s) kept in the database were used for this window (failed or slow connects and TLS handshakes, retransmits, GPU allocation failures; routine events are not kept)`
    );
    if (kept.retainedFromMs !== null && q.from < kept.retainedFromMs) {
      notes.push(
        `kernel evidence before ${iso(kept.retainedFromMs)} is past the retention of ${formatDuration(o.retentionMs)} (HOPSCOPE_KERNEL_EVIDENCE_RETENTION)`
      );
    } else if (keptSince === null) {
      notes.push('kernel evidence: none has been kept in the database yet (no exporter stream read so far)');
    } else if (q.from < keptSince) {
      notes.push(
        `kernel evidence is kept only since ${iso(keptSince)} (when this proxy first read the exporters' streams)`
      );
    }
    for (const g of gaps.slice(0, 5)) {
      notes.push(
        `kernel evidence of ${g.node ?? g.exporter} is missing from ${iso(g.fromMs)} to ${iso(g.toMs)}: ${GAP_WHY[g.reason] ?? g.reason}${g.missed !== null ? ` (${g.missed} event(s))` : ''}`
      );
    }
    if (gaps.length > 5) notes.push(`kernel evidence: ${gaps.length - 5} more gap(s) in this window`);
    if (kept.truncated)
      notes.push(
        `kernel events: more notable events are kept for this window than one answer reads (${KEPT_PAGE}); the earliest were used`
      );
    const used: KernelEvidenceUsed = {
      source,
      ...(ringsFromMs !== undefined ? { ringsFromMs } : {}),
      ...(kept.retainedFromMs !== null ? { retainedFromMs: kept.retainedFromMs } : {}),
      ...(keptSince !== null ? { keptSinceMs: keptSince } : {}),
      ...(gaps.length
        ? {
            gaps: gaps.map((g) => ({
              node: g.node ?? g.exporter,
              fromMs: g.fromMs,
              toMs: g.toMs,
              reason: g.reason,
              missed: g.missed,
            })),
          }
        : {}),
    };
    return { ...base, events, used, notes };
  } catch (err) {
    const msg = (err as Error).message;
    sources.push({
      source: 'database (kept kernel evidence)',
      ok: false,
      latencyMs: Math.round(performance.now() - t0),
      error: msg,
    });
    notes.push(
      `kernel events: the exporters' rings do not cover this window and the evidence kept in the database could not be read (${msg})`
    );
    return {
      ...base,
      used: { source: answered ? 'rings' : 'none', ...(ringsFromMs !== undefined ? { ringsFromMs } : {}) },
      notes,
    };
  }
}
