/** Small helpers the hops share: seeded randomness, hashing to a fraction, sleeping, a concurrency gate, tokens. */

/** mulberry32: tiny, fast, seeded; good enough for simulated noise. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic fraction in [0, 1) from a string (same query → same cache/recall outcome): FNV-1a + murmur3's
 *  finaliser, cheap enough to run several times per request. */
export function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Roughly what a BPE tokenizer gives for English: ~1.3 tokens per word. */
export function countTokens(text: string): number {
  if (!text) return 0;
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return Math.max(1, Math.round(words * 1.3));
}

/** A bounded concurrency gate: models a service that can only work on N requests at once (the rest queue). */
export class ConcurrencyGate {
  private active = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  get queued(): number {
    return this.waiters.length;
  }
  get running(): number {
    return this.active;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiters.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiters.shift()?.();
    }
  }
}

const WORDS = (
  'the model answer context retrieval vector token cache latency query document request user system plan tool ' +
  'result search engine batch decode prefill memory kernel network summary reason step final data source value'
).split(' ');

/** Deterministic filler text of n tokens (as counted by countTokens). */
export function fillerText(n: number, seed: number): string {
  const rnd = seededRandom(seed);
  const words = Math.max(1, Math.round(n / 1.3));
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rnd() * WORDS.length)]);
  return out.join(' ');
}
