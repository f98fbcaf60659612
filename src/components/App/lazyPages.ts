/** The chunk of the pages other than the Overview (OtherPages.tsx), fetched once: on demand, or ahead when idle. */
let chunk: Promise<typeof import('./OtherPages')> | undefined;

export const loadOtherPages = (): Promise<typeof import('./OtherPages')> => (chunk ??= import('./OtherPages'));

/** Fetches the other pages' chunk when the browser is idle (after the Overview is ready), so a drill-down waits for no code. */
export function preloadOtherPages(): void {
  const start = () => void loadOtherPages().catch(() => undefined); // a failure shows when such a page renders
  if (typeof requestIdleCallback === 'function') {
    requestIdleCallback(start, { timeout: 2000 });
  } else {
    setTimeout(start, 200);
  }
}
