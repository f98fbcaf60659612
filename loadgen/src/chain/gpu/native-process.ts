/**
 * A stand-in's program as a child process (the CUDA driver, an NCCL rank): one command a line on its stdin, one
 * integer reply a line on its stdout, in order, after its `ready` line. Replies of a process that is gone are -1.
 * It ends when this process ends (end of its stdin), or on stop().
 */
import type { ChildProcess } from 'node:child_process';

export class NativeProcess {
  private readonly pending: Array<(result: number) => void> = [];
  private buffered = '';
  private ready = false;
  private alive = true;

  /** `onGone` is told why, once, when the process ends or cannot start before stop(). */
  constructor(
    private readonly child: ChildProcess,
    onGone: (why: string) => void
  ) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.onData(d));
    child.stdin!.on('error', () => {}); // EPIPE after the process died: reported by 'exit'
    const gone = (why: string): void => {
      const wasAlive = this.alive;
      this.end();
      if (wasAlive) onGone(why);
    };
    child.once('error', (err) => gone(`could not start: ${err.message}`));
    child.once('exit', (code, sig) => gone(`exited (${sig ?? code})`));
  }

  get pid(): number | undefined {
    return this.alive ? this.child.pid : undefined;
  }

  /** Sends one command; resolves with its reply (-1: the process went meanwhile). undefined when it is gone. */
  send(line: string): Promise<number> | undefined {
    if (!this.alive) return undefined;
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.child.stdin!.write(`${line}\n`);
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  stop(): void {
    if (!this.alive) return;
    this.end();
    this.child.stdin!.end();
    this.child.kill('SIGTERM');
  }

  private end(): void {
    this.alive = false;
    for (const p of this.pending.splice(0)) p(-1);
  }

  private onData(d: string): void {
    this.buffered += d;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      if (!this.ready) {
        this.ready = line.startsWith('ready');
        continue;
      }
      const r = Number(line);
      this.pending.shift()?.(Number.isInteger(r) ? r : -1);
    }
  }
}
