/**
 * contract/sse.ts, the repository's one event-stream parser: the exporter's frames (bpf-exporter/src/core/sse.ts:
 * `retry` + `event: hello`, `id` + `event: kernel`, the id-only keep-alive after a comment) and an OpenAI-compatible
 * stream, split anywhere across chunks, with every line end the specification allows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser, ssePayloads, type SseMessage } from '../../../contract/sse';

/** Feeds `text` to a new parser in chunks of `size` characters. */
function parseInChunks(text: string, size: number): SseMessage[] {
  const p = new SseParser();
  const out: SseMessage[] = [];
  for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size), out);
  return p.flush(out);
}

const exporterFrames =
  `retry: 2000\nevent: hello\ndata: {"node":"node-a","lastSeq":7}\n\n` +
  `id: 7\nevent: kernel\ndata: {"ts":1}\n\n` +
  `: keep-alive\nid: 9\n\n`;

describe('event-stream parser (contract/sse.ts)', () => {
  it("reads the exporter's frames, the id-only keep-alive included, however the chunks fall", () => {
    const want: SseMessage[] = [
      { id: undefined, event: 'hello', data: '{"node":"node-a","lastSeq":7}' },
      { id: '7', event: 'kernel', data: '{"ts":1}' },
      { id: '9', event: undefined, data: undefined },
    ];
    for (const size of [1, 2, 3, 7, 64, exporterFrames.length])
      assert.deepEqual(parseInChunks(exporterFrames, size), want);
  });

  it('takes \\r\\n, \\r and \\n line ends, a \\r\\n split between chunks as one', () => {
    const text = 'data: a\r\ndata: b\r\rdata: c\n\n';
    for (const size of [1, 2, 5, text.length])
      assert.deepEqual(ssePayloads(parseInChunks(text, size)), ['a\nb', 'c'], `chunks of ${size}`);
  });

  it('keeps one optional space after the colon, a field without a colon as empty, and ignores unknown fields', () => {
    const out = parseInChunks('data:x\ndata:  y\ndata\nfoo: bar\n\n', 4);
    assert.deepEqual(ssePayloads(out), ['x\n y\n']);
  });

  it('flushes a message left without its blank line; a line without its end is not one', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('data: done\ndata: part'), []);
    assert.deepEqual(ssePayloads(p.flush()), ['done']);
  });

  it('refuses to hold more than its bound without a complete line', () => {
    const p = new SseParser(1024);
    assert.throws(() => p.push(`data: ${'x'.repeat(2048)}`), /stream message over/);
  });
});
