/** Numbers as the engine's answers write them. */
export const round = (x: number): number => Math.round(x * 1000) / 1000;
export const fmtMs = (x: number): string =>
  x >= 100 ? `${Math.round(x)} ms` : x >= 10 ? `${x.toFixed(1)} ms` : `${x.toFixed(2)} ms`;
