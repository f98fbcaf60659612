/**
 * Seeded prompt synthesiser: questions about a handful of topics with semantic perturbations — synonym swaps, logic
 * inversions, multi-hop nesting — a long-tail (log-normal) context length, and multi-turn dialogues whose last turn is
 * a retrieval question (so the gateway's RAG path runs). The same seed and index give the same request.
 */
import { seededRandom } from '../shared/random';
import { fillerText } from '../shared/text';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}
export interface SynthPrompt {
  messages: ChatMessage[];
  perturbations: string[];
  turns: number;
  approxTokens: number;
}

const TOPICS = [
  'the KV cache',
  'continuous batching',
  'prefix caching',
  'speculative decoding',
  'tensor parallelism',
  'the vector index',
  'TLS session resumption',
  'TCP retransmission',
  'GPU memory fragmentation',
  'the retrieval pipeline',
];
const ASKS = [
  'How does {t} affect latency?',
  'Why would {t} fail under load?',
  'What is the best way to tune {t}?',
  'Explain how {t} interacts with the scheduler.',
  'When should we disable {t}?',
];
const SYNONYMS: Record<string, string[]> = {
  affect: ['influence', 'change', 'impact'],
  fail: ['break', 'degrade', 'misbehave'],
  best: ['most effective', 'right', 'safest'],
  tune: ['configure', 'adjust', 'optimise'],
  explain: ['describe', 'clarify', 'walk through'],
  disable: ['turn off', 'switch off', 'avoid'],
  latency: ['response time', 'delay', 'tail latency'],
  load: ['pressure', 'heavy traffic', 'a surge'],
};

export interface SynthOptions {
  /** Probability of each perturbation. */
  synonymP?: number;
  inversionP?: number;
  nestingP?: number;
  multiTurnP?: number;
  /** Median extra context tokens (log-normal, σ = 1). */
  medianContextTokens?: number;
  maxContextTokens?: number;
}

export function synthPrompt(seed: number, index: number, o: SynthOptions = {}): SynthPrompt {
  const rnd = seededRandom((seed * 2654435761) ^ index);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const perturbations: string[] = [];
  const topic = pick(TOPICS);
  let q = pick(ASKS).replace('{t}', topic);
  if (rnd() < (o.synonymP ?? 0.5)) {
    q = q.replace(/\b([A-Za-z]+)\b/g, (w) => {
      const alts = SYNONYMS[w.toLowerCase()];
      if (!alts) return w;
      const s = pick(alts);
      return w[0] === w[0].toUpperCase() ? s[0].toUpperCase() + s.slice(1) : s;
    });
    perturbations.push('synonym_swap');
  }
  if (rnd() < (o.inversionP ?? 0.2)) {
    q = q
      .replace(
        /^(How|Why|What|When)( does| would| is| should)?/,
        (_m, w: string, v: string | undefined) => `${w}${v ?? ''} not`
      )
      .replace(/\?$/, ', unless the opposite holds?');
    perturbations.push('logic_inversion');
  }
  if (rnd() < (o.nestingP ?? 0.25)) {
    const other = pick(TOPICS.filter((t) => t !== topic));
    q = `Given what you know about ${other}, and assuming it depends on ${pick(TOPICS)}: ${q}`;
    perturbations.push('multi_hop_nesting');
  }
  // Long tail: log-normal context length (σ = 1), capped.
  const median = o.medianContextTokens ?? 60;
  const z = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const ctxTokens = Math.min(o.maxContextTokens ?? 3000, Math.max(0, Math.round(median * Math.exp(z))));
  if (ctxTokens > 4 * median) perturbations.push('long_tail_length');
  const content = ctxTokens ? `${q}\n\nNotes: ${fillerText(ctxTokens, index + seed)}` : q;
  const messages: ChatMessage[] = [];
  let turns = 1;
  if (rnd() < (o.multiTurnP ?? 0.3)) {
    turns = 2 + Math.floor(rnd() * 3);
    for (let i = 0; i < turns - 1; i++) {
      messages.push({ role: 'user', content: pick(ASKS).replace('{t}', pick(TOPICS)) });
      messages.push({ role: 'assistant', content: fillerText(20 + Math.floor(rnd() * 40), index * 7 + i) });
    }
    perturbations.push('multi_turn');
  }
  messages.push({ role: 'user', content });
  const approxTokens = messages.reduce((n, m) => n + Math.round(m.content.split(/\s+/).length * 1.3), 0);
  return { messages, perturbations, turns, approxTokens };
}
