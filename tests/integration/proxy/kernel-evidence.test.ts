/**
 * Kernel evidence kept past the exporter's ring, with the real bpf-exporter on the real kernel (root): failed
 * connects to a closed port (the exporter's notable class) from a registered process reach the proxy's database from
 * the exporter's stream; a proxy restart resumes where it was (no duplicates, no re-read); an exporter restart is
 * recorded as a gap and the stream goes on; once the exporter's (small) ring has been overwritten, the trace's root
 * cause still shows the failed connects, from the database, and says so. Retention: a window older than it says that
 * its evidence is past the retention (no exporter needed for that one).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { RcaAnswer, type KernelEvent } from '../../../contract';
import { openDatabase } from '../../../backend-proxy/src/db/database';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startProxyProcess } from '../reliability/support/proxy-process';
import { otlp, type SpanSpec } from '../../support/otlp-spans';
import { has, probeSkipReason } from '../bpf-exporter/helpers';
import { freePort } from '../../support/real-servers';

const skip = probeSkipReason() ?? (has('python3') ? undefined : "python3 missing (the test's connecting process)");
const POD = 'kx-rag-0';
const RING = 300;

/** A python process that connects when told: `fail N` to a closed port, `open N` to its own listener. */
function connector(closedPort: number): ChildProcess & { run(cmd: string): Promise<void> } {
  const script = `
import socket, sys
closed = int(sys.argv[1])
print('ready', flush=True)
for line in sys.stdin:
    cmd, n = line.split()
    for _ in range(int(n)):
        if cmd == 'fail':
            s = socket.socket()
            try:
                s.connect(('127.0.0.1', closed))
            except OSError:
                pass
            s.close()
        else:
            srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(8)
            c = socket.create_connection(('127.0.0.1', srv.getsockname()[1])); a, _ = srv.accept(); a.close(); c.close(); srv.close()
    print('ok', flush=True)
`;
  const c = spawn('python3', ['-c', script, String(closedPort)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  }) as ChildProcess & { run(cmd: string): Promise<void> };
  let lines: string[] = [];
  const waiters: Array<() => void> = [];
  c.stdout!.on('data', (d: Buffer) => {
    lines = lines.concat(d.toString().split('\n').filter(Boolean));
    while (lines.length && waiters.length) {
      lines.shift();
      waiters.shift()!();
    }
  });
  const next = (): Promise<void> =>
    new Promise((resolve) => {
      if (lines.length) {
        lines.shift();
        resolve();
      } else waiters.push(resolve);
    });
  const ready = next();
  c.run = async (cmd) => {
    await ready;
    const done = next();
    c.stdin!.write(`${cmd}\n`);
    await done;
  };
  return c;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('kernel evidence kept from the real exporter', { skip }, () => {
  const log = pino({ level: 'warn' });
  let dir = '';
  let port = 0;
  let exporter: Exporter;
  let proxy: RunningProxy;
  let failer: ReturnType<typeof connector>;
  let flooder: ReturnType<typeof connector>;

  const startExp = async (): Promise<Exporter> => {
    const e = await startExporter(
      loadConfig({
        HOPSCOPE_BPF_PORT: String(port),
        HOPSCOPE_BPF_NODE: 'kx-node',
        HOPSCOPE_BPF_PROBES: 'tcp_connect',
        HOPSCOPE_BPF_RING_SIZE: String(RING),
        HOPSCOPE_BPF_EVENT_BUDGET: '100000',
        HOPSCOPE_BPF_SCAN_MS: '0',
      }),
      log
    );
    await e.pipeline.settled(60_000);
    const r = await fetch(`${e.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pid: failer.pid, pod: POD, namespace: 'kx', service: 'rag' }),
    });
    assert.equal(r.status, 201);
    return e;
  };
  const startPx = (): Promise<RunningProxy> =>
    startProxy({
      port: 0,
      prometheusUrl: undefined,
      chainControlUrl: undefined,
      alertIntervalMs: 0,
      exporterUrls: [exporter.url],
      dataDir: join(dir, 'data'),
      leaseTtlMs: 2000,
    });
  /** Failed connects of the pod kept in the proxy's database. */
  const kept = async (): Promise<Array<{ ts: number; n: number }>> =>
    (
      await proxy.db.query<{ ts: number; n: number }>(
        `SELECT ts, count(*) OVER (PARTITION BY dedupe_key)::int AS n FROM kernel_events WHERE pod = $1 AND type = 'tcp_connect_fail' ORDER BY ts`,
        [POD]
      )
    ).rows;
  const inRing = async (): Promise<KernelEvent[]> =>
    (
      (await (await fetch(`${exporter.url}/events?pid=${failer.pid}&type=tcp_connect_fail&limit=10000`)).json()) as {
        events: KernelEvent[];
      }
    ).events;
  const keptCount = async (n: number): Promise<void> => {
    await waitFor(`${n} failed connects kept`, async () => ((await kept()).length >= n ? true : undefined));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'proxy-kernel-evidence-'));
    port = await freePort();
    failer = connector(await freePort());
    flooder = connector(await freePort());
    exporter = await startExp();
    proxy = await startPx();
  });
  after(async () => {
    failer?.kill();
    flooder?.kill();
    await proxy?.close();
    await exporter?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("failed connects reach the database from the exporter's notable stream", async () => {
    await failer.run('fail 5');
    await keptCount(5);
    const rows = await kept();
    assert.equal(rows.length, 5);
    const ring = await inRing();
    assert.equal(ring.length, 5, 'the exporter saw the same five');
    assert.deepEqual(
      rows.map((r) => r.ts),
      ring.map((e) => e.ts)
    );
  });

  test('a proxy restart resumes where it was: nothing read twice, nothing missed', async () => {
    await proxy.close();
    await failer.run('fail 5'); // while no proxy reads
    proxy = await startPx();
    await keptCount(10);
    await new Promise((r) => setTimeout(r, 1500));
    const rows = await kept();
    assert.equal(rows.length, 10);
    assert.ok(
      rows.every((r) => r.n === 1),
      'no duplicates'
    );
    const h = (await (await fetch(`${proxy.url}/api/health`)).json()) as {
      state: {
        kernelEvidence: {
          self: boolean;
          keeper: { duplicates: number; written: number };
          exporters: Array<{ connected: boolean; savedSeq: number | null }>;
        };
      };
    };
    const k = h.state.kernelEvidence;
    assert.equal(k.self, true);
    assert.equal(k.keeper.duplicates, 0, 'resumed after the saved position: the first five were not read again');
    assert.ok(k.exporters[0].connected && k.exporters[0].savedSeq !== null);
    const gaps = (await proxy.db.query('SELECT * FROM kernel_evidence_gaps')).rows;
    assert.deepEqual(gaps, [], 'the ring still held everything: no gap');
  });

  test('an exporter restart: the proxy resumes on the new process and records the gap', async () => {
    const before = Date.now();
    await exporter.stop();
    exporter = await startExp();
    await failer.run('fail 4');
    await keptCount(14);
    const gap = await waitFor(
      'the gap',
      async () =>
        (
          await proxy.db.query<{ reason: string; from_ms: number; to_ms: number; missed: number | null }>(
            'SELECT reason, from_ms, to_ms, missed FROM kernel_evidence_gaps'
          )
        ).rows[0]
    );
    assert.equal(gap.reason, 'exporter_restarted');
    assert.equal(gap.missed, null, 'not knowable after a restart');
    assert.ok(
      gap.from_ms <= before && gap.to_ms >= before,
      `the gap ${gap.from_ms}..${gap.to_ms} covers the restart at ${before}`
    );
  });

  test('SIGKILL of the proxy process while events stream in: after a restart every event is kept, once', async (t) => {
    const d2 = join(dir, 'data-kill9');
    const env = { HOPSCOPE_DATA_DIR: d2, HOPSCOPE_EXPORTER_URLS: exporter.url, HOPSCOPE_PROMETHEUS_URL: 'none' };
    const tStart = Date.now();
    let p = await startProxyProcess(env);
    // Stopped however the test ends: a child left running keeps the file (and the stage) waiting.
    t.after(() => p.kill9().catch(() => undefined));
    await new Promise((r) => setTimeout(r, 1500)); // subscribed
    const burst = failer.run('fail 40');
    await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 150)));
    await p.kill9();
    await burst;
    await failer.run('fail 10'); // while it is down
    p = await startProxyProcess(env);
    const ring = (await inRing()).filter((e) => e.ts >= tStart);
    assert.equal(ring.length, 50);
    await waitFor('the restarted proxy to catch up', async () => {
      const h = (await (await fetch(`${p.url}/api/health`)).json()) as {
        state: {
          kernelEvidence: {
            keeper: { written: number; queued: number };
            exporters: Array<{ savedSeq: number | null }>;
          };
        };
      };
      const k = h.state.kernelEvidence;
      const e = k.exporters[0];
      return e && k.keeper.queued === 0 && e.savedSeq !== null && e.savedSeq >= ring.at(-1)!.seq! ? true : undefined;
    });
    await p.stop();
    const db = await openDatabase({ dataDir: d2, log: pino({ level: 'silent' }) });
    try {
      const rows = (
        await db.query<{ ts: number }>(
          `SELECT ts FROM kernel_events WHERE pod = $1 AND type = 'tcp_connect_fail' AND ts >= $2 ORDER BY ts`,
          [POD, tStart]
        )
      ).rows;
      assert.deepEqual(
        rows.map((r) => r.ts),
        ring.map((e) => e.ts),
        'every event the exporter saw, each once'
      );
    } finally {
      await db.close();
    }
  });

  test('after the ring is overwritten, the trace root cause still shows the failed connects, from the database, and says so', async () => {
    await failer.run('fail 3');
    const at = await waitFor('the three in the ring', async () => {
      const r = await inRing();
      return r.length >= 7 ? r.slice(-3) : undefined;
    });
    await keptCount(17);
    const tF = at[0].ts;
    const traceId = randomBytes(16).toString('hex');
    const spans: SpanSpec[] = [
      {
        traceId,
        spanId: '1'.repeat(16),
        name: 'POST /v1/chat',
        service: 'gateway',
        pod: 'kx-gw-0',
        startMs: tF - 200,
        durMs: 1400,
        kind: 2,
      },
      {
        traceId,
        spanId: '2'.repeat(16),
        parentSpanId: '1'.repeat(16),
        name: 'rag.retrieve',
        service: 'gateway',
        pod: 'kx-gw-0',
        startMs: tF - 150,
        durMs: 1300,
        kind: 3,
      },
      {
        traceId,
        spanId: '3'.repeat(16),
        parentSpanId: '2'.repeat(16),
        name: 'rag.retrieve',
        service: 'rag',
        pod: POD,
        startMs: tF - 140,
        durMs: 1280,
        kind: 2,
        status: 2,
        statusMessage: 'connect refused',
      },
    ];
    assert.equal(
      (
        await fetch(`${proxy.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(otlp(spans)),
        })
      ).status,
      200
    );
    const rca = async (): Promise<RcaAnswer> =>
      RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${traceId}/rca`)).json());
    const hasFailedConnects = (a: RcaAnswer): boolean =>
      a.candidates.some((c) => c.pod === POD && c.evidence.some((e) => e.kind === 'kernel:tcp_connect_fail'));
    assert.ok(hasFailedConnects(await rca()), 'with the ring');
    // Overwrite the ring: more connects than it holds, from another (unregistered) process.
    await flooder.run(`open ${RING * 2}`);
    await waitFor('the ring overwritten', async () => ((await inRing()).some((e) => e.ts === tF) ? undefined : true));
    const a = await rca();
    assert.ok(
      hasFailedConnects(a),
      `from the database: ${JSON.stringify(a.candidates.map((c) => [c.pod, c.evidence.map((e) => e.kind)]))}; missing: ${a.missing.join(' | ')}`
    );
    assert.equal(a.kernelEvidence?.source, 'rings+kept');
    assert.ok(a.kernelEvidence!.ringsFromMs! > tF, 'the ring starts after the window');
    assert.ok(
      a.missing.some((m) => /no longer reach back to .*notable event\(s\) kept in the database were used/.test(m)),
      a.missing.join(' | ')
    );
  });
});

describe('kernel evidence past its retention', () => {
  test('a window older than HOPSCOPE_KERNEL_EVIDENCE_RETENTION says its evidence is past the retention', async () => {
    const proxy = await startProxy({
      port: 0,
      prometheusUrl: undefined,
      chainControlUrl: undefined,
      alertIntervalMs: 0,
      exporterUrls: [],
      kernelEvidenceRetentionMs: 60_000,
      storeMaxAgeMs: 4 * 3600_000,
    });
    try {
      const t0 = Date.now() - 2 * 3600_000;
      const traceId = randomBytes(16).toString('hex');
      const spans: SpanSpec[] = [
        {
          traceId,
          spanId: '1'.repeat(16),
          name: 'POST /v1/chat',
          service: 'gateway',
          pod: 'gw-0',
          startMs: t0,
          durMs: 900,
          kind: 2,
        },
        {
          traceId,
          spanId: '3'.repeat(16),
          parentSpanId: '1'.repeat(16),
          name: 'rag.retrieve',
          service: 'rag',
          pod: 'rag-0',
          startMs: t0 + 10,
          durMs: 800,
          kind: 2,
        },
      ];
      assert.equal(
        (
          await fetch(`${proxy.url}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(otlp(spans)),
          })
        ).status,
        200
      );
      const a = await waitFor(
        'the retention cut',
        async () => {
          const x = RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${traceId}/rca`)).json());
          return x.kernelEvidence?.retainedFromMs !== undefined ? x : undefined;
        },
        10_000
      );
      assert.ok(
        a.kernelEvidence!.retainedFromMs! > t0 && a.kernelEvidence!.retainedFromMs! <= Date.now() - 60_000 + 1000
      );
      assert.ok(
        a.missing.some((m) =>
          /^kernel evidence before \S+ is past the retention of 1m \(HOPSCOPE_KERNEL_EVIDENCE_RETENTION\)$/.test(m)
        ),
        a.missing.join(' | ')
      );
      assert.equal(a.kernelEvidence!.source, 'kept');
    } finally {
      await proxy.close();
    }
  });
});
