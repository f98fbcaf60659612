/**
 * What an answer says about itself: the chain gateway's `hopscope` info (`contract/chain.ts`: route, requested and
 * response model, retrieved documents, agent outcome), graded against what the request expected. Real servers send
 * no such info: then nothing is graded and nothing is called degraded.
 */
import { ChainAnswerInfo } from '../../../contract/chain';
import type { PromptLine } from '../../../contract/scenario';

/** The `hopscope` field of a chat.completion (or of the last chunk of a stream), when valid. */
export function answerInfo(json: unknown): ChainAnswerInfo | undefined {
  const h = (json as { hopscope?: unknown } | null)?.hopscope;
  if (!h || typeof h !== 'object') return undefined;
  const r = ChainAnswerInfo.safeParse(h);
  return r.success ? r.data : undefined;
}

export interface Grade {
  /** Served by another model than the one asked for (a fallback). */
  degraded: boolean;
  detail?: string;
  /** retrieved ∩ expected / expected, when the prompt named its expected documents. */
  recall?: number;
  agentTask?: 'completed' | 'failed';
  /** The model that answered, as the chain reported it (the answer's model path: fall-back when degraded). */
  responseModel?: string;
}

export function gradeAnswer(info: ChainAnswerInfo | undefined, expected: PromptLine['expected'] | undefined): Grade {
  if (!info) return { degraded: false };
  const degraded = info.responseModel !== info.requestedModel;
  const g: Grade = {
    degraded,
    detail: degraded ? `fallback:${info.requestedModel}→${info.responseModel}` : undefined,
    responseModel: info.responseModel,
  };
  const want = expected?.documents;
  if (want?.length && info.route === 'rag') {
    const got = new Set(info.documents);
    g.recall = want.filter((d) => got.has(d)).length / want.length;
  }
  if (info.agent) g.agentTask = info.agent.task;
  return g;
}
