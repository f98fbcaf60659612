/**
 * Runs one probe as a `bpftrace -f json` child: preflight, the files its uprobes go on (core/uprobe-files.ts, symbols
 * checked), spawn, decode its JSON lines, hand record lines to the probe's parser, reconcile the kernel counts it
 * flushes (core/kit.ts, core/tally.ts), count lost and suppressed events, restart a child that dies with exponential
 * backoff, and reload the program when the workloads start mapping a new file of its kinds (all shown in /health).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { exportedSymbols, machinePreflight, probePreflight, type NotAttachedCode } from './preflight';
import { commFromHex, Kit, RECORD_PREFIX, type KitOptions } from './kit';
import type { ProbeModule, ProbeOptions, RawEvent, UprobeTarget } from './probe';
import { TallyReconciler, type FlushResult, type SuppressedEntry, type TallyDelta } from './tally';
import type { UprobeFileRefusal, UprobeFiles } from './uprobe-files';

/** `waiting`: no workload maps a file of the probe's kinds yet; it starts when one does. */
export type ProbeState = 'starting' | 'attached' | 'restarting' | 'waiting' | 'not_attached' | 'stopped';

/** A file the probe's uprobes are on. */
export interface AttachedFile {
  file: string;
  path: string;
  /** The path inside the process's mount namespace (differs from `path` for a container's file). */
  mappedPath: string;
  source: 'explicit' | 'discovered';
  symbols: string[];
  pids: number[];
  processes: number;
}

export interface ProbeStatus {
  name: string;
  description: string;
  state: ProbeState;
  attached: boolean;
  code?: NotAttachedCode;
  reason?: string;
  /** bpftrace's own count of attached probe points. */
  attachPoints?: number;
  since?: number;
  restarts: number;
  /** Programs reloaded because the workloads started mapping new files. */
  reloads: number;
  nextRetryMs?: number;
  /** For uprobe probes: the files attached and the ones that were not, with why. */
  uprobes?: { attached: AttachedFile[]; refused: UprobeFileRefusal[] };
  bpftracePid?: number;
  /** Per-event records received (and published to /events). */
  events: number;
  /** Kernel events counted (exact: records plus the suppressed ones, from the kernel's counts). */
  counted: number;
  /** Events over the per-event budget: counted in the metrics, absent from /events. */
  suppressed: number;
  /** Records per second this probe may send (HOPSCOPE_BPF_EVENT_BUDGET). */
  budgetPerSecond: number;
  /** Kernel counts flushed (one per flush period). */
  flushes: number;
  lost: number;
  unparsable: number;
}

export interface RunnerDeps {
  bpftrace: string;
  options: ProbeOptions;
  log: Logger;
  /** `count`: add the event to the metrics now (false when the kernel's flush of its epoch already counted it). */
  onEvent: (probe: ProbeModule, e: RawEvent, count: boolean) => void;
  onLost: (probe: ProbeModule, n: number, stage: 'kernel' | 'unparsable') => void;
  /** Kernel counts not already counted from records (the suppressed events), per tally key. */
  onCounts: (probe: ProbeModule, deltas: TallyDelta[]) => void;
  onSuppressed: (probe: ProbeModule, entries: SuppressedEntry[]) => void;
  /** Per-event budget and flush period of the kernel counts. */
  kit: KitOptions;
  backoff?: { initialMs: number; maxMs: number };
  /** Perf ring pages per CPU for bpftrace's printf output (512). */
  perfPages?: number;
  /** Pause after a small read so lines batch up (3 ms; 0 = read every line at once). */
  batchPauseMs?: number;
  /** The workloads' files for uprobes (absent: a uprobe probe has no files). */
  files?: UprobeFiles;
}

/** Coalesces the files found in one burst (a pod starting maps many) into one reload. */
const RELOAD_DEBOUNCE_MS = 1000;

const NOISE = /RLIMIT_MEMLOCK|^\s*$/;
/** Above this much per read we are behind: keep reading without pausing so bpftrace never blocks on the pipe. */
const BATCH_BUSY_BYTES = 16 * 1024;

// bpftrace children must not outlive the exporter (uprobes stay attached while they run): stop them on any exit.
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of liveChildren) c.kill('SIGINT');
});

export class ProbeRunner {
  private child?: ChildProcess;
  private timer?: NodeJS.Timeout;
  private reloadTimer?: NodeJS.Timeout;
  private stopping = false;
  private reloading = false;
  /** The targets the running program was built for (compared on a files change). */
  private targetsKey = '';
  private failures = 0;
  private stderr: string[] = [];
  private tally = new TallyReconciler();
  /** Records seen per kernel second (Node's exact cap behind the kernel's racy one). */
  private readonly perSecond = new Map<number, number>();
  readonly status: ProbeStatus;

  constructor(
    readonly probe: ProbeModule,
    private readonly deps: RunnerDeps
  ) {
    this.status = {
      name: probe.name,
      description: probe.description,
      state: 'starting',
      attached: false,
      restarts: 0,
      reloads: 0,
      events: 0,
      counted: 0,
      suppressed: 0,
      budgetPerSecond: deps.kit.budget,
      flushes: 0,
      lost: 0,
      unparsable: 0,
    };
    const kinds = new Set((probe.uprobes ?? []).map((k) => k.file));
    if (kinds.size && deps.files) {
      deps.files.on('change', (changed: string[]) => {
        if (!changed.some((k) => kinds.has(k)) || this.stopping) return;
        clearTimeout(this.reloadTimer);
        this.reloadTimer = setTimeout(() => {
          void this.reload();
        }, RELOAD_DEBOUNCE_MS);
        this.reloadTimer.unref();
      });
    }
  }

  /** The files of the probe's kinds that export its symbols, and the ones refused with why. */
  private async targets(
    bin: string
  ): Promise<{ targets: UprobeTarget[]; attached: AttachedFile[]; refused: UprobeFileRefusal[] }> {
    const targets: UprobeTarget[] = [];
    const attached: AttachedFile[] = [];
    const refused: UprobeFileRefusal[] = [];
    for (const kind of this.probe.uprobes ?? []) {
      refused.push(...(this.deps.files?.refusals(kind.file) ?? []));
      for (const f of this.deps.files?.files(kind.file) ?? []) {
        const have = await exportedSymbols(bin, f.path, kind.symbols);
        const present = kind.symbols.filter((s) => have.has(s));
        const missing = kind.symbols.filter((s) => !have.has(s));
        if (kind.anyOf ? !present.length : missing.length) {
          refused.push({
            file: kind.file,
            path: f.path,
            reason: kind.anyOf ? `exports none of ${kind.symbols.join(', ')}` : `lacks ${missing.join(', ')}`,
          });
          continue;
        }
        targets.push({ file: kind.file, path: f.path, symbols: present });
        attached.push({
          file: kind.file,
          path: f.path,
          mappedPath: f.mappedPath,
          source: f.source,
          symbols: present,
          pids: [...f.pids],
          processes: f.processes,
        });
      }
    }
    return { targets, attached, refused };
  }

  /** New files of the probe's kinds: rebuild the program when its targets changed (or start a waiting probe). */
  private async reload(): Promise<void> {
    if (this.stopping || this.reloading) return;
    await this.inFlight;
    const machine = machinePreflight(this.deps.bpftrace);
    if (!machine.ok) return;
    const { targets } = await this.targets(machine.bin);
    if (keyOf(targets) === this.targetsKey && this.status.state !== 'waiting') return;
    const child = this.child;
    this.reloading = true;
    try {
      if (child && child.exitCode === null) {
        // SIGINT: bpftrace runs END, so the counts of the old program are flushed before the new one starts.
        await new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGINT');
        });
      }
    } finally {
      this.reloading = false;
    }
    if (this.stopping) return;
    clearTimeout(this.timer);
    this.status.reloads++;
    this.deps.log.info(
      { probe: this.probe.name, targets: targets.map((t) => t.path) },
      'uprobe files changed: reloading the probe'
    );
    await this.start();
  }

  /** A start in progress (preflight and symbol listings are awaited): a reload waits for it. */
  private inFlight?: Promise<void>;

  start(): Promise<void> {
    this.inFlight = this.doStart().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async doStart(): Promise<void> {
    this.stopping = false;
    const { log } = this.deps;
    const machine = machinePreflight(this.deps.bpftrace);
    if (!machine.ok) return this.notAttached(machine.code, machine.reason, false);
    const pre = await probePreflight(this.probe.requirements(this.deps.options));
    if (this.stopping) return;
    // A missing file may appear later (a driver install): keep checking, slowly.
    if (!pre.ok) return this.notAttached(pre.code, pre.reason, pre.code === 'file_missing');
    const { targets, attached, refused } = await this.targets(machine.bin);
    if (this.stopping) return;
    if (this.probe.uprobes?.length) this.status.uprobes = { attached, refused };
    this.targetsKey = keyOf(targets);
    if (this.probe.uprobesRequired && !targets.length) {
      const kinds = (this.probe.uprobes ?? []).map((k) => k.file).join(' or ');
      const why = refused.length ? `; refused: ${refused.map((r) => `${r.path} (${r.reason})`).join('; ')}` : '';
      Object.assign(this.status, {
        state: 'waiting',
        attached: false,
        code: 'no_targets',
        bpftracePid: undefined,
        since: undefined,
        nextRetryMs: undefined,
        reason: `no ${kinds} file to attach to yet: no registered or pod process maps one (checked every scan; or name one: HOPSCOPE_BPF_LIBCUDA, HOPSCOPE_BPF_LIBSSL, HOPSCOPE_BPF_NODE_BINARY)${why}`,
      });
      return;
    }
    const kit = new Kit(this.probe.tallies ?? [], this.deps.kit);
    const program = this.probe.program(this.deps.options, targets, kit);
    if (!kit.complete) throw new Error(`probe ${this.probe.name}: program has no kit.footer()`);
    this.stderr = [];
    // A new bpftrace starts its epochs at 0: what the last one had not flushed is gone with it.
    this.tally = new TallyReconciler(this.probe.tallies ?? []);
    this.perSecond.clear();
    const child = spawn(machine.bin, ['-f', 'json', '-e', program], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Bigger perf rings (default 64 pages per CPU) ride out moments when bpftrace is not scheduled on a busy node.
      env: { BPFTRACE_PERF_RB_PAGES: String(this.deps.perfPages ?? 512), ...process.env, ...this.probe.env },
    });
    this.child = child;
    liveChildren.add(child);
    Object.assign(this.status, {
      state: 'starting',
      attached: false,
      bpftracePid: child.pid,
      code: undefined,
      reason: undefined,
      nextRetryMs: undefined,
    });
    child.on('error', (err) => this.stderr.push(err.message));
    createInterface({ input: child.stderr! }).on('line', (l) => {
      if (NOISE.test(l)) return;
      this.stderr.push(l);
      if (this.stderr.length > 20) this.stderr.shift();
    });
    this.readBatched(child);
    child.on('exit', () => liveChildren.delete(child));
    // 'close', not 'exit': the last flush (END) may still be in the pipe when the process is gone.
    child.on('close', (code, signal) => {
      liveChildren.delete(child);
      const open = this.tally.close();
      if (open) this.deliver(open);
      if (this.child !== child) return;
      this.child = undefined;
      if (this.reloading) return; // reload() starts the new program
      const ranMs = this.status.since ? Date.now() - this.status.since : 0;
      if (this.stopping) {
        Object.assign(this.status, { state: 'stopped', attached: false, bpftracePid: undefined });
        return;
      }
      if (this.status.attached && ranMs > 30_000) this.failures = 0; // it ran well: restart promptly
      const why =
        this.stderr
          .filter((l) => /ERROR|error|Could not|cannot|failed/i.test(l))
          .slice(-3)
          .join(' | ') || this.stderr.slice(-2).join(' | ');
      const reason = `bpftrace exited (${signal ?? `code ${code}`})${why ? `: ${why}` : ''}`;
      log.warn(
        { probe: this.probe.name, code, signal, stderr: this.stderr.slice(-5) },
        'bpftrace exited; restarting with backoff'
      );
      this.notAttached('bpftrace_failed', reason, true);
      this.status.restarts++;
    });
  }

  /**
   * bpftrace flushes after every printf, so at thousands of events/s each line would be its own pipe read and
   * callback. Pausing briefly after each chunk lets lines pile up in the pipe (64 KiB) and bpftrace's perf buffers,
   * so one wake-up handles many events; the pause is short enough that neither fills (lost events are counted anyway).
   */
  private readBatched(child: ChildProcess): void {
    const out = child.stdout!;
    out.setEncoding('utf8');
    let rest = '';
    out.on('data', (chunk: string) => {
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        if (nl > start) this.onLine(text.slice(start, nl));
        start = nl + 1;
      }
      rest = text.slice(start);
      if (rest.length > 1 << 20) rest = ''; // a runaway line: drop it rather than grow
      const pause = this.deps.batchPauseMs ?? 3;
      if (pause > 0 && chunk.length < BATCH_BUSY_BYTES) {
        out.pause();
        setTimeout(() => out.resume(), pause).unref();
      }
    });
  }

  private onLine(line: string): void {
    let msg: { type?: string; data?: unknown };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    } // bpftrace's own non-JSON chatter
    if (msg.type === 'attached_probes') {
      // Printed before bpftrace attaches them; the kit's BEGIN marker says when it has.
      this.status.attachPoints = (msg.data as { probes?: number } | undefined)?.probes ?? 0;
    } else if (msg.type === 'printf' && typeof msg.data === 'string') {
      // One printf = one record; a probe's text may itself hold newlines (HTTP headers), so only the final one goes.
      const text = msg.data.replace(/\n$/, '');
      if (text.startsWith('{"bx":')) return this.onMarker(text);
      this.onRecord(text);
    } else if (msg.type === 'map' && msg.data && typeof msg.data === 'object') {
      for (const [name, data] of Object.entries(msg.data)) this.tally.map(name, data);
    } else if (msg.type === 'lost_events') {
      const n = (msg.data as { events?: number } | undefined)?.events ?? 0;
      this.status.lost += n;
      this.deps.onLost(this.probe, n, 'kernel');
    }
  }

  /** A per-event record: `<epoch> <second> <class> <the probe's own text>` (kit.event). */
  private onRecord(text: string): void {
    const m = RECORD_PREFIX.exec(text);
    let raw: RawEvent | null = null;
    try {
      if (!m) throw new Error('record without the kit prefix');
      raw = this.probe.parse(text.slice(m[0].length)) as RawEvent | null;
    } catch {
      this.status.unparsable++;
      this.deps.onLost(this.probe, 1, 'unparsable');
      return;
    }
    if (!raw) return;
    raw.comm = commFromHex(m![4]);
    raw.notable = m![3] === '1';
    const epoch = Number(m![1]);
    const second = Number(m![2]);
    // The kernel's budget check is not atomic across CPUs: records past the budget are suppressed here (the kernel
    // counted them in its maps, so the flush adds them to the metrics). One budget per class, as in the kernel.
    const slot = second * 2 + Number(m![3]);
    const seen = (this.perSecond.get(slot) ?? 0) + 1;
    this.perSecond.set(slot, seen);
    if (this.perSecond.size > 16)
      for (const s of this.perSecond.keys()) if (s < (second - 4) * 2) this.perSecond.delete(s);
    if (seen > this.deps.kit.budget) {
      const e: SuppressedEntry = {
        second,
        type: raw.type,
        notable: raw.notable,
        pid: raw.pid,
        cgroupId: raw.cgroupId ?? 0,
        count: 1,
      };
      this.status.suppressed++;
      if (!raw.tally) this.status.counted++;
      this.deps.onSuppressed(this.probe, [e]);
      return;
    }
    raw.epoch = epoch;
    const count = raw.tally ? this.tally.record(epoch, raw.pid, raw.cgroupId ?? 0, raw.tally) : true;
    this.status.events++;
    if (count) this.status.counted++;
    this.deps.onEvent(this.probe, raw, count);
  }

  private onMarker(text: string): void {
    let m: { bx?: string; e?: number };
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m.bx === 'begin') {
      Object.assign(this.status, { state: 'attached', attached: true, since: Date.now() });
      this.deps.log.info({ probe: this.probe.name, attachPoints: this.status.attachPoints }, 'probe attached');
      return;
    }
    const epoch = Number(m.e);
    const done = m.bx === 'flush' ? this.tally.begin(epoch) : m.bx === 'end' ? this.tally.end(epoch) : undefined;
    if (done) this.deliver(done);
  }

  private deliver(f: FlushResult): void {
    this.status.flushes++;
    if (f.inferred)
      this.deps.log.warn(
        { probe: this.probe.name, epoch: f.epoch },
        'kernel counts flushed without their marker (perf buffer loss?)'
      );
    for (const d of f.deltas) this.status.counted += d.count;
    for (const s of f.suppressed) {
      this.status.suppressed += s.count;
      if (!this.probe.tallies?.length) this.status.counted += s.count; // no kernel tally: counted = records + suppressed
    }
    if (f.deltas.length) this.deps.onCounts(this.probe, f.deltas);
    if (f.suppressed.length) this.deps.onSuppressed(this.probe, f.suppressed);
  }

  private notAttached(code: NotAttachedCode, reason: string, retry: boolean): void {
    Object.assign(this.status, {
      state: retry ? 'restarting' : 'not_attached',
      attached: false,
      code,
      reason,
      bpftracePid: undefined,
      since: undefined,
    });
    if (!retry || this.stopping) return;
    const { initialMs, maxMs } = this.deps.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.failures++);
    this.status.nextRetryMs = Date.now() + delay;
    this.timer = setTimeout(() => {
      void this.start();
    }, delay);
    this.timer.unref();
  }

  /** Stops bpftrace (SIGINT: it runs END, which flushes the open counts and clears the rest) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearTimeout(this.reloadTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) {
      Object.assign(this.status, { state: 'stopped', attached: false });
      return;
    }
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      // 'close': END's flush has been read and counted by then.
      child.once('close', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGINT');
    });
    Object.assign(this.status, { state: 'stopped', attached: false, bpftracePid: undefined });
  }

  /** For tests of the restart path: what a crash looks like. */
  killChild(signal: NodeJS.Signals = 'SIGKILL'): boolean {
    return this.child?.kill(signal) ?? false;
  }
}

const keyOf = (targets: UprobeTarget[]): string =>
  targets
    .map((t) => `${t.path}:${t.symbols.join(',')}`)
    .sort()
    .join('|');
