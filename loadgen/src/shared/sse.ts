/**
 * An OpenAI-compatible stream as its readers (the driver, the chain's relays) want it: the `data` payloads, blank-line
 * separated messages completed by each chunk. The parsing is the repository's one parser (contract/sse.ts).
 */
import { SseParser as EventStreamParser, ssePayloads } from '../../../contract/sse';

export class SseParser {
  private parser = new EventStreamParser();

  /** Feeds a chunk; returns the `data` payloads of every event completed by it. */
  push(chunk: string): string[] {
    return ssePayloads(this.parser.push(chunk));
  }

  /** Any event left without its closing blank line (a server that ends abruptly). */
  flush(): string[] {
    return ssePayloads(this.parser.flush());
  }
}
