/**
 * Record and replay for machines without eBPF: live events are appended to a JSONL file; a replay reads it back with
 * the original spacing (re-based to now, the recorded time kept in detail.recordedTs) or all at once ("fast", original
 * timestamps). Replayed events always say mode "replay" so they never pass for live data.
 */
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { KERNEL_EVENT_TYPES, KernelEvent } from '../../../contract';
import { formatZodError } from '../../../contract/zod-error';

export function readRecording(file: string): KernelEvent[] {
  const out: KernelEvent[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${i + 1}: not JSON`);
    }
    const parsed = KernelEvent.safeParse(v);
    if (!parsed.success)
      throw new Error(
        `${file}:${i + 1}: not a kernel event: ${formatZodError(parsed.error, { root: 'event', max: 3 })}`
      );
    out.push(parsed.data);
  });
  return out.sort((a, b) => a.ts - b.ts);
}

export class Replayer {
  private timers: NodeJS.Timeout[] = [];
  done = false;

  constructor(
    private readonly events: KernelEvent[],
    private readonly timing: 'original' | 'fast'
  ) {}

  get total(): number {
    return this.events.length;
  }

  start(emit: (e: KernelEvent) => void, onDone: () => void = () => {}): void {
    // A recording made before events said whether they were notable: the types that always are, are.
    const asReplay = (e: KernelEvent, ts: number): KernelEvent => ({
      ...e,
      ts,
      mode: 'replay',
      detail: { ...e.detail, recordedTs: e.ts },
      ...(e.notable === undefined && KERNEL_EVENT_TYPES[e.type].notable === 'always' ? { notable: true } : {}),
    });
    if (this.timing === 'fast' || !this.events.length) {
      for (const e of this.events) emit(asReplay(e, e.ts));
      this.done = true;
      onDone();
      return;
    }
    const t0 = this.events[0].ts;
    const start = Date.now();
    this.events.forEach((e, i) => {
      const at = e.ts - t0;
      this.timers.push(
        setTimeout(() => {
          emit(asReplay(e, start + at));
          if (i === this.events.length - 1) {
            this.done = true;
            onDone();
          }
        }, at)
      );
    });
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }
}

export class Recorder {
  private readonly out: WriteStream;
  written = 0;
  constructor(readonly file: string) {
    this.out = createWriteStream(file, { flags: 'a' });
  }
  write(e: KernelEvent): void {
    this.out.write(`${JSON.stringify(e)}\n`);
    this.written++;
  }
  close(): Promise<void> {
    return new Promise((r) => this.out.end(r));
  }
}
