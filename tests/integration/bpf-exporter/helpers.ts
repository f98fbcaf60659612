/** Helpers for the bpf-exporter's integration tests: machine checks, child processes, polling the exporter. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { machinePreflight } from '../../../bpf-exporter/src/core/preflight';
import type { KernelEvent } from '../../../contract';

/** Why this machine cannot run real probes, or undefined when it can. */
export function probeSkipReason(): string | undefined {
  const m = machinePreflight(process.env.HOPSCOPE_BPFTRACE || 'bpftrace');
  return m.ok ? undefined : m.reason;
}

export function has(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}

export function sh(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** A child whose stdout lines can be awaited. */
export function child(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}
): ChildProcess & { lines: string[]; waitLine(re: RegExp, ms?: number): Promise<string> } {
  const c = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcess & { lines: string[]; waitLine(re: RegExp, ms?: number): Promise<string> };
  c.lines = [];
  let buf = '';
  let err = '';
  c.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    c.lines.push(...parts);
  });
  c.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  c.waitLine = async (re, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const hit = c.lines.find((l) => re.test(l));
      if (hit) return hit;
      if (c.exitCode !== null && !c.lines.some((l) => re.test(l))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no line matching ${re} from ${cmd} (stdout: ${c.lines.join(' / ')}; stderr: ${err.slice(-500)})`);
  };
  return c;
}

export async function getJson<T = unknown>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

/** Polls /events until `pred` holds for some event (or throws with what was seen). */
export async function waitForEvents(
  base: string,
  query: string,
  pred: (e: KernelEvent) => boolean,
  ms = 15_000,
  count = 1
): Promise<KernelEvent[]> {
  const deadline = Date.now() + ms;
  let last: KernelEvent[] = [];
  while (Date.now() < deadline) {
    const { body } = await getJson<{ events: KernelEvent[] }>(`${base}/events?${query}`);
    last = body.events;
    const hits = last.filter(pred);
    if (hits.length >= count) return hits;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `no matching event for ${query} within ${ms} ms; saw ${last.length}: ${JSON.stringify(last.slice(-5))}`
  );
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  ms = 15_000
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/** A live SSE subscription read with fetch: messages as they arrive, the HTTP status, and a way to wait for one. */
export async function sse(
  url: string,
  headers: Record<string, string> = {}
): Promise<{
  status: number;
  messages: SseMessage[];
  ended: () => boolean;
  close(): void;
  waitFor(pred: (m: SseMessage) => boolean, ms?: number): Promise<SseMessage>;
}> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  const messages: SseMessage[] = [];
  let done = false;
  if (res.status === 200) {
    void (async () => {
      const reader = res.body!.getReader();
      let buf = '';
      try {
        for (;;) {
          const { value, done: d } = await reader.read();
          if (d) break;
          buf += Buffer.from(value).toString();
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const m: SseMessage = { event: 'message', data: '' };
            let hasData = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const [k, ...rest] = line.split(':');
              const v = rest.join(':').replace(/^ /, '');
              if (k === 'id') m.id = v;
              else if (k === 'event') m.event = v;
              else if (k === 'data') {
                m.data += v;
                hasData = true;
              }
            }
            if (hasData) messages.push(m);
          }
        }
      } catch {
        /* aborted */
      }
      done = true;
    })();
  } else {
    await res.text();
    done = true;
  }
  return {
    status: res.status,
    messages,
    ended: () => done,
    close: () => ac.abort(),
    async waitFor(pred, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const hit = messages.find(pred);
        if (hit) return hit;
        if (done) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no SSE message matching within ${ms} ms; got ${messages.map((m) => m.event).join(',')}`);
    },
  };
}
