/**
 * Early data requests: module.js starts the first requests of the page being opened while the page's code (chunks)
 * is still downloading and compiling, instead of after the page has rendered (features/overview/prefetch.ts). The
 * page's own call (api/client.ts `request`) then takes the answer already on its way — once, only for the same
 * endpoint and the same parameters, only within `MAX_AGE_MS` — and validates it as usual. Anything else is an
 * ordinary request, so an early request changes when a page shows its data, never what it shows.
 * No Grafana import here: the store is plain data (and unit-tested as such).
 */

/** What a raw call gave: the answer's body, or what backendSrv rejected with (turned into an ApiError later). */
export type RawOutcome = { ok: true; data: unknown } | { ok: false; error: unknown };

/** An early answer older than this is not used (the page took too long to ask). */
export const MAX_AGE_MS = 30_000;

export interface EarlyRequest {
  path: string;
  params: Record<string, string>;
  /** Numeric params (epoch ms) allowed to differ by up to this much: a relative range resolved a moment earlier. */
  tolerance: Record<string, number>;
}

interface Pending extends EarlyRequest {
  startedAt: number;
  outcome: Promise<RawOutcome>;
}

const pending: Pending[] = [];

/** Records a request started early, for the page's own call to take. */
export function addPrefetched(request: EarlyRequest, outcome: Promise<RawOutcome>, now = Date.now()): void {
  pending.push({ ...request, startedAt: now, outcome });
}

/** Whether an early request answers the page's call: same endpoint, same parameters (within their tolerance). */
export function answers(early: EarlyRequest, path: string, params: Record<string, string>): boolean {
  const keys = Object.keys(params);
  if (early.path !== path || keys.length !== Object.keys(early.params).length) {
    return false;
  }
  return keys.every((k) => {
    if (!Object.hasOwn(early.params, k)) {
      return false;
    }
    if (early.params[k] === params[k]) {
      return true;
    }
    const tol = early.tolerance[k];
    return (
      tol !== undefined &&
      /^\d+$/.test(params[k]) &&
      /^\d+$/.test(early.params[k]) &&
      Math.abs(Number(params[k]) - Number(early.params[k])) <= tol
    );
  });
}

/** The early answer for this GET, taken (each serves a single call); undefined when there is none. */
export function takePrefetched(
  path: string,
  params: Record<string, string> | undefined,
  now = Date.now()
): Promise<RawOutcome> | undefined {
  for (let i = pending.length - 1; i >= 0; i--) {
    if (now - pending[i].startedAt > MAX_AGE_MS) {
      pending.splice(i, 1);
    }
  }
  const i = pending.findIndex((p) => answers(p, path, params ?? {}));
  return i < 0 ? undefined : pending.splice(i, 1)[0].outcome;
}

/** For tests: forget every early request. */
export function clearPrefetched(): void {
  pending.length = 0;
}
