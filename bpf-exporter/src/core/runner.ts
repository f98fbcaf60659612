/**
 * Runs one probe as a `bpftrace -f json` child: preflight, spawn, decode its JSON lines, hand printf lines to the
 * probe's parser, count lost events, and restart a child that dies with exponential backoff (shown in /health).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { machinePreflight, probePreflight, type NotAttachedCode } from './preflight';
import type { ProbeModule, ProbeOptions, RawEvent } from './probe';

export type ProbeState = 'starting' | 'attached' | 'restarting' | 'not_attached' | 'stopped';

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
  nextRetryMs?: number;
  bpftracePid?: number;
  events: number;
  lost: number;
  unparsable: number;
}

export interface RunnerDeps {
  bpftrace: string;
  options: ProbeOptions;
  log: Logger;
  onEvent: (probe: ProbeModule, e: RawEvent) => void;
  onLost: (probe: ProbeModule, n: number, stage: 'kernel' | 'unparsable') => void;
  backoff?: { initialMs: number; maxMs: number };
  /** Perf ring pages per CPU for bpftrace's printf output (512). */
  perfPages?: number;
  /** Pause after a small read so lines batch up (3 ms; 0 = read every line at once). */
  batchPauseMs?: number;
}

const NOISE = /RLIMIT_MEMLOCK|^\s*$/;
/** Above this much per read we are behind: keep reading without pausing so bpftrace never blocks on the pipe. */
const BATCH_BUSY_BYTES = 16 * 1024;

// bpftrace children must not outlive the exporter (uprobes stay attached while they run): stop them on any exit.
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => { for (const c of liveChildren) c.kill('SIGINT'); });

export class ProbeRunner {
  private child?: ChildProcess;
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private failures = 0;
  private stderr: string[] = [];
  readonly status: ProbeStatus;

  constructor(readonly probe: ProbeModule, private readonly deps: RunnerDeps) {
    this.status = { name: probe.name, description: probe.description, state: 'starting', attached: false, restarts: 0, events: 0, lost: 0, unparsable: 0 };
  }

  async start(): Promise<void> {
    this.stopping = false;
    const { log } = this.deps;
    const machine = machinePreflight(this.deps.bpftrace);
    if (!machine.ok) return this.notAttached(machine.code, machine.reason, false);
    const pre = await probePreflight(machine.bin, this.probe.requirements(this.deps.options));
    if (this.stopping) return;
    // A missing library or symbol may appear later (a driver install): keep checking, slowly.
    if (!pre.ok) return this.notAttached(pre.code, pre.reason, pre.code === 'file_missing' || pre.code === 'symbol_missing');
    const program = this.probe.program(this.deps.options, pre.found);
    this.stderr = [];
    const child = spawn(machine.bin, ['-f', 'json', '-e', program], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Bigger perf rings (default 64 pages per CPU) ride out moments when bpftrace is not scheduled on a busy node.
      env: { BPFTRACE_PERF_RB_PAGES: String(this.deps.perfPages ?? 512), ...process.env, ...this.probe.env },
    });
    this.child = child;
    liveChildren.add(child);
    Object.assign(this.status, { state: 'starting', attached: false, bpftracePid: child.pid, code: undefined, reason: undefined, nextRetryMs: undefined });
    child.on('error', (err) => this.stderr.push(err.message));
    createInterface({ input: child.stderr! }).on('line', (l) => {
      if (NOISE.test(l)) return;
      this.stderr.push(l);
      if (this.stderr.length > 20) this.stderr.shift();
    });
    this.readBatched(child);
    child.on('exit', (code, signal) => {
      liveChildren.delete(child);
      if (this.child !== child) return;
      this.child = undefined;
      const ranMs = this.status.since ? Date.now() - this.status.since : 0;
      if (this.stopping) {
        Object.assign(this.status, { state: 'stopped', attached: false, bpftracePid: undefined });
        return;
      }
      if (this.status.attached && ranMs > 30_000) this.failures = 0; // it ran well: restart promptly
      const why = this.stderr.filter((l) => /ERROR|error|Could not|cannot|failed/i.test(l)).slice(-3).join(' | ') || this.stderr.slice(-2).join(' | ');
      const reason = `bpftrace exited (${signal ?? `code ${code}`})${why ? `: ${why}` : ''}`;
      log.warn({ probe: this.probe.name, code, signal, stderr: this.stderr.slice(-5) }, 'bpftrace exited; restarting with backoff');
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
    try { msg = JSON.parse(line); } catch { return; } // bpftrace's own non-JSON chatter
    if (msg.type === 'attached_probes') {
      const n = (msg.data as { probes?: number } | undefined)?.probes ?? 0;
      Object.assign(this.status, { state: 'attached', attached: true, attachPoints: n, since: Date.now() });
      this.deps.log.info({ probe: this.probe.name, attachPoints: n }, 'probe attached');
    } else if (msg.type === 'printf' && typeof msg.data === 'string') {
      // One printf = one record; a probe's text may itself hold newlines (HTTP headers), so only the final one goes.
      const text = msg.data.replace(/\n$/, '');
      let raw: ReturnType<ProbeModule['parse']>;
      try { raw = this.probe.parse(text); } catch {
        this.status.unparsable++;
        this.deps.onLost(this.probe, 1, 'unparsable');
        return;
      }
      if (!raw) return;
      this.status.events++;
      this.deps.onEvent(this.probe, raw);
    } else if (msg.type === 'lost_events') {
      const n = (msg.data as { events?: number } | undefined)?.events ?? 0;
      this.status.lost += n;
      this.deps.onLost(this.probe, n, 'kernel');
    }
  }

  private notAttached(code: NotAttachedCode, reason: string, retry: boolean): void {
    Object.assign(this.status, { state: retry ? 'restarting' : 'not_attached', attached: false, code, reason, bpftracePid: undefined, since: undefined });
    if (!retry || this.stopping) return;
    const { initialMs, maxMs } = this.deps.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.failures++);
    this.status.nextRetryMs = Date.now() + delay;
    this.timer = setTimeout(() => { void this.start(); }, delay);
    this.timer.unref();
  }

  /** Stops bpftrace (SIGINT: it runs END, which clears maps so nothing is dumped) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null) {
      Object.assign(this.status, { state: 'stopped', attached: false });
      return;
    }
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => { clearTimeout(kill); resolve(); });
      child.kill('SIGINT');
    });
    Object.assign(this.status, { state: 'stopped', attached: false, bpftracePid: undefined });
  }

  /** For tests of the restart path: what a crash looks like. */
  killChild(signal: NodeJS.Signals = 'SIGKILL'): boolean {
    return this.child?.kill(signal) ?? false;
  }
}
