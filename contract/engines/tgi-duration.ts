/**
 * TGI's router records its request span's durations as text: `format!("{queue_time:?}")` of a Rust
 * `std::time::Duration` (router/src/server.rs, see ./sources). Rust's Debug format picks the largest unit that is
 * at least 1 — `s`, then `ms`, `µs` (U+00B5), `ns` — and prints every significant fractional digit, trailing zeros
 * trimmed: `1.5s`, `12.345678ms`, `850µs`, `0ns`. Never minutes.
 */

const UNIT_MS: Record<string, number> = { s: 1000, ms: 1, µs: 1e-3, μs: 1e-3, us: 1e-3, ns: 1e-6 };
const DURATION_RE = /^\s*(\d+(?:\.\d+)?)\s*(s|ms|µs|μs|us|ns)\s*$/;

/**
 * Milliseconds of a TGI duration string (`"12.3ms"`, `"850µs"`, `"1.2s"`, `"0ns"`; the Greek μ and `us` are accepted
 * too), or undefined when the text is not one. A number is taken as milliseconds already.
 */
export function parseTgiDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = DURATION_RE.exec(v);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2]];
}

/** `int.frac` with the fraction's trailing zeros trimmed, as Rust's `fmt_decimal` prints without a precision. */
function decimal(int: number, frac: number, digits: number, unit: string): string {
  if (frac === 0) return `${int}${unit}`;
  const f = String(frac).padStart(digits, '0').replace(/0+$/, '');
  return `${int}.${f}${unit}`;
}

/** A duration in milliseconds written as TGI writes it (Rust's `Duration` Debug format, nanosecond resolution). */
export function formatTgiDuration(ms: number): string {
  const nanos = Math.max(0, Math.round(ms * 1e6));
  const secs = Math.floor(nanos / 1e9);
  const sub = nanos % 1e9;
  if (secs > 0) return decimal(secs, sub, 9, 's');
  if (sub >= 1e6) return decimal(Math.floor(sub / 1e6), sub % 1e6, 6, 'ms');
  if (sub >= 1e3) return decimal(Math.floor(sub / 1e3), sub % 1e3, 3, 'µs');
  return `${sub}ns`;
}
