/**
 * The exporter core: runs the selected probes (or a replay), turns each raw probe event into a contract KernelEvent
 * (epoch time, pod attribution, trace id join, mode), and fans it out to the ring, SSE, the probe's metrics and the
 * recorder; adds the kernel's flushed counts (events over the per-event budget) to the metrics and keeps what was
 * suppressed per second for /events. Owns what attribution and the uprobes need from the node: the pid registry,
 * the Kubernetes pod informer (when configured) and the discovery of the workloads' files. Probe-agnostic:
 * everything probe-specific lives in the probe modules.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { KernelEvent, KernelEventType } from '../../../contract';
import { Attributor, type Attribution } from '../attribution/attributor';
import { BoundedCache } from '../attribution/bounded-cache';
import type { KubeConnection } from '../attribution/kubernetes/connection';
import { PodInformer } from '../attribution/kubernetes/pod-informer';
import { PidRegistry } from '../attribution/registry';
import { bucketOf, type KitOptions } from './kit';
import { podLabelSet } from './pod-labels';
import type { PodLabelValues, ProbeMetrics, ProbeModule, ProbeOptions, RawEvent } from './probe';
import { SuppressedLog } from './suppressed';
import type { SuppressedEntry, TallyDelta } from './tally';
import type { EventFilter } from './ring';
import { Recorder, Replayer, readRecording } from './replay';
import { EventRing } from './ring';
import { ProbeRunner, type ProbeStatus } from './runner';
import { SseHub } from './sse';
import { UprobeFiles } from './uprobe-files';
import { usableBySymbols } from './uprobe-usable';

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
  /** Per-event records per probe per second and the flush period of the kernel counts (200, 1000 ms). */
  kit?: KitOptions;
  /** Pod label keys kept on events and metrics (default none). */
  podLabels?: string[];
  /** Pod identities from the Kubernetes API: a connection, or why there is none (a bad kubeconfig). */
  kubernetes?: { connection?: KubeConnection; error?: string };
  /** Files named for the uprobes per kind, and the discovery period (0 = named files only). */
  uprobeFiles?: Record<string, string[]>;
  scanMs?: number;
  sseMaxClients?: number;
  /** Where /proc is (tests of the discovery). */
  procRoot?: string;
}

/** Events of a pid within this window of a request whose traceparent was read carry that trace id. */
const TRACE_JOIN_MS = 2000;

export class Pipeline {
  readonly registry = new Registry();
  readonly pids = new PidRegistry();
  readonly attributor: Attributor;
  readonly ring: EventRing;
  readonly sse: SseHub;
  readonly files: UprobeFiles;
  readonly pods?: PodInformer;
  private readonly podLabels: ReturnType<typeof podLabelSet>;
  readonly runners: ProbeRunner[] = [];
  readonly mode: 'live' | 'replay';
  private readonly metrics = new Map<string, ProbeMetrics>();
  private readonly recentTrace = new BoundedCache<number, { traceId: string; at: number }>(4096, TRACE_JOIN_MS);
  private readonly lost: Counter<'probe' | 'stage'>;
  private readonly evicted: Counter;
  private readonly total: Counter<'probe' | 'type'>;
  private readonly totalChildren = new Map<string, { inc(n?: number): void }>();
  private readonly suppressedTotal: Counter<'probe'>;
  readonly suppressed = new SuppressedLog();
  readonly kit: KitOptions;
  private replayer?: Replayer;
  private recorder?: Recorder;
  private readonly offsetMs: number;
  replayError?: string;

  constructor(private readonly opts: PipelineOptions) {
    this.mode = opts.replay ? 'replay' : 'live';
    this.kit = opts.kit ?? { budget: 200, flushMs: 1000 };
    this.ring = new EventRing(opts.ringSize);
    this.sse = new SseHub({ ring: this.ring, maxClients: opts.sseMaxClients ?? 16 });
    this.podLabels = podLabelSet(opts.podLabels ?? []);
    if (opts.kubernetes?.connection) {
      this.pods = new PodInformer({
        connection: opts.kubernetes.connection,
        node: opts.node,
        labelKeys: opts.podLabels ?? [],
        log: opts.log,
      });
    }
    this.attributor = new Attributor({
      node: opts.node,
      registry: this.pids,
      pods: this.pods,
      procRoot: opts.procRoot,
    });
    // Every file kind any selected probe puts uprobes on (same name, same matcher).
    const kinds = new Map<string, { file: string; matches(b: string): boolean }>();
    for (const p of opts.probes) for (const k of p.uprobes ?? []) if (!kinds.has(k.file)) kinds.set(k.file, k);
    this.files = new UprobeFiles({
      kinds: [...kinds.values()],
      explicit: Object.fromEntries(Object.entries(opts.uprobeFiles ?? {}).filter(([k]) => kinds.has(k))),
      registered: () => this.pids.list().map((r) => r.pid),
      scanMs: opts.replay ? 0 : (opts.scanMs ?? 15_000),
      selfPid: process.pid,
      procRoot: opts.procRoot,
      // A file counts toward its kind's cap only once it exports what a probe needs (pods choose what they map).
      usable: usableBySymbols(opts.probes, opts.bpftrace),
    });
    // bpf `nsecs` and process.hrtime are both CLOCK_MONOTONIC: one offset converts kernel time to epoch ms.
    this.offsetMs = Date.now() - Number(process.hrtime.bigint()) / 1e6;
    this.lost = new Counter({
      name: 'hopscope_bpf_events_lost_total',
      help: 'Kernel events lost: stage "kernel" = bpftrace perf buffer overflow, "unparsable" = malformed probe line',
      labelNames: ['probe', 'stage'],
      registers: [this.registry],
    });
    this.evicted = new Counter({
      name: 'hopscope_bpf_ring_evicted_total',
      help: 'Events overwritten in the bounded /events ring (still counted in metrics)',
      registers: [this.registry],
    });
    this.total = new Counter({
      name: 'hopscope_bpf_events_total',
      help: 'Kernel events counted, by probe and type: counted in the kernel, so exact whether or not their per-event record was sent (http_traceparent: records read)',
      labelNames: ['probe', 'type'],
      registers: [this.registry],
    });
    this.suppressedTotal = new Counter({
      name: 'hopscope_bpf_events_suppressed_total',
      help: 'Kernel events over the per-event budget (HOPSCOPE_BPF_EVENT_BUDGET): counted in the metrics, absent from /events and SSE',
      labelNames: ['probe'],
      registers: [this.registry],
    });
    const runners = this.runners;
    new Gauge({
      name: 'hopscope_bpf_probe_attached',
      help: '1 when the probe is attached, 0 otherwise (see /health for why)',
      labelNames: ['probe'],
      registers: [this.registry],
      collect() {
        for (const r of runners) this.set({ probe: r.status.name }, r.status.attached ? 1 : 0);
      },
    });
    new Gauge({
      name: 'hopscope_bpf_probe_restarts',
      help: "Times the probe's bpftrace was restarted",
      labelNames: ['probe'],
      registers: [this.registry],
      collect() {
        for (const r of runners) this.set({ probe: r.status.name }, r.status.restarts);
      },
    });
    const sse = this.sse;
    new Gauge({
      name: 'hopscope_bpf_sse_dropped',
      help: 'SSE subscribers closed for falling further behind than the ring holds',
      registers: [this.registry],
      collect() {
        this.set(sse.dropped);
      },
    });
    new Gauge({
      name: 'hopscope_bpf_sse_clients',
      help: 'SSE subscribers connected now',
      registers: [this.registry],
      collect() {
        this.set(sse.size);
      },
    });
    new Gauge({
      name: 'hopscope_bpf_sse_refused',
      help: 'SSE subscriptions refused at HOPSCOPE_BPF_SSE_MAX_CLIENTS',
      registers: [this.registry],
      collect() {
        this.set(sse.refused);
      },
    });
    for (const p of opts.probes) {
      this.metrics.set(p.name, p.metrics(this.registry, this.podLabels));
      this.lost.inc({ probe: p.name, stage: 'kernel' }, 0);
      this.suppressedTotal.inc({ probe: p.name }, 0);
    }
  }

  async start(): Promise<void> {
    this.pods?.start();
    if (this.opts.replay) {
      let events: KernelEvent[] = [];
      try {
        events = readRecording(this.opts.replay.file);
      } catch (err) {
        this.replayError = (err as Error).message;
        this.opts.log.error({ err }, 'cannot read the replay file');
      }
      this.replayer = new Replayer(events, this.opts.replay.timing);
      this.replayer.start((e) => this.publish(e));
      return;
    }
    if (this.opts.recordFile) this.recorder = new Recorder(this.opts.recordFile);
    // The first scan runs before the probes start, so they attach to what the workloads already run.
    this.files.start();
    for (const probe of this.opts.probes) {
      const runner = new ProbeRunner(probe, {
        bpftrace: this.opts.bpftrace,
        options: this.opts.probeOptions,
        log: this.opts.log,
        backoff: this.opts.backoff,
        perfPages: this.opts.perfPages,
        batchPauseMs: this.opts.batchPauseMs,
        kit: this.kit,
        files: this.files,
        onEvent: (p, raw, count) => this.ingest(p, raw, count),
        onLost: (p, n, stage) => this.lost.inc({ probe: p.name, stage }, n),
        onCounts: (p, deltas) => this.addCounts(p, deltas),
        onSuppressed: (p, entries) => this.addSuppressed(p, entries),
      });
      this.runners.push(runner);
    }
    await Promise.all(this.runners.map((r) => r.start()));
  }

  get node(): string {
    return this.opts.node;
  }

  /** Resolves once every started probe is attached or has given its reason (for tests and the demo). */
  async settled(timeoutMs = 60_000): Promise<ProbeStatus[]> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.runners.some((r) => r.status.state === 'starting'))
      await new Promise((r) => setTimeout(r, 100));
    return this.runners.map((r) => r.status);
  }

  /** A socket event with no owning pid is attributed through the socket's cgroup id, so is one whose process is gone. */
  private attribute(pid: number, cgroupId: number): Attribution {
    if (pid <= 0) return this.attributor.forCgroupId(cgroupId);
    const a = this.attributor.forPid(pid);
    return a.source === 'none' && !a.cgroupPath && cgroupId
      ? { ...this.attributor.forCgroupId(cgroupId), node: a.node }
      : a;
  }

  private labels(a: Attribution): PodLabelValues {
    return this.podLabels.values(a.pod ?? '', a.namespace ?? '', a.node ?? this.opts.node, a.labels);
  }

  private countType(probe: string, type: KernelEventType, n: number): void {
    const key = `${probe}|${type}`;
    let child = this.totalChildren.get(key);
    if (!child) {
      child = this.total.labels(probe, type);
      this.totalChildren.set(key, child);
    }
    child.inc(n);
  }

  /**
   * A per-event record. `count` (default true): add it to the metrics now; false when the kernel's flush of its epoch
   * already counted it.
   */
  ingest(probe: ProbeModule, raw: RawEvent, count = true): KernelEvent {
    const ts = raw.nsecs !== undefined ? Number(raw.nsecs) / 1e6 + this.offsetMs : Date.now();
    const a = this.attribute(raw.pid, raw.cgroupId ?? 0);
    const detail = raw.detail; // the probe's own object: extended in place, not copied
    detail.attribution = a.source;
    if (raw.cgroupId) detail.cgroupId = raw.cgroupId;
    if (a.cgroupPath) detail.cgroupPath = a.cgroupPath;
    if (a.container) detail.container = a.container;
    if (a.podUid) detail.podUid = a.podUid;
    if (a.service) detail.service = a.service;
    if (a.owner) detail.owner = a.owner;
    if (a.workload) detail.workload = a.workload;
    // Built field by field (no conditional spreads): this runs for every event.
    const e: KernelEvent = {
      ts: Math.round(ts * 1000) / 1000,
      type: raw.type,
      pid: raw.pid,
      comm: raw.comm,
      detail,
      mode: 'live',
    };
    if (a.pod) e.pod = a.pod;
    if (a.namespace) e.namespace = a.namespace;
    e.node = a.node ?? this.opts.node;
    if (a.labels) e.labels = a.labels;
    if (raw.notable) e.notable = true;
    if (raw.durationMs !== undefined) e.durationMs = raw.durationMs;
    if (raw.traceId) {
      e.traceId = raw.traceId;
      this.recentTrace.set(raw.pid, { traceId: raw.traceId, at: ts });
      this.tagRecent(raw.pid, raw.traceId, ts);
    } else if (raw.pid > 0) {
      const t = this.recentTrace.get(raw.pid);
      if (t && ts - t.at <= TRACE_JOIN_MS) {
        e.traceId = t.traceId;
        detail.traceIdSource = 'same_pid_recent_request';
      }
    }
    const m = this.metrics.get(probe.name);
    if (raw.tally && m?.add) {
      // Counted in the kernel too: added here once, the flush adds only what records did not bring.
      if (count) {
        const spec = probe.tallies?.find((t) => t.name === raw.tally!.name);
        const dims = spec?.bucketsNs
          ? [...raw.tally.dims, bucketOf(spec.bucketsNs, raw.tally.valueNs ?? 0)]
          : raw.tally.dims;
        m.add(raw.tally.name, dims, 1, raw.tally.valueNs ?? 0, this.labels(a));
        this.countType(probe.name, e.type, 1);
      }
    } else {
      this.countType(probe.name, e.type, 1);
      m?.observe?.(e);
    }
    this.recorder?.write(e);
    this.publish(e);
    return e;
  }

  /** Kernel counts of events whose records were not sent (over the budget), attributed by the key's pid / cgroup. */
  addCounts(probe: ProbeModule, deltas: TallyDelta[]): void {
    const m = this.metrics.get(probe.name);
    for (const d of deltas) {
      m?.add?.(d.tally, d.dims, d.count, d.sumNs, this.labels(this.attribute(d.pid, d.cgroupId)));
      this.countType(probe.name, d.type, d.count);
    }
  }

  addSuppressed(probe: ProbeModule, entries: SuppressedEntry[]): void {
    let n = 0;
    for (const s of entries) {
      const a = this.attribute(s.pid, s.cgroupId);
      this.suppressed.add({
        ts: s.second * 1000 + this.offsetMs,
        type: s.type,
        notable: s.notable,
        pid: s.pid,
        pod: a.pod,
        count: s.count,
      });
      n += s.count;
    }
    this.suppressedTotal.inc({ probe: probe.name }, n);
    this.sse.publishSuppressed(
      entries.map((s) => ({
        ts: s.second * 1000 + this.offsetMs,
        type: s.type,
        notable: s.notable,
        pid: s.pid,
        pod: this.attribute(s.pid, s.cgroupId).pod,
        count: s.count,
      }))
    );
  }

  /** Events matching the query that the budget kept out of /events (see SuppressedLog.count). */
  suppressedIn(f: EventFilter): number {
    return this.suppressed.count(f);
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
    this.sse.publish();
  }

  health(): Record<string, unknown> {
    const replay = this.opts.replay;
    const probes = replay
      ? this.opts.probes.map((p) => ({
          name: p.name,
          description: p.description,
          state: 'not_attached',
          attached: false,
          code: 'replay_mode',
          reason: `replay mode: events come from ${replay.file}, not the kernel`,
        }))
      : this.runners.map((r) => ({ ...r.status }));
    return {
      // A probe waiting for a file to attach to (no GPU workload on this node) is not a fault.
      ok: this.mode === 'replay' ? !this.replayError : probes.every((p) => p.attached || p.state === 'waiting'),
      mode: this.mode,
      node: this.opts.node,
      probes,
      ...(replay
        ? {
            replay: {
              file: replay.file,
              timing: replay.timing,
              events: this.replayer?.total ?? 0,
              done: this.replayer?.done ?? false,
              error: this.replayError,
            },
          }
        : {}),
      ring: { size: this.ring.size, capacity: this.ring.capacity, evicted: this.ring.evicted },
      // Per-event records are capped; counts (/metrics) are not. `suppressed` > 0: /events is not the whole stream.
      eventBudget: {
        perProbePerSecond: this.kit.budget,
        flushMs: this.kit.flushMs,
        suppressed: this.suppressed.total,
        complete: this.suppressed.total === 0,
        ...(Number.isFinite(this.suppressed.knownSince) ? { suppressedKnownSince: this.suppressed.knownSince } : {}),
      },
      sseClients: this.sse.size,
      sse: {
        clients: this.sse.size,
        maxClients: this.sse.maxClients,
        dropped: this.sse.dropped,
        refused: this.sse.refused,
      },
      seq: { first: this.ring.firstSeq, last: this.ring.lastSeq, start: this.ring.startSeq },
      registrations: this.pids.size,
      attribution: this.attributionHealth(),
      uprobeDiscovery: this.files.health(),
    };
  }

  /** Which identity source is in use: the Kubernetes API (and how it is doing) or /proc alone. */
  private attributionHealth(): Record<string, unknown> {
    const k = this.opts.kubernetes;
    if (this.pods)
      return {
        mode: 'kubernetes',
        kubernetes: this.pods.health(),
        fallback: 'proc (pods the informer does not know yet)',
      };
    if (k?.error) return { mode: 'proc', reason: `kubernetes not used: ${k.error}` };
    return {
      mode: 'proc',
      reason:
        "off-cluster: no KUBERNETES_SERVICE_HOST and no HOPSCOPE_BPF_KUBECONFIG; pods named from /proc/<pid>/cgroup and the container's HOSTNAME",
    };
  }

  async stop(): Promise<void> {
    this.replayer?.stop();
    this.files.stop();
    this.pods?.stop();
    await Promise.all(this.runners.map((r) => r.stop()));
    this.sse.close();
    await this.recorder?.close();
  }
}
