/**
 * The open-loop load driver: sends requests at the profile's scheduled instants whatever the server does (no
 * coordinated omission), reads OpenAI-style SSE streams for TTFT / inter-token latency / TPOT, counts errors and
 * timeouts (a refused connection is an error, the run goes on), measures how late each request left, and knows the
 * trace id of every request (the traceparent it sent, or the server's traceresponse). Three parts: one request
 * (`request.ts`), the tally (`tally.ts`) and the schedule loop (`schedule.ts`); this file wires them for a run.
 */
import { Pool } from 'undici';
import type { RouteMix } from '../../../contract/scenario';
import { Deadlines } from './deadlines';
import { requestPlanner, type PromptSource } from './mix';
import { rateAt, type Profile } from './profiles';
import { InterruptedError, sendRequest, type RequestContext } from './request';
import { runSchedule } from './schedule';
import { Tally, type LiveCounts, type Progress, type RequestResult, type Summary } from './tally';
import type { Slo } from './thresholds';

export type { LiveCounts, Progress, RequestResult, Summary };

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
  /** Share of the traceparents sent sampled (default 1: all). */
  traceSample?: number;
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

export async function runLoad(o: LoadOptions): Promise<Summary> {
  const url = new URL(o.path, o.target);
  const pool = new Pool(url.origin, {
    connections: o.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: Math.min(o.timeoutMs, 10_000) },
  });
  const tally = new Tally(o.slo, o.keepRequests ?? 100, o.seed, o.profile, o.onResult);
  const deadlines = new Deadlines(o.timeoutMs);
  const ctx: RequestContext = {
    pool,
    url,
    method: o.method,
    stream: o.stream,
    maxTokens: o.maxTokens,
    timeoutMs: o.timeoutMs,
    // W3C baggage marks load-test traffic; the chain turns these entries into span attributes.
    baggage: `hopscope.run_id=${encodeURIComponent(o.runId)},hopscope.load_test=true${o.scenario ? `,hopscope.scenario=${encodeURIComponent(o.scenario)}` : ''}`,
    traceparent: o.traceparent,
    traceSample: o.traceSample ?? 1,
    apiKey: o.apiKey,
    rawBody: o.rawBody,
    deadlines,
  };
  const plan = requestPlanner({
    models: o.modelWeights ?? Object.fromEntries(o.models.map((m) => [m, 1])),
    routes: o.routes ?? { chat: 0, rag: 1 - o.agentRatio, agent: o.agentRatio },
    backend: o.backend,
    prompts: o.rawBody !== undefined ? { kind: 'none' } : (o.prompts ?? { kind: 'synth' }),
    seed: o.seed,
  });

  // A sweep stops once the SLOs have broken in two steps (guidellm's over-saturation stop): more load says nothing new.
  let stopped: string | undefined;
  const startedAt = performance.now();
  tally.startedAt = startedAt;
  const pending = new Set<Promise<void>>();
  let progressTimer: NodeJS.Timeout | undefined;
  if (o.onProgress || tally.steps) {
    progressTimer = setInterval(() => {
      const now = performance.now();
      const elapsedS = (now - startedAt) / 1000;
      tally.steps?.sampleCpu(elapsedS - 0.5);
      if (
        tally.steps &&
        o.profile.kind === 'sweep' &&
        !stopped &&
        elapsedS < o.profile.durationS - 0.5 &&
        tally.steps.broken(elapsedS) >= 2
      ) {
        stopped = `the SLOs broke in two steps in a row by ${elapsedS.toFixed(0)} s: the sweep stopped there (over-saturated)`;
      }
      o.onProgress?.(tally.progress(now, elapsedS, elapsedS < o.profile.durationS ? rateAt(o.profile, elapsedS) : 0));
    }, 1000);
  }
  o.onStart?.(() => {
    const elapsedS = (performance.now() - startedAt) / 1000;
    return tally.live(elapsedS, elapsedS < o.profile.durationS && !o.signal?.aborted ? rateAt(o.profile, elapsedS) : 0);
  });
  let index = 0;
  await runSchedule({
    profile: o.profile,
    seed: o.seed,
    startedAt,
    signal: o.signal,
    stopped: () => stopped !== undefined,
    send: (scheduled) => {
      if (tally.inFlight >= o.maxInFlight) {
        tally.drop();
        return;
      }
      const sentAt = performance.now();
      tally.send(sentAt - scheduled, scheduled);
      const planned = plan(index++);
      const startMs = performance.timeOrigin + sentAt;
      const p: Promise<void> = sendRequest(ctx, planned).then((r) => {
        tally.record(r, planned, startMs, performance.now());
        pending.delete(p);
      });
      pending.add(p);
    },
  });
  const scheduleEnd = performance.now();
  // Interrupted: what is in flight gets a short grace, then is cut (and not counted as a timeout).
  let drainTimer: NodeJS.Timeout | undefined;
  if (o.signal?.aborted) {
    drainTimer = setTimeout(() => deadlines.abortAll(new InterruptedError('run interrupted')), o.drainMs ?? 2000);
  }
  await Promise.all(pending);
  if (drainTimer) clearTimeout(drainTimer);
  deadlines.stop();
  if (progressTimer) clearInterval(progressTimer);
  await pool.close().catch(() => {});
  const summary = tally.summary({
    runId: o.runId,
    scenario: o.scenario,
    url,
    profile: o.profile,
    stream: o.stream,
    traceparent: o.traceparent,
    maxInFlight: o.maxInFlight,
    durationS:
      o.signal?.aborted || stopped
        ? (scheduleEnd - startedAt) / 1000
        : Math.max(o.profile.durationS, (scheduleEnd - startedAt) / 1000),
    wallS: (performance.now() - startedAt) / 1000,
    scheduleEndS: o.signal?.aborted || stopped ? (scheduleEnd - startedAt) / 1000 : o.profile.durationS,
  });
  if (stopped) summary.notes.push(stopped);
  return summary;
}
