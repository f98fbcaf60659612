/** Incremental Server-Sent Events parser (the subset OpenAI-compatible servers use: `data:` lines, blank-line separated). */
export class SseParser {
  private buf = '';
  private data: string[] = [];

  /** Feeds a chunk; returns the `data` payloads of every event completed by it. */
  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      let line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.data.length) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
      } // comments (":") and other fields are ignored
    }
    return out;
  }

  /** Any event left without its closing blank line (a server that ends abruptly). */
  flush(): string[] {
    const out = this.data.length ? [this.data.join('\n')] : [];
    this.data = [];
    return out;
  }
}
