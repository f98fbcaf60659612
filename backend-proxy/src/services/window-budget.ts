/**
 * A global budget for window work (GET /api/rca over a time range, run compare): how many window answers are worked
 * on at once, how many traces they may hold together, and about how many bytes of span data. A request is admitted
 * with the traces it may read (its per-request cap) reserved up front; past the answers or traces the budget holds,
 * it is refused at once: 503 with Retry-After (nothing is read, nothing piles up). Bytes are counted as traces are
 * read: a read that would go past the byte budget stops that request's reading (its answer says so in `missing`),
 * so ten hostile ranges at once cannot hold the proxy's memory hostage.
 */
import type { Span } from '../../../contract';
import { busy } from '../domain/errors';

export interface WindowBudgetLimits {
  /** Window answers worked on at once (HOPSCOPE_WINDOW_MAX_CONCURRENT). */
  windows: number;
  /** Traces reserved by those answers together (HOPSCOPE_WINDOW_MAX_TRACES). */
  traces: number;
  /** Approximate bytes of span data they hold together (HOPSCOPE_WINDOW_MAX_BYTES). */
  bytes: number;
  /** What a refused client is told to wait (Retry-After, seconds). */
  retryAfterS: number;
}

export const WINDOW_BUDGET_DEFAULTS: WindowBudgetLimits = {
  windows: 10,
  traces: 10_000,
  bytes: 128 * 1024 * 1024,
  retryAfterS: 5,
};

/** Approximate heap bytes of a span as the proxy holds it (the embedded store's estimate: ~400 + its strings). */
export function spanBytes(s: Span): number {
  let n = 400 + s.name.length + s.service.length;
  for (const k in s.attributes) {
    const v = s.attributes[k];
    n += k.length + (typeof v === 'string' ? v.length : 8) + 16;
  }
  return n;
}

export const traceBytes = (spans: Span[]): number => {
  let n = 800;
  for (const s of spans) n += spanBytes(s);
  return n;
};

const mib = (b: number): string => `${Math.round(b / 1048576)} MiB`;

/** One admitted window's share of the budget; `release` once its answer is sent or failed (idempotent). */
export interface WindowTicket {
  /**
   * Holds `bytes` more; false (nothing held) when that would pass the budget: the caller reads no more. `always`:
   * held whatever the budget (data read already), so the answers admitted next see it.
   */
  hold(bytes: number, always?: boolean): boolean;
  /** The byte budget, for the caller's note. */
  readonly byteBudget: number;
  release(): void;
}

export class WindowBudget {
  readonly limits: WindowBudgetLimits;
  private windows = 0;
  private traces = 0;
  private bytes = 0;

  constructor(limits: Partial<WindowBudgetLimits> = {}) {
    this.limits = { ...WINDOW_BUDGET_DEFAULTS, ...limits };
  }

  /** What is held now (for /api/health and tests). */
  held(): { windows: number; traces: number; bytes: number } {
    return { windows: this.windows, traces: this.traces, bytes: this.bytes };
  }

  /**
   * Admits one window answer reserving `traces`, or throws 503 + Retry-After (`what` names the request in the
   * message). One window is always admitted when none runs, whatever it reserves (its own cap bounds it).
   */
  admit(what: string, traces: number): WindowTicket {
    const l = this.limits;
    if (this.windows > 0 && this.windows + 1 > l.windows)
      throw busy(
        `${what}: the proxy is working on ${this.windows} window answers already (at most ${l.windows} at once, HOPSCOPE_WINDOW_MAX_CONCURRENT); retry after ${l.retryAfterS} s`,
        l.retryAfterS
      );
    if (this.windows > 0 && this.traces + traces > l.traces)
      throw busy(
        `${what}: the window answers in progress hold ${this.traces} traces; this one may read ${traces}, past the ${l.traces} held at once (HOPSCOPE_WINDOW_MAX_TRACES); retry after ${l.retryAfterS} s or ask fewer (maxTraces)`,
        l.retryAfterS
      );
    if (this.windows > 0 && this.bytes >= l.bytes)
      throw busy(
        `${what}: the window answers in progress hold about ${mib(this.bytes)} of spans (at most ${mib(l.bytes)}, HOPSCOPE_WINDOW_MAX_BYTES); retry after ${l.retryAfterS} s`,
        l.retryAfterS
      );
    this.windows++;
    this.traces += traces;
    let bytes = 0;
    let released = false;
    return {
      byteBudget: l.bytes,
      hold: (n: number, always = false): boolean => {
        if (released) return false;
        // A window's first trace is always held (an answer of nothing helps no one); past that, the budget decides.
        if (!always && bytes > 0 && this.bytes + n > l.bytes) return false;
        bytes += n;
        this.bytes += n;
        return true;
      },
      release: (): void => {
        if (released) return;
        released = true;
        this.windows--;
        this.traces -= traces;
        this.bytes -= bytes;
      },
    };
  }
}
