/** Query-parameter parsing shared by routes: time ranges (epoch ms, ISO, Grafana-style `now-15m`), numbers, names. */
import type { TimeRange } from '../domain/time-range';
import { badRequest } from './errors';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The times the proxy accepts: 1970-01-01 to 9999-12-31 (four-digit ISO years). Beyond them a time is no instant
 * anyone asks about, and `Date` cannot even print some (toISOString throws past ±8.64e15 ms).
 */
export const MIN_TIME_MS = 0;
export const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Parses one time: epoch ms, epoch s (10 digits), ISO 8601, `now`, `now-15m`, `now+1h`. Undefined: not a time; a
 * time outside MIN_TIME_MS..MAX_TIME_MS (`9000000000000000`, `now-1000000000w`) is a 400 saying so, whoever calls.
 */
export function parseTime(raw: string, now = Date.now()): number | undefined {
  const s = raw.trim();
  let t: number | undefined;
  if (/^\d+(\.\d+)?$/.test(s)) {
    const n = Number(s);
    t = n < 1e11 ? n * 1000 : n; // seconds vs milliseconds
  } else {
    const rel = /^now(?:([+-])(\d+)(ms|s|m|h|d|w))?$/.exec(s);
    if (rel) {
      const d = rel[1] ? Number(rel[2]) * UNIT_MS[rel[3]] : 0;
      t = rel[1] === '-' ? now - d : now + d;
    } else if (/^\d{4}-\d{2}-\d{2}/.test(s)) {
      const p = Date.parse(s);
      if (!Number.isFinite(p)) return undefined;
      t = p;
    } else return undefined;
  }
  if (!(t >= MIN_TIME_MS && t <= MAX_TIME_MS)) {
    throw badRequest(
      `time "${s.slice(0, 40)}" is out of range: times run from 1970-01-01 to 9999-12-31 (epoch ms ${MIN_TIME_MS}..${MAX_TIME_MS})`
    );
  }
  return t;
}

/** Parses a duration like `15s`, `1m`, `500ms` or a bare number of seconds. */
function parseDurationMs(raw: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(raw.trim());
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] ?? 's'];
}

export type { TimeRange };

type Query = Record<string, unknown>;

function str(q: Query, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name}: give it once, as a single value`);
  return v;
}

export function stringParam(q: Query, name: string): string | undefined {
  return str(q, name);
}

/** One time parameter: a 400 naming the parameter when it is not a time, or out of range. */
export function namedTime(name: string, raw: string, now = Date.now()): number {
  let t: number | undefined;
  try {
    t = parseTime(raw, now);
  } catch (err) {
    throw badRequest(`${name}: ${(err as Error).message}`);
  }
  if (t === undefined) throw badRequest(`${name}: "${raw.slice(0, 60)}" is not a time (epoch ms, ISO 8601 or now-15m)`);
  return t;
}

/** `from`/`to` with defaults (last `defaultSpanMs`), validated: from < to, span bounded. */
export function timeRange(q: Query, defaultSpanMs = 15 * 60_000, maxSpanMs = 31 * 86_400_000): TimeRange {
  const now = Date.now();
  const fromRaw = str(q, 'from');
  const toRaw = str(q, 'to');
  const to = toRaw === undefined ? now : namedTime('to', toRaw, now);
  const from = fromRaw === undefined ? Math.max(MIN_TIME_MS, to - defaultSpanMs) : namedTime('from', fromRaw, now);
  if (from >= to) throw badRequest(`from (${from}) must be before to (${to})`);
  if (to - from > maxSpanMs)
    throw badRequest(`time range too long: ${(to - from) / 86_400_000} days (max ${maxSpanMs / 86_400_000})`);
  return { from, to };
}

export function numberParam(q: Query, name: string, min: number, max: number): number | undefined {
  const raw = str(q, name);
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw badRequest(`${name}: "${raw}" is not a number`);
  if (n < min || n > max) throw badRequest(`${name}: ${n} is out of range ${min}..${max}`);
  return n;
}

/** Names that end up inside PromQL/TraceQL selectors are whitelisted to a conservative alphabet. */
export const NAME_RE = /^[A-Za-z0-9_.:\-/]{1,200}$/;

export function nameParam(q: Query, name: string): string | undefined {
  const raw = str(q, name);
  if (raw === undefined || raw === '') return undefined;
  if (!NAME_RE.test(raw)) throw badRequest(`${name}: "${raw.slice(0, 60)}" has characters outside [A-Za-z0-9_.:-/]`);
  return raw;
}

export function pathName(raw: string, what: string): string {
  if (!NAME_RE.test(raw)) throw badRequest(`${what}: "${raw.slice(0, 60)}" has characters outside [A-Za-z0-9_.:-/]`);
  return raw;
}

export function enumParam<T extends string>(q: Query, name: string, values: readonly T[]): T | undefined {
  const raw = str(q, name);
  if (raw === undefined || raw === '') return undefined;
  if (!(values as readonly string[]).includes(raw))
    throw badRequest(`${name}: "${raw}" is not one of ${values.join('|')}`);
  return raw as T;
}

/** Step in ms: given or derived so a range has at most ~`points` points (Prometheus refuses > 11000). */
export function stepMs(q: Query, range: TimeRange, points = 240): number {
  const raw = str(q, 'step');
  if (raw !== undefined && raw !== '') {
    const d = parseDurationMs(raw);
    if (d === undefined || d <= 0) throw badRequest(`step: "${raw}" is not a positive duration (e.g. 15s, 1m)`);
    if ((range.to - range.from) / d > 11_000)
      throw badRequest(`step ${raw} gives more than 11000 points for this range`);
    return d;
  }
  return Math.max(1000, Math.ceil((range.to - range.from) / points / 1000) * 1000);
}

/** Aligns a range to its step (as Grafana does), so equal dashboards issue equal queries that can be shared. */
export function alignRange(range: TimeRange, step: number): TimeRange {
  const from = Math.floor(range.from / step) * step;
  const to = Math.max(from + step, Math.floor(range.to / step) * step);
  return { from, to };
}
