/**
 * Polls `fn` every `everyMs` until it returns a truthy value (returned) or `timeoutMs` passes (an error naming
 * `what` and the last error `fn` threw): the tests wait for a condition, never for a fixed time.
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 250
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
