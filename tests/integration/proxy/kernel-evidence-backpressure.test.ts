/**
 * The evidence keeper against a real PostgreSQL whose kernel_events table is held locked by another session (a slow
 * database): the reader stops reading once the keeper's queue is full, so the stream's sender blocks (the exporter's
 * ring is the buffer) and the proxy's memory stays bounded; when the lock goes, every event is written, none dropped,
 * none twice, and the saved position is the last one. An `event: gap` on the resumed stream and `event: suppressed`
 * are recorded as windows without evidence; the stream carries the exporter token. The exporter here is a stand-in speaking the stream protocol
 * (bpf-exporter/README.md) so the test controls how much it sends.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import pino from 'pino';
import type { KernelEvent } from '../../../contract';
import { openDatabase, type Database } from '../../../backend-proxy/src/db/database';
import { KernelEvidenceService } from '../../../backend-proxy/src/evidence/service';
import { ExporterSource } from '../../../backend-proxy/src/sources/exporters';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';
import { tinyServer } from '../../support/otlp-spans';

const skip = postgresSkipReason();
const N = 12_000;
const HIGH_WATER = 200;
const T0 = Date.now() - 60_000;
const PAD = 'x'.repeat(1500);
/** HOPSCOPE_EXPORTER_TOKEN: the stream carries it (the stand-in refuses without). */
const TOKEN = 'bp-token-0123456789abcdef';

const event = (seq: number): KernelEvent => ({
  ts: T0 + seq,
  type: 'tcp_connect_fail',
  pid: 4242,
  comm: 'rag',
  pod: 'bp-rag-0',
  node: 'bp-node',
  detail: { seq, pad: PAD },
  mode: 'live',
});

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('kernel evidence back-pressure on a slow PostgreSQL', { skip }, () => {
  let server: PostgresServer;
  let url = '';
  let db: Database;
  let locker: pg.Client;
  let exporter: Awaited<ReturnType<typeof tinyServer>>;
  let svc: KernelEvidenceService;
  /** What the stand-in exporter has written, and whether its socket pushed back. */
  let sent = 0;
  let blocked = 0;
  const resumes: Array<string | undefined> = [];

  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase('evidence_bp');
    db = await openDatabase({ databaseUrl: url, log: pino({ level: 'silent' }), connectTimeoutMs: 5000 });
    exporter = await tinyServer((req, res) => {
      if (!req.url!.startsWith('/events/stream')) {
        res.writeHead(404);
        res.end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"unauthorized","message":"token"}}');
        return;
      }
      const last = req.headers['last-event-id'] as string | undefined;
      resumes.push(last);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (last === undefined) {
        // First connection: N events as fast as the socket takes them, a budget report half-way, then the end.
        res.write(
          `retry: 2000\nevent: hello\ndata: ${JSON.stringify({ mode: 'live', node: 'bp-node', firstSeq: 1, lastSeq: N, after: 0 })}\n\n`
        );
        const pump = (): void => {
          while (sent < N) {
            sent++;
            if (sent === N / 2)
              res.write(
                `event: suppressed\ndata: ${JSON.stringify({ suppressed: 120, from: T0 + sent, to: T0 + sent + 1000 })}\n\n`
              );
            if (!res.write(`id: ${sent}\nevent: kernel\ndata: ${JSON.stringify(event(sent))}\n\n`)) {
              blocked++;
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
        return;
      }
      // The resume: the ring lost 42 events after the position, then one more event.
      res.write(
        `event: hello\ndata: ${JSON.stringify({ mode: 'live', node: 'bp-node', firstSeq: N + 43, lastSeq: N + 43, after: Number(last) })}\n\n`
      );
      res.write(
        `event: gap\ndata: ${JSON.stringify({ after: Number(last), resumedAt: N + 43, reason: 'evicted', missed: 42 })}\n\n`
      );
      res.write(`id: ${N + 43}\nevent: kernel\ndata: ${JSON.stringify(event(N + 43))}\n\n`);
      // …and the stream stays open (keep-alives) until the test ends.
      const ka = setInterval(() => res.write(`: keep-alive\nid: ${N + 43}\n\n`), 200);
      res.on('close', () => clearInterval(ka));
    });
    // Another session holds the table: the keeper's inserts wait (the lease table stays writable).
    locker = new pg.Client({ connectionString: url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE kernel_events IN ACCESS EXCLUSIVE MODE');
    svc = new KernelEvidenceService({
      db,
      log: pino({ level: 'silent' }),
      exporters: [new ExporterSource(exporter.url, 2000)],
      retentionMs: 7 * 86_400_000,
      leaseTtlMs: 2000,
      holder: 'bp-test',
      timeoutMs: 2000,
      token: TOKEN,
      keeper: { highWater: HIGH_WATER, batch: 100, flushMs: 50 },
      checkpointMs: 200,
    });
    svc.start();
  });
  after(async () => {
    await svc?.stop().catch(() => {});
    await locker?.end().catch(() => {});
    await exporter?.close();
    await db?.close();
    await server?.close();
  });

  test('the reader stops reading while the database is slow: the sender blocks, the queue stays bounded', async () => {
    await waitFor('the sender to block', async () => (blocked > 0 ? true : undefined));
    const a = sent;
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(sent < N, `the stream is held back (${sent} of ${N} sent)`);
    assert.ok(sent - a < N / 10, `little progress while the table is locked (${a} → ${sent})`);
    const k = svc.keeper.stats();
    assert.ok(k.queued >= HIGH_WATER && k.queued <= 2 * HIGH_WATER, `queue ${k.queued}: full, and bounded`);
    assert.equal(k.dropped, 0, 'nothing dropped: the reader waited instead');
    assert.equal(svc.lease.held(), true);
  });

  test('once the database keeps up, every event is written once and the position saved', async () => {
    await locker.query('COMMIT');
    await waitFor(
      'everything written',
      async () => {
        const n = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM kernel_events')).rows[0].n;
        return n >= N ? true : undefined;
      },
      60_000
    );
    const { n, distinct } = (
      await db.query<{ n: number; distinct: number }>(
        "SELECT count(*)::int AS n, count(DISTINCT (detail->>'seq'))::int AS distinct FROM kernel_events WHERE (detail->>'seq')::int <= $1",
        [N]
      )
    ).rows[0];
    assert.equal(n, N);
    assert.equal(distinct, N);
    assert.equal(svc.keeper.stats().dropped, 0);
    const pos = await waitFor('the position', async () => {
      const r = (await db.query<{ last_seq: number }>('SELECT last_seq FROM kernel_stream_positions')).rows[0];
      return r && r.last_seq >= N ? r : undefined;
    });
    assert.ok(pos.last_seq >= N);
  });

  test("the resumed stream's gap and the budget report are recorded as windows without evidence", async () => {
    await waitFor('the resume', async () => (resumes.length >= 2 ? true : undefined));
    assert.deepEqual(resumes.slice(0, 2), [undefined, String(N)], 'resumed with Last-Event-ID: the last event read');
    await waitFor('the event after the gap', async () =>
      (await db.query('SELECT 1 FROM kernel_events WHERE ts = $1', [T0 + N + 43])).rowCount ? true : undefined
    );
    await svc.stop(); // writes what is pending (the merged budget report)
    const gaps = (
      await db.query<{ reason: string; from_ms: number; to_ms: number; missed: number | null; node: string }>(
        'SELECT reason, from_ms, to_ms, missed, node FROM kernel_evidence_gaps ORDER BY from_ms'
      )
    ).rows;
    const evicted = gaps.find((g) => g.reason === 'evicted');
    assert.ok(evicted, JSON.stringify(gaps));
    assert.equal(evicted.missed, 42);
    assert.equal(evicted.node, 'bp-node');
    assert.equal(evicted.to_ms, T0 + N + 43, 'ends at the first event after the gap');
    const sup = gaps.find((g) => g.reason === 'suppressed');
    assert.ok(sup, JSON.stringify(gaps));
    assert.equal(sup.missed, 120);
    assert.equal(sup.from_ms, T0 + N / 2);
  });
});
