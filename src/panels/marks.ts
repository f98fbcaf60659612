/**
 * Performance marks around the app's own renders, so the benchmarks (in Chromium) read what the code measured
 * itself: `performance.getEntriesByName('hopscope:heatmap')` etc.
 */
export function measureRender<T>(name: string, fn: () => T): T {
  const start = performance.now();
  try {
    return fn();
  } finally {
    try {
      performance.measure(`hopscope:${name}`, { start, end: performance.now() });
    } catch {
      // performance.measure with options is missing in very old browsers; the render still happened
    }
  }
}
