/**
 * Client TTFT per request, decomposed: for a run's slowest and failed requests (the record keeps up to 100 of each,
 * with the trace id the client knew), the client's TTFT split along its trace into client→gateway network (the
 * gateway's server span starts), the hops before the LLM (until the inference server's span starts: embedding,
 * vector cache, RAG, the call into the engine), the engine's queue and prefill (its own span: vLLM
 * `gen_ai.latency.time_in_queue` / `time_in_model_prefill`, read by `llmPhasesOf`), and the first chunk's way back
 * (the remainder). A part the trace cannot give is null and said, never estimated; the means are over the requests
 * that have the part.
 */
import {
  type LlmPhasesRead,
  llmPhasesOf,
  type RunRecord,
  type RunRequest,
  type RunTtftRequest,
  type RunTtftRequestsAnswer,
  type Span,
  type TtftRequestPart,
  type TtftRequestPartName,
} from '../../../contract';
import { notFound } from '../domain/errors';
import { isInferenceServerSpan } from './inference-spans';
import type { RunTtftLookup } from './run-ttft';
import type { TraceService } from './traces';

const FETCH_CONCURRENCY = 8;

const LABELS: Record<TtftRequestPartName, string> = {
  client_to_gateway: 'Client → gateway (network, connection)',
  before_llm: 'Gateway and the hops before the LLM (embedding, vector cache, RAG, the call into the engine)',
  engine_queue: 'Engine queue (waiting to be scheduled)',
  engine_prefill: 'Prefill up to the first token',
  way_back: "First chunk's way back (engine → gateway → client)",
};
const ORDER = Object.keys(LABELS) as TtftRequestPartName[];

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The request's entry span: the earliest server span of the trace (the load generator records none). */
function entryOf(spans: Span[]): Span | undefined {
  let best: Span | undefined;
  for (const s of spans) if (s.kind === 'server' && (!best || s.startMs < best.startMs)) best = s;
  return best;
}

/**
 * The inference server span whose first token the client waited for: of those with engine phases, the latest whose
 * first token came before the client's first chunk (an agent calls the LLM several times; the answer is the last).
 */
function llmOf(spans: Span[], firstChunkAt: number | undefined): { lp?: LlmPhasesRead; span?: Span } {
  let best: LlmPhasesRead | undefined;
  for (const s of spans) {
    const lp = s.kind === 'client' ? undefined : llmPhasesOf(s, spans);
    if (!lp) continue;
    const q = lp.phases.find((p) => p.name === 'queue')?.durationMs ?? 0;
    const pf = lp.phases.find((p) => p.name === 'prefill')?.durationMs ?? 0;
    if (firstChunkAt !== undefined && lp.startMs + q + pf > firstChunkAt + 1) continue;
    if (!best || lp.startMs > best.startMs) best = lp;
  }
  if (best) return { lp: best };
  // No engine span: the LLM's own server span (the chain's `chat` span), for the hops before it.
  let span: Span | undefined;
  for (const s of spans)
    if (
      isInferenceServerSpan(s) &&
      (firstChunkAt === undefined || s.startMs <= firstChunkAt) &&
      (!span || s.startMs > span.startMs)
    )
      span = s;
  return { span };
}

export function decompose(
  req: RunRequest & { traceId: string },
  list: 'slowest' | 'failed',
  spans: Span[]
): RunTtftRequest {
  const missing: string[] = [];
  const ms = new Map<TtftRequestPartName, { v: number; source: string }>();
  const firstChunkAt = req.ttftMs === null ? undefined : req.startMs + req.ttftMs;
  const entry = entryOf(spans);
  if (entry)
    ms.set('client_to_gateway', {
      v: entry.startMs - req.startMs,
      source: `${entry.service} "${entry.name}" start − client send`,
    });
  else missing.push('no server span in the trace: where the request entered is unknown');
  const { lp, span } = llmOf(spans, firstChunkAt);
  const llmStart = lp?.startMs ?? span?.startMs;
  if (entry && llmStart !== undefined)
    ms.set('before_llm', {
      v: llmStart - entry.startMs,
      source: `${lp ? lp.service : span!.service} span start − ${entry.service} span start`,
    });
  if (lp) {
    const q = lp.phases.find((p) => p.name === 'queue');
    const pf = lp.phases.find((p) => p.name === 'prefill');
    if (q) ms.set('engine_queue', { v: q.durationMs, source: `${lp.source}: queue` });
    if (pf) ms.set('engine_prefill', { v: pf.durationMs, source: `${lp.source}: prefill` });
    else if (lp.engine === 'tgi')
      missing.push("TGI's router span does not split prefill from decode: the first token's time is unknown");
  } else if (span) {
    missing.push(
      `${span.service}'s span "${span.name}" carries no engine phases (vLLM's llm_request with gen_ai.latency.*): queue and prefill unknown`
    );
  } else missing.push('no inference server span in the trace');
  if (req.ttftMs === null) missing.push('no first chunk reached the client: its way back is unknown');
  else if (ORDER.slice(0, 4).every((p) => ms.has(p))) {
    let before = 0;
    for (const p of ORDER.slice(0, 4)) before += ms.get(p)!.v;
    ms.set('way_back', { v: req.ttftMs - before, source: 'client TTFT − the parts before' });
  }
  const parts: TtftRequestPart[] = ORDER.map((p) => ({
    part: p,
    label: LABELS[p],
    ms: ms.has(p) ? r3(ms.get(p)!.v) : null,
    source: ms.get(p)?.source ?? 'unknown',
  }));
  return {
    traceId: req.traceId,
    list,
    outcome: req.outcome,
    startMs: req.startMs,
    ttftMs: req.ttftMs,
    e2eMs: req.e2eMs,
    llm: lp ? { service: lp.service, pod: lp.pod, engine: lp.engine, spanId: lp.spanId } : null,
    parts,
    missing,
  };
}

export class RunTtftRequestsService {
  constructor(
    private runs: RunTtftLookup,
    private traces: TraceService
  ) {}

  async requests(runId: string): Promise<RunTtftRequestsAnswer> {
    const run: RunRecord | undefined = await this.runs.get(runId);
    if (!run) throw notFound(`run ${runId} not found`);
    const todo: Array<{ req: RunRequest & { traceId: string }; list: 'slowest' | 'failed' }> = [];
    const seen = new Set<string>();
    let untraced = 0;
    for (const [list, reqs] of [
      ['failed', run.failed],
      ['slowest', run.slowest],
    ] as const)
      for (const r of reqs) {
        if (!r.traceId) untraced++;
        else if (!seen.has(r.traceId)) {
          seen.add(r.traceId);
          todo.push({ req: r as RunRequest & { traceId: string }, list });
        }
      }
    const out: Array<RunTtftRequest | undefined> = new Array(todo.length);
    let unreadable = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(FETCH_CONCURRENCY, todo.length) }, async () => {
        while (next < todo.length) {
          const k = next++;
          const d = await this.traces.byId(todo[k].req.traceId).catch(() => undefined);
          if (!d?.spans.length) {
            unreadable++;
            continue;
          }
          out[k] = decompose(todo[k].req, todo[k].list, d.spans);
        }
      })
    );
    const requests = out.filter((x): x is RunTtftRequest => x !== undefined);
    const average = ORDER.map((p) => {
      let sum = 0;
      let n = 0;
      for (const r of requests) {
        const v = r.parts.find((x) => x.part === p)?.ms;
        if (v !== null && v !== undefined) {
          sum += v;
          n++;
        }
      }
      return { part: p, label: LABELS[p], meanMs: n ? r3(sum / n) : null, n };
    });
    const missing: string[] = [];
    if (untraced)
      missing.push(`${untraced} request(s) have no trace id (the server answered no traceresponse, none was sent)`);
    if (unreadable) missing.push(`${unreadable} request trace(s) could not be read from the trace source`);
    return {
      runId,
      requests,
      average,
      notes: [
        "The client's send time is the load generator's clock, the spans' the services': client → gateway mixes the two (exact on one machine, off by their offset elsewhere).",
        "vLLM's span starts when the request reaches its engine (after its HTTP front end and tokenization): that part of the call is in the hops before the LLM.",
        'Means are over the requests that have the part (n); they add up only over requests that have every part.',
      ],
      missing,
    };
  }
}
