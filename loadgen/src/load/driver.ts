/**
 * The open-loop load driver: sends requests at the profile's scheduled instants whatever the server does (no
 * coordinated omission), reads OpenAI-style SSE streams for TTFT / inter-token latency / TPOT, counts errors and
 * timeouts (a refused connection is an error, the run goes on), measures how late each request left, and knows the
 * trace id of every request (the traceparent it sent, or the server's traceresponse).
 */
import { Pool } from 'undici';
import type { ClientSummary, LatencySketch, RequestOutcome, RunRequest } from '../../../contract/runs';
import { emptySketch, sketchAdd } from '../../../contract/sketch';
import type { RouteMix } from '../../../contract/scenario';
import { answerInfo, gradeAnswer } from './answer';
import { RequestLedger } from './ledger';
import { requestPlanner, ROUTE_HEADER, type PlannedRequest, type PromptSource } from './mix';
import { arrivals, rateAt, type Profile } from './profiles';
import { SseParser } from './sse';
import { Samples, tpot } from './stats';
import type { Slo } from './thresholds';
import { newTraceparent, parseTraceresponse, type TraceIdSource } from './trace-context';

export interface LoadOptions {
  target: string;
  path: string;
  method: 'POST' | 'GET';
  profile: Profile;
  stream: boolean;
  /** Models, equally weighted (`modelWeights` wins when given). */
  models: string[];
  modelWeights?: Record<string, number>;
  backend: 'vllm' | 'tgi' | 'sglang' | 'mix' | 'none';
  /** Share of agent requests, the rest RAG (`routes` wins when given). */
  agentRatio: number;
  routes?: RouteMix;
  /** Synthesised prompts (default) or the lines of a dataset. */
  prompts?: PromptSource;
  maxTokens: number;
  seed: number;
  runId: string;
  scenario?: string;
  timeoutMs: number;
  connections: number;
  maxInFlight: number;
  slo: Slo;
  traceparent: boolean;
  apiKey?: string;
  /** Sends a fixed tiny body instead of synthesised prompts (benchmarks against trivial endpoints). */
  rawBody?: string;
  /** How many slowest and failed requests the summary keeps (default 100 each). */
  keepRequests?: number;
  onProgress?: (p: Progress) => void;
  /** Called once the schedule starts, with a reader of the live counts (heartbeats, gauges). */
  onStart?: (live: () => LiveCounts) => void;
  /** Every finished request, as it finishes (client metrics). */
  onResult?: (r: RequestResult) => void;
  /** Stops the schedule; requests in flight get `drainMs` (default 2 s) to finish, then are cut. */
  signal?: AbortSignal;
  drainMs?: number;
}

export interface Progress {
  elapsedS: number;
  sent: number;
  completed: number;
  rps: number;
  p99Ms: number;
  errors: number;
  timeouts: number;
  degraded: number;
  inFlight: number;
  targetRps: number;
}

export interface LiveCounts {
  elapsedS: number;
  sent: number;
  completed: number;
  errors: number;
  inFlight: number;
  targetRps: number;
}

export interface RequestResult {
  outcome: RequestOutcome;
  latencyMs: number;
  ttftMs?: number;
  tpotMs?: number;
  itl: number[];
  tokens: number;
}

/** The client summary of the contract, plus what this worker knows beyond it. */
export interface Summary extends ClientSummary {
  runId: string;
  scenario?: string;
  target: string;
  profile: Profile;
  stream: boolean;
  goodput: ClientSummary['goodput'] & { slo: Slo };
  byModel: Record<string, { count: number; p50Ms: number | null; p99Ms: number | null; ttftP99Ms: number | null }>;
  traceIds: { sent: number; traceresponse: number; none: number; sampled: number };
  interrupted: number;
  slowest: RunRequest[];
  failed: RunRequest[];
}

/** A mergeable sketch of recorded values (the proxy merges a distributed run's workers with them). */
function sketchOf(values: readonly number[]): LatencySketch {
  const sk = emptySketch();
  for (const v of values) sketchAdd(sk, v);
  return sk;
}

interface Outcome {
  outcome: RequestOutcome | 'interrupted';
  kind?: string;
  detail?: string;
  latencyMs: number;
  ttftMs?: number;
  tokens: number;
  itl: number[];
  key: string;
  traceId: string | null;
  traceIdSource: TraceIdSource;
  sampled: boolean;
  recall?: number;
  agentTask?: 'completed' | 'failed';
}

/** Reason given to requests cut short by an interrupt (Ctrl-C), so they are not taken for timeouts. */
class InterruptedError extends Error {
  override name = 'InterruptedError';
}

function errorKind(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  if (e.name === 'InterruptedError') return 'interrupted';
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.code ?? e.cause?.code ?? e.name ?? 'error';
}

/** `{error: {code}}` of an error answer, when it has one. */
function errorCode(text: string): string | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const code = JSON.parse(text)?.error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

export async function runLoad(o: LoadOptions): Promise<Summary> {
  const url = new URL(o.path, o.target);
  const pool = new Pool(url.origin, {
    connections: o.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: Math.min(o.timeoutMs, 10_000) },
  });
  const e2e = new Samples(),
    ttft = new Samples(),
    itl = new Samples(),
    tpots = new Samples(),
    late = new Samples();
  const errorsByKind: Record<string, number> = {};
  const byModel = new Map<string, { e2e: Samples; ttft: Samples }>();
  const ledger = new RequestLedger(o.keepRequests ?? 100, o.seed);
  let sent = 0,
    completed = 0,
    succeeded = 0,
    degraded = 0,
    timeouts = 0,
    errors = 0,
    inFlight = 0,
    dropped = 0,
    good = 0,
    outTokens = 0,
    lateOver = 0,
    interrupted = 0;
  let recallSum = 0,
    recallN = 0,
    agentDone = 0,
    agentN = 0,
    answered = 0;
  const recent: Array<[number, number]> = [];
  // W3C baggage marks load-test traffic; the chain turns these entries into span attributes.
  const baggage = `hopscope.run_id=${encodeURIComponent(o.runId)},hopscope.load_test=true${o.scenario ? `,hopscope.scenario=${encodeURIComponent(o.scenario)}` : ''}`;
  const plan = requestPlanner({
    models: o.modelWeights ?? Object.fromEntries(o.models.map((m) => [m, 1])),
    routes: o.routes ?? { chat: 0, rag: 1 - o.agentRatio, agent: o.agentRatio },
    backend: o.backend,
    prompts: o.rawBody !== undefined ? { kind: 'none' } : (o.prompts ?? { kind: 'synth' }),
    seed: o.seed,
  });

  const record = (r: Outcome, p: PlannedRequest, startMs: number, at: number): void => {
    inFlight--;
    if (r.outcome === 'interrupted') {
      interrupted++;
      return;
    }
    completed++;
    const served = r.outcome === 'ok' || r.outcome === 'degraded';
    const t = served && r.ttftMs !== undefined ? tpot(r.latencyMs, r.ttftMs, r.tokens) : undefined;
    ledger.add(r.latencyMs, served, r.outcome !== 'ok', r.traceIdSource, r.sampled, () => ({
      traceId: r.traceId,
      traceIdSource: r.traceIdSource,
      startMs: Math.round(startMs),
      e2eMs: Number(r.latencyMs.toFixed(3)),
      ttftMs: r.ttftMs !== undefined ? Number(r.ttftMs.toFixed(3)) : null,
      outcome: r.outcome as RequestOutcome,
      ...((r.detail ?? r.kind) ? { detail: r.detail ?? r.kind } : {}),
      model: p.model,
      route: p.route,
      ...(p.backend !== 'none' ? { backend: p.backend } : {}),
    }));
    o.onResult?.({
      outcome: r.outcome,
      latencyMs: r.latencyMs,
      ttftMs: r.ttftMs,
      tpotMs: t,
      itl: r.itl,
      tokens: r.tokens,
    });
    if (r.recall !== undefined) {
      recallSum += r.recall;
      recallN++;
    }
    if (r.agentTask) {
      agentN++;
      if (r.agentTask === 'completed') agentDone++;
    }
    if (!served) {
      errors++;
      if (r.kind === 'timeout') timeouts++;
      errorsByKind[r.kind ?? 'error'] = (errorsByKind[r.kind ?? 'error'] ?? 0) + 1;
      return;
    }
    if (r.outcome === 'ok') succeeded++;
    else degraded++;
    e2e.add(r.latencyMs);
    recent.push([at, r.latencyMs]);
    outTokens += r.tokens;
    let m = byModel.get(r.key);
    if (!m) byModel.set(r.key, (m = { e2e: new Samples(), ttft: new Samples() }));
    m.e2e.add(r.latencyMs);
    if (r.ttftMs !== undefined) {
      ttft.add(r.ttftMs);
      m.ttft.add(r.ttftMs);
    }
    for (const g of r.itl) itl.add(g);
    if (t !== undefined) tpots.add(t);
    // A degraded answer is never good: it was not the model asked for.
    const meets =
      r.outcome === 'ok' &&
      (o.slo.e2eMs === undefined || r.latencyMs <= o.slo.e2eMs) &&
      (o.slo.ttftMs === undefined || (r.ttftMs ?? r.latencyMs) <= o.slo.ttftMs) &&
      (o.slo.tpotMs === undefined || (t ?? 0) <= o.slo.tpotMs);
    if (meets) good++;
  };

  const one = async (p: PlannedRequest): Promise<Outcome> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      baggage,
      'user-agent': 'hopscope-load/0.1',
    };
    if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
    let traceId: string | null = null;
    let traceIdSource: TraceIdSource = 'none';
    let sampled = false;
    if (o.traceparent) {
      const tp = newTraceparent();
      headers.traceparent = tp.header;
      ({ traceId } = tp);
      traceIdSource = 'sent';
      sampled = true;
    }
    if (p.backend !== 'none') headers['x-hopscope-backend'] = p.backend;
    headers['x-hopscope-route'] = ROUTE_HEADER[p.route];
    const key = `${p.backend}/${p.model}/${p.route}`;
    let body: string | undefined;
    if (o.method === 'POST') {
      body =
        o.rawBody ??
        JSON.stringify({
          model: p.model,
          messages: p.messages,
          max_tokens: o.maxTokens,
          stream: o.stream,
          ...(o.stream ? { stream_options: { include_usage: true } } : {}),
        });
    }
    const t0 = performance.now();
    const base = (): Pick<Outcome, 'key' | 'traceId' | 'traceIdSource' | 'sampled'> => ({
      key,
      traceId,
      traceIdSource,
      sampled,
    });
    let deadline: { at: number; ac: AbortController } | undefined;
    try {
      const ac = new AbortController();
      deadline = { at: t0 + o.timeoutMs, ac };
      live.add(deadline);
      const res = await pool.request({
        path: url.pathname + url.search,
        method: o.method,
        headers,
        body,
        signal: ac.signal,
      });
      answered++;
      // The server's word on the trace wins: it may have started its own trace instead of continuing ours.
      const tr = parseTraceresponse(res.headers.traceresponse);
      if (tr) {
        traceId = tr.traceId;
        sampled = tr.sampled;
        traceIdSource = 'traceresponse';
      }
      if (res.statusCode >= 400) {
        const code = errorCode(await res.body.text().catch(() => ''));
        const kind = `http_${res.statusCode}`;
        return {
          ...base(),
          outcome: 'error',
          kind,
          detail: code ? `${kind} ${code}` : kind,
          latencyMs: performance.now() - t0,
          tokens: 0,
          itl: [],
        };
      }
      const ctype = String(res.headers['content-type'] ?? '');
      if (!ctype.includes('text/event-stream')) {
        // A fixed raw body (benchmarks against trivial endpoints) has no usage to read: drain without decoding.
        if (o.rawBody !== undefined) {
          await res.body.dump();
          return { ...base(), outcome: 'ok', latencyMs: performance.now() - t0, tokens: 0, itl: [] };
        }
        const text = await res.body.text();
        let json: any;
        if (text.startsWith('{')) {
          try {
            json = JSON.parse(text);
          } catch {
            /* not JSON */
          }
        }
        const g = gradeAnswer(answerInfo(json), p.expected);
        return {
          ...base(),
          outcome: g.degraded ? 'degraded' : 'ok',
          detail: g.detail,
          recall: g.recall,
          agentTask: g.agentTask,
          latencyMs: performance.now() - t0,
          tokens: json?.usage?.completion_tokens ?? 0,
          itl: [],
        };
      }
      const parser = new SseParser();
      let first: number | undefined,
        last: number | undefined,
        chunks = 0,
        usageTokens: number | undefined,
        done = false,
        info: unknown;
      const gaps: number[] = [];
      const onData = (d: string): void => {
        if (d === '[DONE]') {
          done = true;
          return;
        }
        let ev: any;
        try {
          ev = JSON.parse(d);
        } catch {
          return;
        }
        if (ev.usage?.completion_tokens !== undefined) usageTokens = ev.usage.completion_tokens;
        if (ev.hopscope !== undefined) info = ev;
        const content = ev.choices?.[0]?.delta?.content ?? ev.choices?.[0]?.text ?? ev.token?.text;
        if (content) {
          const now = performance.now();
          if (first === undefined) first = now;
          else gaps.push(now - last!);
          last = now;
          chunks++;
        }
      };
      for await (const c of res.body) for (const d of parser.push(c.toString())) onData(d);
      for (const d of parser.flush()) onData(d);
      const end = performance.now();
      if (!done)
        return { ...base(), outcome: 'error', kind: 'stream_incomplete', latencyMs: end - t0, tokens: chunks, itl: [] };
      const g = gradeAnswer(answerInfo(info), p.expected);
      return {
        ...base(),
        outcome: g.degraded ? 'degraded' : 'ok',
        detail: g.detail,
        recall: g.recall,
        agentTask: g.agentTask,
        latencyMs: end - t0,
        ttftMs: first !== undefined ? first - t0 : undefined,
        tokens: usageTokens ?? chunks,
        itl: gaps,
      };
    } catch (err) {
      const kind = errorKind(err);
      if (kind === 'interrupted')
        return { ...base(), outcome: 'interrupted', latencyMs: performance.now() - t0, tokens: 0, itl: [] };
      return {
        ...base(),
        outcome: kind === 'timeout' ? 'timeout' : 'error',
        kind,
        latencyMs: performance.now() - t0,
        tokens: 0,
        itl: [],
      };
    } finally {
      if (deadline) live.delete(deadline);
    }
  };

  // One sweeper over the requests in flight instead of a timer each; entries leave the set when their request ends,
  // so they die young (no old-generation garbage, hence no long GC pauses that would delay the schedule).
  const live = new Set<{ at: number; ac: AbortController }>();
  const sweeper = setInterval(
    () => {
      const now = performance.now();
      for (const d of live)
        if (d.at <= now) {
          live.delete(d);
          d.ac.abort(new DOMException('request timed out', 'TimeoutError'));
        }
    },
    Math.max(5, Math.min(50, o.timeoutMs / 10))
  );
  const startedAt = performance.now();
  const pending = new Set<Promise<void>>();
  let progressTimer: NodeJS.Timeout | undefined;
  let lastCompleted = 0;
  if (o.onProgress) {
    progressTimer = setInterval(() => {
      const now = performance.now();
      while (recent.length && recent[0][0] < now - 5000) recent.shift();
      const w = recent.map(([, v]) => v).sort((a, b) => a - b);
      const elapsedS = (now - startedAt) / 1000;
      o.onProgress!({
        elapsedS,
        sent,
        completed,
        rps: completed - lastCompleted,
        p99Ms: w.length ? w[Math.ceil(0.99 * w.length) - 1] : NaN,
        errors,
        timeouts,
        degraded,
        inFlight,
        targetRps: elapsedS < o.profile.durationS ? rateAt(o.profile, elapsedS) : 0,
      });
      lastCompleted = completed;
    }, 1000);
  }

  o.onStart?.(() => {
    const elapsedS = (performance.now() - startedAt) / 1000;
    return {
      elapsedS,
      sent,
      completed,
      errors,
      inFlight,
      targetRps: elapsedS < o.profile.durationS && !o.signal?.aborted ? rateAt(o.profile, elapsedS) : 0,
    };
  });
  await new Promise<void>((resolve) => {
    const gen = arrivals(o.profile, o.seed);
    let next = gen.next();
    let index = 0;
    const tick = (): void => {
      if (o.signal?.aborted) {
        resolve();
        return;
      }
      const now = performance.now();
      while (!next.done && startedAt + next.value * 1000 <= now) {
        const scheduled = startedAt + next.value * 1000;
        next = gen.next();
        if (inFlight >= o.maxInFlight) {
          dropped++;
          continue;
        }
        const sentAt = performance.now();
        const lateMs = sentAt - scheduled;
        late.add(lateMs);
        if (lateMs > 10) lateOver++;
        sent++;
        inFlight++;
        const planned = plan(index++);
        const startMs = performance.timeOrigin + sentAt;
        const p: Promise<void> = one(planned).then((r) => {
          record(r, planned, startMs, performance.now());
          pending.delete(p);
        });
        pending.add(p);
      }
      if (next.done) {
        resolve();
        return;
      }
      // No busy-spinning: a 1 ms timer granularity is far inside the 10 ms lateness budget, and the CPU stays
      // free for the responses (and, on a small machine, for the server under test).
      const wait = startedAt + next.value * 1000 - performance.now();
      setTimeout(tick, Math.max(1, wait));
    };
    o.signal?.addEventListener('abort', () => resolve(), { once: true });
    tick();
  });
  const scheduleEnd = performance.now();
  // Interrupted: what is in flight gets a short grace, then is cut (and not counted as a timeout).
  let drainTimer: NodeJS.Timeout | undefined;
  if (o.signal?.aborted) {
    drainTimer = setTimeout(() => {
      for (const d of live) d.ac.abort(new InterruptedError('run interrupted'));
    }, o.drainMs ?? 2000);
  }
  await Promise.all(pending);
  if (drainTimer) clearTimeout(drainTimer);
  clearInterval(sweeper);
  if (progressTimer) clearInterval(progressTimer);
  await pool.close().catch(() => {});
  const durationS = o.signal?.aborted
    ? (scheduleEnd - startedAt) / 1000
    : Math.max(o.profile.durationS, (scheduleEnd - startedAt) / 1000);
  const wall = (performance.now() - startedAt) / 1000;

  const notes: string[] = [];
  const refused = (errorsByKind.ECONNREFUSED ?? 0) + (errorsByKind.UND_ERR_CONNECT_TIMEOUT ?? 0);
  if (errorsByKind.ECONNREFUSED)
    notes.push(
      `the target refused ${errorsByKind.ECONNREFUSED} connection attempt(s) (ECONNREFUSED at ${url.origin}); counted as errors, the run continued`
    );
  if (refused === sent && sent > 0) notes.push('no request reached the target');
  if (dropped)
    notes.push(
      `${dropped} arrival(s) were not sent because ${o.maxInFlight} requests were already in flight (client-side limit)`
    );
  if (sent && lateOver / sent > 0.05)
    notes.push(
      `${((100 * lateOver) / sent).toFixed(1)}% of requests left more than 10 ms late: the driver could not keep the schedule (CPU-bound?)`
    );
  if (interrupted)
    notes.push(`${interrupted} request(s) were still in flight when the run was interrupted (not counted)`);
  if (degraded) notes.push(`${degraded} request(s) were served by a fallback model (degraded, not ok)`);
  if (answered && !ledger.traceIds.traceresponse && !o.traceparent) {
    notes.push(
      'no trace id from the server: it answers no traceresponse header (--traceparent sends one with each request)'
    );
  } else if (ledger.traceIds.none) {
    notes.push(`${ledger.traceIds.none} request(s) have no trace id (no traceresponse from the server, none sent)`);
  }
  let meanRate = 0;
  for (let t = 0; t < o.profile.durationS; t += o.profile.durationS / 200) meanRate += rateAt(o.profile, t) / 200;
  const byModelOut: Summary['byModel'] = {};
  const n3 = (v: number): number | null => (Number.isFinite(v) ? Number(v.toFixed(3)) : null);
  for (const [k, v] of byModel)
    byModelOut[k] = {
      count: v.e2e.count,
      p50Ms: n3(v.e2e.pct(50)),
      p99Ms: n3(v.e2e.pct(99)),
      ttftP99Ms: n3(v.ttft.pct(99)),
    };
  const rate = (n: number, s: number): number => (s > 0 ? Number((n / s).toFixed(3)) : 0);
  const summary: Summary = {
    runId: o.runId,
    ...(o.scenario ? { scenario: o.scenario } : {}),
    target: url.toString(),
    profile: o.profile,
    stream: o.stream,
    durationS: Number(wall.toFixed(3)),
    sent,
    completed,
    succeeded,
    degraded,
    errors: { total: errors, byKind: errorsByKind },
    timeouts,
    droppedClientSide: dropped,
    rps: {
      targetMean: Number(meanRate.toFixed(3)),
      sent: rate(sent, durationS),
      completed: rate(succeeded + degraded, wall),
    },
    latencyMs: e2e.summary(),
    ttftMs: ttft.summary(),
    itlMs: itl.summary(),
    tpotMs: tpots.summary(),
    outputTokens: outTokens,
    outputTokensPerS: rate(outTokens, wall),
    goodput: { slo: o.slo, good, rps: rate(good, wall), ratio: sent ? Number((good / sent).toFixed(4)) : 0 },
    schedule: {
      lateOver10ms: lateOver,
      lateRatio: sent ? Number((lateOver / sent).toFixed(4)) : 0,
      lateP99Ms: n3(late.pct(99)),
      lateMaxMs: n3(late.max()),
    },
    quality: {
      ragRecall: { mean: recallN ? Number((recallSum / recallN).toFixed(4)) : null, n: recallN },
      agentTaskCompletion: { rate: agentN ? Number((agentDone / agentN).toFixed(4)) : null, n: agentN },
    },
    untraced: ledger.traceIds.none,
    sketches: { e2e: sketchOf(e2e.values()), ttft: sketchOf(ttft.values()) },
    traceIds: { ...ledger.traceIds },
    interrupted,
    byModel: byModelOut,
    slowest: ledger.slowest(),
    failed: ledger.failed(),
    notes,
  };
  return summary;
}
