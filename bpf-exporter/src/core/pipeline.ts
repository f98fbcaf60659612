/**
 * The exporter core: runs the selected probes (or a replay), turns each raw probe event into a contract KernelEvent
 * (epoch time, pod attribution, trace id join, mode), and fans it out to the ring, SSE, the probe's metrics and the
 * recorder. Probe-agnostic: everything probe-specific lives in the probe modules.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { KernelEvent } from '../../../contract';
import { Attributor, type Attribution } from '../attribution/attributor';
import { BoundedCache } from '../attribution/bounded-cache';
import { PidRegistry } from '../attribution/registry';
import type { ProbeMetrics, ProbeModule, ProbeOptions, RawEvent } from './probe';
import { Recorder, Replayer, readRecording } from './replay';
import { EventRing } from './ring';
import { ProbeRunner, type ProbeStatus } from './runner';
import { SseHub } from './sse';

export interface PipelineOptions {
  probes: ProbeModule[];
  probeOptions: ProbeOptions;
  bpftrace: string;
  node: string;
  ringSize: number;
  replay?: { file: string; timing: 'original' | 'fast' };
  recordFile?: string;
  log: Logger;
  backoff?: { initialMs: number; maxMs: number };
  perfPages?: number;
  batchPauseMs?: number;
}

/** Events of a pid within this window of a request whose traceparent was read carry that trace id. */
const TRACE_JOIN_MS = 2000;

export class Pipeline {
  readonly registry = new Registry();
  readonly pids = new PidRegistry();
  readonly attributor: Attributor;
  readonly ring: EventRing;
  readonly sse = new SseHub();
  readonly runners: ProbeRunner[] = [];
  readonly mode: 'live' | 'replay';
  private readonly metrics = new Map<string, ProbeMetrics>();
  private readonly recentTrace = new BoundedCache<number, { traceId: string; at: number }>(4096, TRACE_JOIN_MS);
  private readonly lost: Counter<'probe' | 'stage'>;
  private readonly evicted: Counter;
  private readonly total: Counter<'probe' | 'type'>;
  private readonly totalChildren = new Map<string, { inc(): void }>();
  private replayer?: Replayer;
  private recorder?: Recorder;
  private readonly offsetMs: number;
  replayError?: string;

  constructor(private readonly opts: PipelineOptions) {
    this.mode = opts.replay ? 'replay' : 'live';
    this.ring = new EventRing(opts.ringSize);
    this.attributor = new Attributor({ node: opts.node, registry: this.pids });
    // bpf `nsecs` and process.hrtime are both CLOCK_MONOTONIC: one offset converts kernel time to epoch ms.
    this.offsetMs = Date.now() - Number(process.hrtime.bigint()) / 1e6;
    this.lost = new Counter({
      name: 'hopscope_bpf_events_lost_total',
      help: 'Kernel events lost: stage "kernel" = bpftrace perf buffer overflow, "unparsable" = malformed probe line',
      labelNames: ['probe', 'stage'], registers: [this.registry],
    });
    this.evicted = new Counter({ name: 'hopscope_bpf_ring_evicted_total', help: 'Events overwritten in the bounded /events ring (still counted in metrics)', registers: [this.registry] });
    this.total = new Counter({ name: 'hopscope_bpf_events_total', help: 'Kernel events received, by probe and type', labelNames: ['probe', 'type'], registers: [this.registry] });
    const runners = this.runners;
    new Gauge({
      name: 'hopscope_bpf_probe_attached', help: '1 when the probe is attached, 0 otherwise (see /health for why)', labelNames: ['probe'], registers: [this.registry],
      collect() { for (const r of runners) this.set({ probe: r.status.name }, r.status.attached ? 1 : 0); },
    });
    new Gauge({
      name: 'hopscope_bpf_probe_restarts', help: 'Times the probe\'s bpftrace was restarted', labelNames: ['probe'], registers: [this.registry],
      collect() { for (const r of runners) this.set({ probe: r.status.name }, r.status.restarts); },
    });
    const sse = this.sse;
    new Gauge({ name: 'hopscope_bpf_sse_dropped', help: 'Events skipped for SSE clients that did not keep up', registers: [this.registry], collect() { this.set(sse.dropped); } });
    for (const p of opts.probes) {
      this.metrics.set(p.name, p.metrics(this.registry));
      this.lost.inc({ probe: p.name, stage: 'kernel' }, 0);
    }
  }

  async start(): Promise<void> {
    if (this.opts.replay) {
      let events: KernelEvent[] = [];
      try { events = readRecording(this.opts.replay.file); } catch (err) {
        this.replayError = (err as Error).message;
        this.opts.log.error({ err }, 'cannot read the replay file');
      }
      this.replayer = new Replayer(events, this.opts.replay.timing);
      this.replayer.start((e) => this.publish(e));
      return;
    }
    if (this.opts.recordFile) this.recorder = new Recorder(this.opts.recordFile);
    for (const probe of this.opts.probes) {
      const runner = new ProbeRunner(probe, {
        bpftrace: this.opts.bpftrace,
        options: this.opts.probeOptions,
        log: this.opts.log,
        backoff: this.opts.backoff,
        perfPages: this.opts.perfPages,
        batchPauseMs: this.opts.batchPauseMs,
        onEvent: (p, raw) => this.ingest(p, raw),
        onLost: (p, n, stage) => this.lost.inc({ probe: p.name, stage }, n),
      });
      this.runners.push(runner);
    }
    await Promise.all(this.runners.map((r) => r.start()));
  }

  /** Resolves once every started probe is attached or has given its reason (for tests and the demo). */
  async settled(timeoutMs = 60_000): Promise<ProbeStatus[]> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.runners.some((r) => r.status.state === 'starting')) await new Promise((r) => setTimeout(r, 100));
    return this.runners.map((r) => r.status);
  }

  ingest(probe: ProbeModule, raw: RawEvent): KernelEvent {
    const ts = raw.nsecs !== undefined ? Number(raw.nsecs) / 1e6 + this.offsetMs : Date.now();
    // A socket event with no owning pid is attributed through the socket's cgroup id.
    const a: Attribution = raw.pid > 0 ? this.attributor.forPid(raw.pid) : this.attributor.forCgroupId(raw.cgroupId ?? 0);
    const detail = raw.detail; // the probe's own object: extended in place, not copied
    detail.attribution = a.source;
    if (raw.cgroupId) detail.cgroupId = raw.cgroupId;
    if (a.cgroupPath) detail.cgroupPath = a.cgroupPath;
    if (a.container) detail.container = a.container;
    if (a.podUid) detail.podUid = a.podUid;
    if (a.service) detail.service = a.service;
    // Built field by field (no conditional spreads): this runs for every event.
    const e: KernelEvent = { ts: Math.round(ts * 1000) / 1000, type: raw.type, pid: raw.pid, comm: raw.comm, detail, mode: 'live' };
    if (a.pod) e.pod = a.pod;
    if (a.namespace) e.namespace = a.namespace;
    e.node = a.node ?? this.opts.node;
    if (raw.durationMs !== undefined) e.durationMs = raw.durationMs;
    if (raw.traceId) {
      e.traceId = raw.traceId;
      this.recentTrace.set(raw.pid, { traceId: raw.traceId, at: ts });
      this.tagRecent(raw.pid, raw.traceId, ts);
    } else if (raw.pid > 0) {
      const t = this.recentTrace.get(raw.pid);
      if (t && ts - t.at <= TRACE_JOIN_MS) { e.traceId = t.traceId; detail.traceIdSource = 'same_pid_recent_request'; }
    }
    // prom-client hashes label objects on every inc: keep one child per (probe, type).
    const key = `${probe.name}|${e.type}`;
    let child = this.totalChildren.get(key);
    if (!child) { child = this.total.labels(probe.name, e.type); this.totalChildren.set(key, child); }
    child.inc();
    this.metrics.get(probe.name)?.observe(e);
    this.recorder?.write(e);
    this.publish(e);
    return e;
  }

  /** Events of this pid just before its request was seen (connect, TLS handshake) belong to that request too. */
  private tagRecent(pid: number, traceId: string, ts: number): void {
    const { events } = this.ring.query({ pid, from: ts - TRACE_JOIN_MS, to: ts }, 64);
    for (const e of events) {
      if (e.traceId || e.type === 'http_traceparent') continue;
      e.traceId = traceId;
      e.detail.traceIdSource = 'same_pid_following_request';
    }
  }

  private publish(e: KernelEvent): void {
    const before = this.ring.evicted;
    this.ring.push(e);
    if (this.ring.evicted > before) this.evicted.inc();
    this.sse.publish(e);
  }

  health(): Record<string, unknown> {
    const replay = this.opts.replay;
    const probes = replay
      ? this.opts.probes.map((p) => ({ name: p.name, description: p.description, state: 'not_attached', attached: false, code: 'replay_mode', reason: `replay mode: events come from ${replay.file}, not the kernel` }))
      : this.runners.map((r) => ({ ...r.status }));
    return {
      ok: this.mode === 'replay' ? !this.replayError : probes.every((p) => p.attached),
      mode: this.mode,
      node: this.opts.node,
      probes,
      ...(replay ? { replay: { file: replay.file, timing: replay.timing, events: this.replayer?.total ?? 0, done: this.replayer?.done ?? false, error: this.replayError } } : {}),
      ring: { size: this.ring.size, capacity: this.ring.capacity, evicted: this.ring.evicted },
      sseClients: this.sse.size,
      registrations: this.pids.size,
    };
  }

  async stop(): Promise<void> {
    this.replayer?.stop();
    await Promise.all(this.runners.map((r) => r.stop()));
    this.sse.close();
    await this.recorder?.close();
  }
}
