/**
 * The suite's figures (requests fuzzed, 5xx, faults survived, RSS before/after), printed as one line each,
 * `RELIABILITY <name>: <json>`, so they can be read from the test output into the README.
 */
export function figure(name: string, values: Record<string, unknown>): void {
  console.log(`RELIABILITY ${name}: ${JSON.stringify(values)}`);
}

export const mib = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;

/** Runs `fn` over `items` with at most `n` in flight. */
export async function pool<T, U>(items: T[], n: number, fn: (item: T, i: number) => Promise<U>): Promise<U[]> {
  const out: U[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    })
  );
  return out;
}
