/** Text both wings use: the token count the chain charges for and the deterministic filler the prompts are made of. */
import { seededRandom } from './random';

/** Roughly what a BPE tokenizer gives for English: ~1.3 tokens per word. */
export function countTokens(text: string): number {
  if (!text) return 0;
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return Math.max(1, Math.round(words * 1.3));
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
