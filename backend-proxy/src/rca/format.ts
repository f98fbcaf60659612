/** Numbers as the engine's answers write them. */
export const round = (x: number): number => Math.round(x * 1000) / 1000;
export const fmtMs = (x: number): string =>
  x >= 100 ? `${Math.round(x)} ms` : x >= 10 ? `${x.toFixed(1)} ms` : `${x.toFixed(2)} ms`;
/** A duration as a person reads it in a sentence: "2.8 s", "40 ms", "850 µs". */
export const fmtDur = (x: number): string =>
  x >= 1000
    ? `${(x / 1000).toFixed(x >= 10_000 ? 0 : 1)} s`
    : x >= 1
      ? `${Math.round(x)} ms`
      : `${Math.round(x * 1000)} µs`;
/** A count with thousands separators: 7,900. */
export const fmtCount = (x: number): string => Math.round(x).toLocaleString('en-US');
/** A 0..1 share as a percentage: "98 %". */
export const fmtPct = (x: number): string => `${Math.round(x * 100)} %`;
