/**
 * What each request of a run is: its model (weighted mix), route (plain chat / RAG / agent, weighted), backend and
 * prompt (synthesised, or a line of a dataset). Deterministic per (seed, index); the mixes use low-discrepancy
 * sequences so even a short run has the asked proportions, and model, route and backend do not move together.
 */
import type { PromptLine, RouteMix } from '../../../contract/scenario';
import { seededRandom } from '../shared/random';
import { synthPrompt, type ChatMessage, type SynthOptions } from './prompts';

export type Route = 'chat' | 'rag' | 'agent';
/** The chain gateway's `x-hopscope-route` for each route. */
export const ROUTE_HEADER: Record<Route, string> = { chat: 'direct', rag: 'rag', agent: 'agent' };

export type PromptSource =
  | { kind: 'synth'; options?: SynthOptions }
  | { kind: 'dataset'; lines: PromptLine[]; order: 'sequential' | 'shuffle' }
  /** No prompt at all (a fixed raw body). */
  | { kind: 'none' };

export interface MixOptions {
  models: Record<string, number>;
  routes: RouteMix;
  backend: 'vllm' | 'tgi' | 'sglang' | 'mix' | 'none';
  prompts: PromptSource;
  seed: number;
}

export interface PlannedRequest {
  model: string;
  route: Route;
  backend: 'vllm' | 'tgi' | 'sglang' | 'none';
  messages: ChatMessage[];
  expected?: PromptLine['expected'];
}

/** Picks from weights with u in [0, 1). */
function weighted<T>(entries: Array<[T, number]>): (u: number) => T {
  const total = entries.reduce((s, [, w]) => s + w, 0);
  const cum: Array<[T, number]> = [];
  let acc = 0;
  for (const [v, w] of entries) if (w > 0) cum.push([v, (acc += w / total)]);
  return (u) => {
    for (const [v, c] of cum) if (u < c) return v;
    return cum[cum.length - 1][0];
  };
}

const frac = (x: number): number => x - Math.floor(x);
// Additive recurrences with irrational steps (golden ratio, √2): evenly spread, and unrelated to each other.
const ROUTE_STEP = 0.6180339887498949;
const MODEL_STEP = 0.4142135623730951;

export function requestPlanner(o: MixOptions): (index: number) => PlannedRequest {
  const pickModel = weighted(Object.entries(o.models));
  const pickRoute = weighted<Route>([
    ['chat', o.routes.chat],
    ['rag', o.routes.rag],
    ['agent', o.routes.agent],
  ]);
  const offset = frac(o.seed * 0.7548776662466927);
  const prompts = o.prompts;
  return (index) => {
    const backend = o.backend === 'mix' ? (index % 2 === 0 ? 'vllm' : 'tgi') : o.backend;
    let model = pickModel(frac(offset + index * MODEL_STEP));
    let route = pickRoute(frac(offset + index * ROUTE_STEP));
    if (prompts.kind === 'none') return { model, route, backend, messages: [] };
    if (prompts.kind === 'synth')
      return { model, route, backend, messages: synthPrompt(o.seed, index, prompts.options).messages };
    const n = prompts.lines.length;
    const line =
      prompts.lines[
        prompts.order === 'sequential' ? index % n : Math.floor(seededRandom((o.seed * 2654435761) ^ index)() * n)
      ];
    if (line.model) model = line.model;
    if (line.route) route = line.route;
    const messages = line.messages ?? [{ role: 'user' as const, content: line.prompt! }];
    return { model, route, backend, messages, expected: line.expected };
  };
}
