/** Milliseconds as a person reads them in a sentence (`850 ms`, `1.52 s`); panels format with Grafana units instead. */
export const fmtMs = (ms: number | null | undefined): string =>
  ms === null || ms === undefined || !Number.isFinite(ms)
    ? '—'
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)} s`
      : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
