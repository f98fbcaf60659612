/**
 * The kernel-evidence stream reader (backend-proxy/src/evidence/stream-reader.ts) against a notable stream served
 * in-process, frame for frame as the bpf-exporter writes it (bpf-exporter/src/core/sse.ts: `retry` + `event: hello`,
 * `event: gap`, `id: N` + `event: kernel`, `: keep-alive` + `id: N`), into a sink the test holds: where it resumes,
 * what it offers, the gaps it records and the position it saves (in an in-memory PGlite), and back-pressure.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Agent } from 'undici';
import type { KernelEvent } from '../../../contract';
import { openDatabase, type Database } from '../../../backend-proxy/src/db/database';
import * as streams from '../../../backend-proxy/src/db/kernel-stream-repo';
import { StreamReader, type EvidenceSink } from '../../../backend-proxy/src/evidence/stream-reader';

const log = pino({ level: 'silent' });
const T = Date.UTC(2026, 0, 5, 10, 0, 0);
const ev = (i: number): KernelEvent =>
  ({
    ts: T + i * 1000,
    type: 'tcp_retransmit',
    pid: 4000 + i,
    comm: 'python',
    mode: 'live',
    node: 'node-a',
    detail: { saddr: '10.0.0.1:41000', daddr: '10.0.0.2:8000' },
  }) as KernelEvent;
const hello = (lastSeq: number, after: number | null): string =>
  `retry: 2000\nevent: hello\ndata: ${JSON.stringify({ node: 'node-a', firstSeq: 1, lastSeq, after })}\n\n`;
const kernel = (seq: number, e: KernelEvent): string => `id: ${seq}\nevent: kernel\ndata: ${JSON.stringify(e)}\n\n`;
const keepAlive = (seq: number): string => `: keep-alive\nid: ${seq}\n\n`;

/** What each connection gets: its frames (written in the chunks given), then the stream stays open. */
type Script = (req: IncomingMessage) => string[];

class Sink implements EvidenceSink {
  offered = 0;
  batches: KernelEvent[][] = [];
  accept = true;
  lose = 0;
  private waiting: Array<() => void> = [];
  offer(events: KernelEvent[]): { ok: boolean; lost: number } {
    this.batches.push(events);
    this.offered += events.length;
    const lost = this.lose;
    this.lose = 0;
    return { ok: this.accept, lost };
  }
  drained(): Promise<void> {
    return new Promise((r) => this.waiting.push(r));
  }
  drain(): void {
    this.accept = true;
    for (const w of this.waiting.splice(0)) w();
  }
  get events(): KernelEvent[] {
    return this.batches.flat();
  }
}

const until = async (what: string, ok: () => boolean, ms = 5000): Promise<void> => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('kernel-evidence stream reader', () => {
  let url = '';
  let script: Script = () => [];
  const requests: IncomingMessage[] = [];
  const open = new Set<ServerResponse>();
  const agent = new Agent();
  const server = createServer((req, res) => {
    requests.push(req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    open.add(res);
    res.on('close', () => open.delete(res));
    const chunks = script(req);
    let i = 0;
    const next = (): void => {
      if (i < chunks.length) res.write(chunks[i++], () => setTimeout(next, 2));
    };
    next();
  });
  let db: Database;
  const readers: StreamReader[] = [];
  const reader = (sink: Sink, saved?: streams.StreamPosition): StreamReader => {
    const r = new StreamReader(
      url,
      { sink, request: (o) => agent.request(o), token: 'tok-1', timeoutMs: 2000, idleMs: 5000, log },
      saved
    );
    readers.push(r);
    r.start();
    return r;
  };

  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    db = await openDatabase({ log });
  });
  after(async () => {
    await Promise.all(readers.map((r) => r.stop()));
    for (const res of open) res.destroy();
    await new Promise((r) => server.close(r));
    await agent.close();
    await db.close();
  });

  it('reads a new stream from the ring start, with the token, and offers each event once, in order', async () => {
    requests.length = 0;
    script = () => [hello(3, 0) + kernel(1, ev(1)), kernel(2, ev(2)) + kernel(3, ev(3))];
    const sink = new Sink();
    const r = reader(sink);
    await until('three events offered', () => sink.events.length === 3);
    const q = requests[0];
    assert.equal(q.url, '/events/stream?class=notable&after=0');
    assert.equal(q.headers.authorization, 'Bearer tok-1');
    assert.equal(q.headers['last-event-id'], undefined);
    assert.deepEqual(
      sink.events.map((e) => e.pid),
      [4001, 4002, 4003]
    );
    const s = r.state();
    assert.equal(s.connected, true);
    assert.equal(s.lastSeq, 3);
    assert.equal(s.node, 'node-a');
    assert.equal(s.gaps, 0, 'a first read from the ring start is no gap');
    await r.stop();
  });

  it('resumes after the saved position; a gap at it is recorded from the last saved time to the next event, and the position saved once written', async () => {
    requests.length = 0;
    const exporter = url;
    script = () => [
      hello(12, 5),
      `event: gap\ndata: ${JSON.stringify({ after: 5, resumedAt: 9, reason: 'evicted', missed: 3 })}\n\n`,
      kernel(9, ev(9)) + kernel(10, ev(10)),
      keepAlive(12),
    ];
    const sink = new Sink();
    const saved = { exporter, node: 'node-a', lastSeq: 5, lastSeenMs: T + 5000, firstMs: T };
    const r = reader(sink, saved);
    await until('the keep-alive read', () => r.state().lastSeq === 12);
    assert.equal(requests[0].url, '/events/stream?class=notable');
    assert.equal(requests[0].headers['last-event-id'], '5');
    assert.deepEqual(
      sink.events.map((e) => e.pid),
      [4009, 4010]
    );
    assert.equal(r.state().gaps, 1);
    // Everything offered is written: the checkpoint saves the gap and the keep-alive's position.
    await r.checkpoint(db, sink.offered);
    const gaps = await streams.gapsOverlapping(db, T, T + 60_000);
    assert.deepEqual(
      gaps.map((g) => [g.reason, g.fromMs, g.toMs, g.missed]),
      [['evicted', T + 5000, T + 9000, 3]]
    );
    assert.equal((await streams.streamPositions(db)).get(exporter)?.lastSeq, 12);
    await r.stop();
  });

  it('saves no position past events still queued (offered, not yet written)', async () => {
    script = () => [hello(2, 0), kernel(1, ev(1)), kernel(2, ev(2))];
    const sink = new Sink();
    const base = { exporter: `${url}/queued`, node: null, lastSeq: 0, lastSeenMs: T, firstMs: T };
    const r = reader(sink, base);
    await until('two events offered', () => sink.events.length === 2);
    // Only the first event is written: the position saved is the first event's seq, not the second's.
    await r.checkpoint(db, sink.offered - 1);
    assert.equal(r.state().savedSeq, 1);
    await r.stop();
  });

  it('stops reading while the sink is full and reads on once it drains (back-pressure)', async () => {
    script = () => [hello(3, 0), kernel(1, ev(1)), kernel(2, ev(2)), kernel(3, ev(3))];
    const sink = new Sink();
    sink.accept = false;
    const r = reader(sink);
    await until('the first batch offered', () => sink.batches.length >= 1);
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(sink.events.length, 1, 'nothing more is read until the sink drains');
    sink.drain();
    await until('the rest offered', () => sink.events.length === 3);
    await r.stop();
  });

  it('records what the sink could not queue as a queue_full gap over those events', async () => {
    script = () => [hello(2, 0), kernel(1, ev(1)) + kernel(2, ev(2))];
    const sink = new Sink();
    sink.lose = 2;
    const exporter = `${url}/full`;
    const r = new StreamReader(
      url,
      { sink, request: (o) => agent.request(o), timeoutMs: 2000, idleMs: 5000, log },
      { exporter, node: 'node-a', lastSeq: 0, lastSeenMs: T, firstMs: T }
    );
    readers.push(r);
    r.start();
    await until('both offered', () => sink.events.length === 2);
    assert.equal(r.state().gaps, 1);
    await r.checkpoint(db, sink.offered);
    const full = (await streams.gapsOverlapping(db, T, T + 60_000)).filter((g) => g.reason === 'queue_full');
    assert.deepEqual(
      full.map((g) => [g.fromMs, g.toMs, g.missed]),
      [[T + 1000, T + 2000, 2]]
    );
    await r.stop();
  });
});
