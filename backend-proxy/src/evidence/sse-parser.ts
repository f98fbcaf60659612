/** A minimal text/event-stream parser: complete messages out of arbitrary chunks. */
export class SseParser {
  private buf = '';
  private id: string | undefined;
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: string, out: Array<{ id?: string; event?: string; data?: string }>): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\n|\r/)) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
      if (line === '') {
        if (this.id !== undefined || this.event !== undefined || this.data.length)
          out.push({ id: this.id, event: this.event, data: this.data.length ? this.data.join('\n') : undefined });
        this.id = undefined;
        this.event = undefined;
        this.data = [];
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
    if (this.buf.length > 4 * 1024 * 1024) throw new Error('stream message over 4 MiB');
  }
}
