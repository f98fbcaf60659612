import type { TimeRange } from '../domain/time-range';
import { promDuration } from '../services/promql';

/** The rate window for a range: the range itself, but at least 4 scrape intervals (`$__rate_interval`'s floor). */
export function rateWindow(range: TimeRange, scrapeMs: number): { window: string; notes: string[] } {
  const span = range.to - range.from;
  const min = 4 * scrapeMs;
  const notes =
    span < min
      ? [
          `the range (${Math.round(span / 1000)} s) is shorter than 4 scrape intervals: Prometheus rates are taken over the last ${Math.round(min / 1000)} s`,
        ]
      : [];
  return { window: promDuration(Math.max(span, min)), notes };
}
