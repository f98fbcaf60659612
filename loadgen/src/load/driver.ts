/**
 * The open-loop load driver: sends requests at the profile's scheduled instants whatever the server does (no
 * coordinated omission), reads OpenAI-style SSE streams for TTFT / inter-token latency / TPOT, counts errors and
 * timeouts (a refused connection is an error, the run goes on), and measures how late each request left.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { arrivals, rateAt, type Profile } from './profiles';
import { synthPrompt } from './prompts';
import { SseParser } from './sse';
import { Samples, tpot } from './stats';
import type { Slo } from './thresholds';

export interface LoadOptions {
  target: string;
  path: string;
  method: 'POST' | 'GET';
  profile: Profile;
  stream: boolean;
  models: string[];
  backend: 'vllm' | 'tgi' | 'mix' | 'none';
  agentRatio: number;
  maxTokens: number;
  seed: number;
  runId: string;
  timeoutMs: number;
  connections: number;
  maxInFlight: number;
  slo: Slo;
  traceparent: boolean;
  apiKey?: string;
  /** Sends a fixed tiny body instead of synthesised prompts (benchmarks against trivial endpoints). */
  rawBody?: string;
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
}

export interface Progress { elapsedS: number; sent: number; completed: number; rps: number; p99Ms: number; errors: number; timeouts: number; inFlight: number }

export interface Summary {
  runId: string;
  target: string;
  profile: Profile;
  stream: boolean;
  durationS: number;
  sent: number;
  completed: number;
  succeeded: number;
  errors: { total: number; byKind: Record<string, number> };
  timeouts: number;
  droppedClientSide: number;
  rps: { targetMean: number; sent: number; completed: number };
  latencyMs: ReturnType<Samples['summary']>;
  ttftMs: ReturnType<Samples['summary']>;
  itlMs: ReturnType<Samples['summary']>;
  tpotMs: ReturnType<Samples['summary']>;
  outputTokens: number;
  outputTokensPerS: number;
  goodput: { slo: Slo; good: number; rps: number; ratio: number };
  schedule: { lateOver10ms: number; lateRatio: number; lateP99Ms: number; lateMaxMs: number };
  byModel: Record<string, { count: number; p50Ms: number; p99Ms: number; ttftP99Ms: number }>;
  notes: string[];
}

interface Outcome { ok: boolean; kind?: string; latencyMs: number; ttftMs?: number; tokens: number; itl: number[]; key: string }

function errorKind(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.code ?? e.cause?.code ?? e.name ?? 'error';
}

export async function runLoad(o: LoadOptions): Promise<Summary> {
  const url = new URL(o.path, o.target);
  const pool = new Pool(url.origin, { connections: o.connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: Math.min(o.timeoutMs, 10_000) } });
  const e2e = new Samples(), ttft = new Samples(), itl = new Samples(), tpots = new Samples(), late = new Samples();
  const errorsByKind: Record<string, number> = {};
  const byModel = new Map<string, { e2e: Samples; ttft: Samples }>();
  let sent = 0, completed = 0, succeeded = 0, timeouts = 0, errors = 0, inFlight = 0, dropped = 0, good = 0, outTokens = 0, lateOver = 0;
  const recent: Array<[number, number]> = [];
  const baggage = `hopscope.run_id=${encodeURIComponent(o.runId)},hopscope.load_test=true`;

  const record = (r: Outcome, at: number): void => {
    completed++;
    inFlight--;
    if (!r.ok) {
      errors++;
      if (r.kind === 'timeout') timeouts++;
      errorsByKind[r.kind ?? 'error'] = (errorsByKind[r.kind ?? 'error'] ?? 0) + 1;
      return;
    }
    succeeded++;
    e2e.add(r.latencyMs);
    recent.push([at, r.latencyMs]);
    outTokens += r.tokens;
    let m = byModel.get(r.key);
    if (!m) byModel.set(r.key, (m = { e2e: new Samples(), ttft: new Samples() }));
    m.e2e.add(r.latencyMs);
    if (r.ttftMs !== undefined) { ttft.add(r.ttftMs); m.ttft.add(r.ttftMs); }
    for (const g of r.itl) itl.add(g);
    const t = r.ttftMs !== undefined ? tpot(r.latencyMs, r.ttftMs, r.tokens) : undefined;
    if (t !== undefined) tpots.add(t);
    const meets = (o.slo.e2eMs === undefined || r.latencyMs <= o.slo.e2eMs)
      && (o.slo.ttftMs === undefined || (r.ttftMs ?? r.latencyMs) <= o.slo.ttftMs)
      && (o.slo.tpotMs === undefined || (t ?? 0) <= o.slo.tpotMs);
    if (meets) good++;
  };

  const one = async (index: number): Promise<Outcome> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', baggage, 'user-agent': 'hopscope-load/0.1' };
    if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
    if (o.traceparent) headers.traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const model = o.models[index % o.models.length];
    const backend = o.backend === 'mix' ? (index % 2 === 0 ? 'vllm' : 'tgi') : o.backend;
    if (backend !== 'none') headers['x-hopscope-backend'] = backend;
    const agent = o.agentRatio > 0 && ((index * 0.6180339887) % 1) < o.agentRatio;
    if (agent) headers['x-hopscope-route'] = 'agent';
    const key = `${backend}/${model}${agent ? '/agent' : ''}`;
    let body: string | undefined;
    if (o.method === 'POST') {
      if (o.rawBody !== undefined) body = o.rawBody;
      else {
        const p = synthPrompt(o.seed, index);
        body = JSON.stringify({ model, messages: p.messages, max_tokens: o.maxTokens, stream: o.stream, ...(o.stream ? { stream_options: { include_usage: true } } : {}) });
      }
    }
    const t0 = performance.now();
    let deadline: { at: number; ac: AbortController } | undefined;
    try {
      const ac = new AbortController();
      deadline = { at: t0 + o.timeoutMs, ac };
      live.add(deadline);
      const res = await pool.request({ path: url.pathname + url.search, method: o.method, headers, body, signal: ac.signal });
      if (res.statusCode >= 400) {
        await res.body.dump().catch(() => {});
        return { ok: false, kind: `http_${res.statusCode}`, latencyMs: performance.now() - t0, tokens: 0, itl: [], key };
      }
      const ctype = String(res.headers['content-type'] ?? '');
      if (!ctype.includes('text/event-stream')) {
        // A fixed raw body (benchmarks against trivial endpoints) has no usage to read: drain without decoding.
        if (o.rawBody !== undefined) { await res.body.dump(); return { ok: true, latencyMs: performance.now() - t0, tokens: 0, itl: [], key }; }
        const text = await res.body.text();
        let tokens = 0;
        if (text.startsWith('{')) { try { tokens = JSON.parse(text).usage?.completion_tokens ?? 0; } catch { /* not JSON */ } }
        return { ok: true, latencyMs: performance.now() - t0, tokens, itl: [], key };
      }
      const parser = new SseParser();
      let first: number | undefined, last: number | undefined, chunks = 0, usageTokens: number | undefined, done = false;
      const gaps: number[] = [];
      const onData = (d: string): void => {
        if (d === '[DONE]') { done = true; return; }
        let ev: any;
        try { ev = JSON.parse(d); } catch { return; }
        if (ev.usage?.completion_tokens !== undefined) usageTokens = ev.usage.completion_tokens;
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
      if (!done) return { ok: false, kind: 'stream_incomplete', latencyMs: end - t0, tokens: chunks, itl: [], key };
      return { ok: true, latencyMs: end - t0, ttftMs: first !== undefined ? first - t0 : undefined, tokens: usageTokens ?? chunks, itl: gaps, key };
    } catch (err) {
      return { ok: false, kind: errorKind(err), latencyMs: performance.now() - t0, tokens: 0, itl: [], key };
    } finally {
      if (deadline) live.delete(deadline);
    }
  };

  // One sweeper over the requests in flight instead of a timer each; entries leave the set when their request ends,
  // so they die young (no old-generation garbage, hence no long GC pauses that would delay the schedule).
  const live = new Set<{ at: number; ac: AbortController }>();
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const d of live) if (d.at <= now) { live.delete(d); d.ac.abort(new DOMException('request timed out', 'TimeoutError')); }
  }, Math.max(5, Math.min(50, o.timeoutMs / 10)));
  const startedAt = performance.now();
  const pending = new Set<Promise<void>>();
  let progressTimer: NodeJS.Timeout | undefined;
  let lastCompleted = 0;
  if (o.onProgress) {
    progressTimer = setInterval(() => {
      const now = performance.now();
      while (recent.length && recent[0][0] < now - 5000) recent.shift();
      const w = recent.map(([, v]) => v).sort((a, b) => a - b);
      o.onProgress!({ elapsedS: (now - startedAt) / 1000, sent, completed, rps: completed - lastCompleted, p99Ms: w.length ? w[Math.ceil(0.99 * w.length) - 1] : NaN, errors, timeouts, inFlight });
      lastCompleted = completed;
    }, 1000);
  }

  await new Promise<void>((resolve) => {
    const gen = arrivals(o.profile, o.seed);
    let next = gen.next();
    let index = 0;
    const tick = (): void => {
      if (o.signal?.aborted) { resolve(); return; }
      const now = performance.now();
      while (!next.done && startedAt + next.value * 1000 <= now) {
        const scheduled = startedAt + next.value * 1000;
        next = gen.next();
        if (inFlight >= o.maxInFlight) { dropped++; continue; }
        const sentAt = performance.now();
        const lateMs = sentAt - scheduled;
        late.add(lateMs);
        if (lateMs > 10) lateOver++;
        sent++;
        inFlight++;
        const p: Promise<void> = one(index++).then((r) => { record(r, performance.now()); pending.delete(p); });
        pending.add(p);
      }
      if (next.done) { resolve(); return; }
      // No busy-spinning: a 1 ms timer granularity is far inside the 10 ms lateness budget, and the CPU stays
      // free for the responses (and, on a small machine, for the server under test).
      const wait = startedAt + next.value * 1000 - performance.now();
      setTimeout(tick, Math.max(1, wait));
    };
    tick();
  });
  const scheduleEnd = performance.now();
  await Promise.all(pending);
  clearInterval(sweeper);
  if (progressTimer) clearInterval(progressTimer);
  await pool.close().catch(() => {});
  const durationS = Math.max(o.profile.durationS, (scheduleEnd - startedAt) / 1000);
  const wall = (performance.now() - startedAt) / 1000;

  const notes: string[] = [];
  const refused = (errorsByKind.ECONNREFUSED ?? 0) + (errorsByKind.UND_ERR_CONNECT_TIMEOUT ?? 0);
  if (errorsByKind.ECONNREFUSED) notes.push(`the target refused ${errorsByKind.ECONNREFUSED} connection attempt(s) (ECONNREFUSED at ${url.origin}); counted as errors, the run continued`);
  if (refused === sent && sent > 0) notes.push('no request reached the target');
  if (dropped) notes.push(`${dropped} arrival(s) were not sent because ${o.maxInFlight} requests were already in flight (client-side limit)`);
  if (sent && lateOver / sent > 0.05) notes.push(`${((100 * lateOver) / sent).toFixed(1)}% of requests left more than 10 ms late: the driver could not keep the schedule (CPU-bound?)`);
  let meanRate = 0;
  for (let t = 0; t < o.profile.durationS; t += o.profile.durationS / 200) meanRate += rateAt(o.profile, t) / 200;
  const byModelOut: Summary['byModel'] = {};
  for (const [k, v] of byModel) byModelOut[k] = { count: v.e2e.count, p50Ms: Number(v.e2e.pct(50).toFixed(3)), p99Ms: Number(v.e2e.pct(99).toFixed(3)), ttftP99Ms: Number(v.ttft.pct(99).toFixed(3)) };
  return {
    runId: o.runId, target: url.toString(), profile: o.profile, stream: o.stream, durationS: Number(wall.toFixed(3)),
    sent, completed, succeeded, errors: { total: errors, byKind: errorsByKind }, timeouts, droppedClientSide: dropped,
    rps: { targetMean: Number(meanRate.toFixed(3)), sent: Number((sent / durationS).toFixed(3)), completed: Number((succeeded / wall).toFixed(3)) },
    latencyMs: e2e.summary(), ttftMs: ttft.summary(), itlMs: itl.summary(), tpotMs: tpots.summary(),
    outputTokens: outTokens, outputTokensPerS: Number((outTokens / wall).toFixed(3)),
    goodput: { slo: o.slo, good, rps: Number((good / wall).toFixed(3)), ratio: sent ? Number((good / sent).toFixed(4)) : 0 },
    schedule: { lateOver10ms: lateOver, lateRatio: sent ? Number((lateOver / sent).toFixed(4)) : 0, lateP99Ms: Number(late.pct(99).toFixed(3)), lateMaxMs: Number(late.max().toFixed(3)) },
    byModel: byModelOut,
    notes,
  };
}
