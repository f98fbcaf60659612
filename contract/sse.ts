/**
 * The one text/event-stream parser of the repository (WHATWG HTML "Parsing an event stream": `\n`, `\r\n` or `\r`
 * line ends, `:` comments, `field: value` with one optional space, `data` lines joined with `\n`), used by the proxy
 * for the bpf-exporter's notable stream and by the chain and the load generator for OpenAI-compatible streams.
 * Hand-written rather than `eventsource-parser` (npm), which follows the specification in not dispatching a message
 * without `data`: the exporter's keep-alive (`: keep-alive` + `id: N`) carries the stream position the proxy resumes
 * from, and must come out. Not exported from ./index (the app does not read event streams).
 */

/** One message: the fields it had (`data` lines joined; a message with only an `id` is kept). */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
}

export class SseParser {
  private buf = '';
  private id: string | undefined;
  private event: string | undefined;
  private data: string[] = [];

  /** `maxBuffered`: characters held without a complete line before it throws (a stream that never ends a line). */
  constructor(private readonly maxBuffered = 4 * 1024 * 1024) {}

  /** Feeds a chunk; appends the messages it completed to `out` (a new array by default) and returns it. */
  push(chunk: string, out: SseMessage[] = []): SseMessage[] {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\n|\r/)) >= 0) {
      // A `\r` at the very end may be the first half of a `\r\n` whose `\n` comes with the next chunk.
      if (this.buf[nl] === '\r' && nl === this.buf.length - 1) break;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
      if (line === '') {
        this.dispatch(out);
        continue;
      }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    if (this.buf.length > this.maxBuffered)
      throw new Error(`stream message over ${Math.round(this.maxBuffered / 1048576)} MiB`);
    return out;
  }

  /** The message left without its closing blank line (a server that ends abruptly), if any. */
  flush(out: SseMessage[] = []): SseMessage[] {
    this.dispatch(out);
    this.buf = '';
    return out;
  }

  private dispatch(out: SseMessage[]): void {
    if (this.id !== undefined || this.event !== undefined || this.data.length)
      out.push({ id: this.id, event: this.event, data: this.data.length ? this.data.join('\n') : undefined });
    this.id = undefined;
    this.event = undefined;
    this.data = [];
  }
}

/** The `data` payloads of messages, in order (what an OpenAI-compatible stream's reader wants). */
export const ssePayloads = (messages: SseMessage[]): string[] =>
  messages.flatMap((m) => (m.data !== undefined ? [m.data] : []));
