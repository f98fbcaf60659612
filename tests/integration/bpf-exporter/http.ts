/** HTTP helpers for the exporter's tests: JSON reads, polling, SSE subscriptions. Nothing here touches the kernel. */

export async function getJson<T = unknown>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
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
