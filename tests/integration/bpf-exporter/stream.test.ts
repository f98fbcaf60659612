/**
 * The resumable event stream for the proxy's evidence store (runs anywhere: replay mode, no eBPF): every event has a
 * sequence number, `GET /events/stream` sends it as the SSE `id:`, and a consumer that reconnects with Last-Event-ID
 * (or `?after=`) gets exactly what followed, no gap and no duplicate, while the ring still holds it; when it does not,
 * an `event: gap` says so and how many were missed. `class=notable` keeps only notable events. A consumer that stops
 * reading is closed with `event: dropped` and a reason once it falls behind what the ring holds, instead of being
 * buffered without bound. `/events?after=` pages forward the same way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { KERNEL_EVENT_TYPES, KernelEventList, type KernelEvent, type KernelEventType } from '../../../contract';
import { getJson, sse, waitFor } from './http';

const log = pino({ level: 'silent' });
const T0 = 1_700_000_000_000;
const TYPES: KernelEventType[] = ['tcp_connect', 'tcp_retransmit', 'tls_handshake', 'tcp_connect_fail'];

/** A recording of `n` events `gapMs` apart; slow handshakes and connects carry notable: true as the probes set it. */
function recording(n: number, gapMs: number, pad = 0): { text: string; events: KernelEvent[] } {
  const events: KernelEvent[] = [];
  for (let i = 0; i < n; i++) {
    const type = TYPES[i % TYPES.length];
    const slow = (type === 'tls_handshake' || type === 'tcp_connect') && i % 3 === 0;
    const e: KernelEvent = {
      ts: T0 + i * gapMs,
      type,
      pid: 100 + (i % 5),
      comm: 'rag',
      pod: `rag-${i % 5}`,
      namespace: 'bx',
      node: 'bx-node',
      detail: { i, ...(pad ? { pad: 'x'.repeat(pad) } : {}) },
      mode: 'live',
      ...(slow
        ? { notable: true, durationMs: 900 }
        : KERNEL_EVENT_TYPES[type].notable === 'always'
          ? { notable: true }
          : {}),
    };
    events.push(e);
  }
  return { text: `${events.map((e) => JSON.stringify(e)).join('\n')}\n`, events };
}

/** The body of a raw HTTP/1.1 chunked response. */
function dechunk(raw: Buffer): string {
  let i = raw.indexOf('\r\n\r\n') + 4;
  const out: Buffer[] = [];
  while (i < raw.length) {
    const eol = raw.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(i, eol).toString(), 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out).toString();
}

describe('bpf-exporter event stream: resumable, filterable, bounded', () => {
  let dir = '';
  const exporters: Exporter[] = [];
  const start = async (env: Record<string, string>): Promise<Exporter> => {
    const e = await startExporter(loadConfig({ HOPSCOPE_BPF_PORT: '0', HOPSCOPE_BPF_NODE: 'bx-node', ...env }), log);
    exporters.push(e);
    return e;
  };
  const live = recording(40, 60);
  const many = recording(50, 1);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-stream-'));
    writeFileSync(join(dir, 'live.jsonl'), live.text);
    writeFileSync(join(dir, 'many.jsonl'), many.text);
    writeFileSync(join(dir, 'big.jsonl'), recording(6000, 0.4, 2000).text);
  });
  after(async () => {
    await Promise.all(exporters.map((e) => e.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('a consumer that reconnects with Last-Event-ID gets exactly what followed: no gap, no duplicate', async () => {
    const e = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'live.jsonl'), HOPSCOPE_BPF_REPLAY_TIMING: 'original' });
    // From the very first event of this exporter (the replay began before this request).
    const { body: h } = await getJson<{ seq: { start: number } }>(`${e.url}/health`);
    const first = await sse(`${e.url}/events/stream?after=${h.seq.start - 1}`);
    assert.equal(first.status, 200);
    const hello = JSON.parse((await first.waitFor((m) => m.event === 'hello')).data);
    assert.equal(hello.mode, 'replay');
    assert.equal(typeof hello.lastSeq, 'number');
    await first.waitFor(() => first.messages.filter((m) => m.event === 'kernel').length >= 8, 10_000);
    first.close();
    const got = first.messages.filter((m) => m.event === 'kernel');
    const lastId = got[got.length - 1].id!;
    // The rest of the replay goes on while the consumer is away.
    await new Promise((r) => setTimeout(r, 400));
    const second = await sse(`${e.url}/events/stream`, { 'last-event-id': lastId });
    await second.waitFor(
      () => got.length + second.messages.filter((m) => m.event === 'kernel').length >= live.events.length,
      15_000
    );
    second.close();
    assert.equal(
      second.messages.some((m) => m.event === 'gap'),
      false,
      'the ring holds everything: no gap'
    );
    const all = [...got, ...second.messages.filter((m) => m.event === 'kernel')];
    const seqs = all.map((m) => Number(m.id));
    for (let i = 1; i < seqs.length; i++)
      assert.equal(seqs[i], seqs[i - 1] + 1, `consecutive at ${i}: ${seqs[i - 1]} → ${seqs[i]}`);
    const events = all.map((m) => JSON.parse(m.data) as KernelEvent);
    assert.deepEqual(
      events.map((x) => x.detail.i),
      live.events.map((x) => x.detail.i),
      'every recorded event once, in order'
    );
    assert.deepEqual(
      events.map((x) => x.seq),
      seqs,
      'the event carries its seq too'
    );
    assert.ok(KernelEventList.safeParse({ events }).success);
    // ?after= is the same position for a consumer that is not an EventSource.
    const third = await sse(`${e.url}/events/stream?after=${seqs[29]}`);
    await third.waitFor(() => third.messages.filter((m) => m.event === 'kernel').length >= 10);
    third.close();
    assert.deepEqual(
      third.messages.filter((m) => m.event === 'kernel').map((m) => Number(m.id)),
      seqs.slice(30)
    );
  });

  test('class=notable: only the notable events, resumed from the start of the ring with a gap marker for what came before', async () => {
    const e = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'many.jsonl'), HOPSCOPE_BPF_REPLAY_TIMING: 'fast' });
    const s = await sse(`${e.url}/events/stream?class=notable&after=0`);
    const want = many.events.filter((x) => x.notable).map((x) => x.detail.i);
    await s.waitFor(() => s.messages.filter((m) => m.event === 'kernel').length >= want.length);
    s.close();
    const gap = JSON.parse(s.messages.find((m) => m.event === 'gap')!.data);
    assert.equal(gap.reason, 'exporter_restarted', 'position 0 is before this exporter started');
    assert.equal(gap.missed, null, 'how many came before is not knowable');
    const events = s.messages.filter((m) => m.event === 'kernel').map((m) => JSON.parse(m.data) as KernelEvent);
    assert.deepEqual(
      events.map((x) => x.detail.i),
      want
    );
    assert.ok(events.every((x) => x.notable === true));
    assert.ok(want.length > 0 && want.length < many.events.length, 'the filter has something to leave out');
  });

  test('a position the ring no longer holds: an exact gap marker, then everything it does hold', async () => {
    const e = await start({
      HOPSCOPE_BPF_REPLAY: join(dir, 'many.jsonl'),
      HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
      HOPSCOPE_BPF_RING_SIZE: '10',
    });
    const { body: health } = await getJson<{ seq: { first: number; last: number; start: number } }>(`${e.url}/health`);
    assert.equal(health.seq.last - health.seq.first + 1, 10);
    assert.equal(health.seq.first - health.seq.start, 40, '40 of 50 evicted');
    const position = health.seq.start + 4; // this consumer had the first five
    const s = await sse(`${e.url}/events/stream`, { 'last-event-id': String(position) });
    await s.waitFor(() => s.messages.filter((m) => m.event === 'kernel').length >= 10);
    s.close();
    const gap = JSON.parse(s.messages.find((m) => m.event === 'gap')!.data);
    assert.deepEqual(gap, { after: position, resumedAt: health.seq.first, reason: 'evicted', missed: 35 });
    const ids = s.messages.filter((m) => m.event === 'kernel').map((m) => Number(m.id));
    assert.equal(ids[0], health.seq.first);
    assert.equal(ids.length, 10);
    // The same through the polling API, paged.
    const { body: p1 } = await getJson<{
      events: KernelEvent[];
      truncated: boolean;
      resumeAfter: number;
      gap: { missed: number };
    }>(`${e.url}/events?after=${position}&limit=4`);
    assert.deepEqual([p1.events.map((x) => x.seq), p1.truncated, p1.gap.missed], [ids.slice(0, 4), true, 35]);
    const { body: p2 } = await getJson<{
      events: KernelEvent[];
      truncated: boolean;
      resumeAfter: number;
      gap?: unknown;
    }>(`${e.url}/events?after=${p1.resumeAfter}&limit=100`);
    assert.deepEqual([p2.events.map((x) => x.seq), p2.truncated, p2.gap], [ids.slice(4), false, undefined]);
    const bad = await fetch(`${e.url}/events/stream`, { headers: { 'last-event-id': 'yesterday' } });
    assert.equal(bad.status, 400);
  });

  test('a consumer that stops reading is closed with a reason once it falls behind the ring, not buffered without bound', async () => {
    const e = await start({
      HOPSCOPE_BPF_REPLAY: join(dir, 'big.jsonl'),
      HOPSCOPE_BPF_REPLAY_TIMING: 'original',
      HOPSCOPE_BPF_RING_SIZE: '500',
    });
    // A raw client that sends its request and then does not read (its socket buffers fill, then the server's).
    const sock = connect(e.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write('GET /events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    sock.pause();
    const health = await waitFor(
      'the stalled client dropped',
      async () => {
        const { body } = await getJson<{ sse: { dropped: number; clients: number }; replay: { done: boolean } }>(
          `${e.url}/health`
        );
        return body.sse.dropped >= 1 ? body : undefined;
      },
      20_000
    );
    assert.equal(health.sse.clients, 0);
    // What the client then reads: the events it was sent, consecutive, and a last word saying why it was closed.
    const chunks: Buffer[] = [];
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.resume();
    await new Promise<void>((r) => sock.once('close', () => r()));
    const text = dechunk(Buffer.concat(chunks));
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1] + 1);
    const last = /event: dropped\ndata: (.*)\n\n$/.exec(text);
    assert.ok(last, `ends with event: dropped (tail: ${text.slice(-300)})`);
    const why = JSON.parse(last[1]);
    assert.equal(why.reason, 'slow_consumer');
    assert.equal(why.lastSeq, ids[ids.length - 1], 'says where to resume from');
    assert.ok(why.missed > 0);
    assert.ok(
      text.length < 12 * 1024 * 1024,
      `bounded: ${text.length} bytes reached the client of ${6000 * 2100} produced`
    );
  });
});
