import type { SourceStatus } from '../../../contract';

/** Times a `SELECT 1` against a deadline; shared by both engines. */
export async function probe(run: () => Promise<unknown>, timeoutMs = 2000): Promise<SourceStatus> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { source: 'database', ok: true, latencyMs: Number((performance.now() - t0).toFixed(2)) };
  } catch (err) {
    return {
      source: 'database',
      ok: false,
      latencyMs: Number((performance.now() - t0).toFixed(2)),
      error: (err as Error).message,
    };
  } finally {
    clearTimeout(timer);
  }
}
