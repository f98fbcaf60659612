/**
 * Root cause on the real simulated chain (loadgen, time scale 0.05): healthy requests make the baseline; then for each
 * fault kind at each hop it applies to, the fault is injected through the control API, a few requests are sent on a
 * route that crosses the hop, and each request's trace — exported as OTLP JSON and read back through `otlpToSpans` —
 * is ranked by `rankTrace`. Prints fault × hop → rank and AC@1/AC@3 per mode:
 *  - `no-kernel`: the chain in-process, no bpf-exporter: network faults must show through the client→server gap alone.
 *  - `kernel`: the chain in split mode (one process per pod, pids registered) with a live bpf-exporter running real
 *    bpftrace probes; the exporter's events of the request's window (`/events?from&to`, as the proxy asks) are passed
 *    as `kernelEvents`, as in production.
 * `RCA_CHAIN_KERNEL=0` no-kernel only, `=1` kernel only, `=both` both; unset: kernel when root and the probes attach
 * (else no-kernel, saying why); a smoke round (HOPSCOPE_BENCH_SMOKE=1) no-kernel.
 * Spans carry `hopscope.fault.*` attributes (ground truth for humans); the engine never reads them.
 * `tcp_retransmit` drops a share of packets, so some requests lose none and have nothing to find: a request counts
 * as hit when its client saw it ≥ 150 ms slower than the median healthy request of its route, or failed (a lost
 * segment costs at least one 200 ms retransmission timeout). Requests are sent until RUNS are hit (at most 8 × RUNS);
 * the misses-by-luck are printed as "hit/sent", never ranked.
 */
import { createServer } from 'node:http';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { report, smoke } from './lib/ab';
import { startChain } from '../loadgen/src/chain/start';
import { tcpRetransmitAvailable } from '../loadgen/src/chain/faults/tcp-retransmit';
import { otlpToSpans } from '../backend-proxy/src/otlp/normalize';
import { buildBaseline, rankTrace } from '../backend-proxy/src/rca';
import { CHAIN_HOPS, FAULT_KINDS } from '../tests/support/rca/synthetic';
import type { KernelEvent, Span } from '../contract';
import {
  exporterEvents,
  kernelSkipReason,
  removeChainNftTables,
  startKernelChain,
  unattachedProbes,
} from '../tests/integration/fullstack/support';

const RUNS = Number(process.env.RCA_CHAIN_RUNS ?? smoke(5, 1));
const HEALTHY = Number(process.env.RCA_CHAIN_HEALTHY ?? smoke(24, 4));
const KINDS = process.env.RCA_CHAIN_KINDS
  ? FAULT_KINDS.filter((k) => process.env.RCA_CHAIN_KINDS!.split(',').includes(k))
  : smoke(FAULT_KINDS, FAULT_KINDS.slice(0, 1));
const HOPS = process.env.RCA_CHAIN_HOPS
  ? CHAIN_HOPS.filter((h) => process.env.RCA_CHAIN_HOPS!.split(',').includes(h))
  : smoke(CHAIN_HOPS, CHAIN_HOPS.slice(0, 1));
const CHAIN = {
  timeScale: 0.05,
  logLevel: 'silent' as const,
  vectorCacheHitRate: 0,
  samplerAdaptive: false,
  hopTimeoutMs: 1500,
  tlsHops: [...CHAIN_HOPS],
};

// gpu_oom fails an allocation with probability 0.6 by default: at 1 every request is faulted (one that was not has no
// root cause to find). Other kinds keep their defaults (tcp_retransmit drops 15% of the packets to the hop).
const MAGNITUDE: Record<string, { magnitude: number }> = { gpu_oom: { magnitude: 1 } };

type Mode = 'no-kernel' | 'kernel';
type Route = { route: 'rag' | 'agent'; backend: 'vllm' | 'tgi' };
/** One running chain, however it runs: send a request, then get its trace (and the kernel's events around it). */
interface Rig {
  gatewayUrl: string;
  controlUrl: string;
  /** Sends one request; resolves to its client-side outcome and a function giving its trace once exported (called after `settle`). */
  send(r: Route, i: number): Promise<Sent>;
  /** Waits until the spans of the requests sent so far have been exported. */
  settle(): Promise<void>;
  kernelEvents?(spans: Span[]): Promise<KernelEvent[]>;
  stop(): Promise<void>;
}

const routeFor = (hop: string, i: number): Route => {
  const backend = hop === 'llm-tgi' ? 'tgi' : hop === 'llm-vllm' ? 'vllm' : i % 2 ? 'tgi' : 'vllm';
  if (hop === 'agent' || hop === 'tool') return { route: 'agent', backend };
  if (['embedding', 'vector-cache', 'rag'].includes(hop)) return { route: 'rag', backend };
  return { route: i % 2 ? 'agent' : 'rag', backend };
};

/** What the client saw (latency, success) and the way to the request's trace. */
interface Sent {
  ms: number;
  ok: boolean;
  trace: () => Span[];
}

const post = (gatewayUrl: string, r: Route, i: number): Promise<boolean> =>
  fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hopscope-route': r.route, 'x-hopscope-backend': r.backend },
    body: JSON.stringify({
      messages: [{ role: 'user', content: `question ${i}: what changed in the release ${i % 7}?` }],
      max_tokens: 16,
    }),
  })
    .then(async (x) => {
      await x.arrayBuffer();
      return x.ok;
    })
    .catch(() => false);

/** This request's trace among `spans`: the gateway root that started after we sent it (requests go one at a time). */
const traceOf = (spans: Span[], t0: number, t1: number): Span[] => {
  const root = spans.find((s) => s.service === 'gateway' && !s.parentSpanId && s.startMs >= t0 - 1 && s.startMs <= t1);
  return root ? spans.filter((s) => s.traceId === root.traceId) : [];
};

/** A sink for OTLP/HTTP: JSON bodies are normalised and kept (kernel mode), anything else is dropped. */
async function otlpSink(keep: boolean): Promise<{ url: string; spans: Span[]; close(): void }> {
  const spans: Span[] = [];
  const sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (keep) {
        try {
          spans.push(...otlpToSpans(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        } catch {
          /* not JSON */
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(sink.address() as { port: number }).port}/v1/traces`,
    spans,
    close: () => sink.close(),
  };
}

async function inProcessRig(): Promise<Rig> {
  const sink = await otlpSink(false);
  const exporter = new InMemorySpanExporter();
  const chain = await startChain({
    gatewayPort: 0,
    controlPort: 0,
    ...CHAIN,
    otlpEndpoint: sink.url,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    gatewayUrl: chain.gatewayUrl,
    controlUrl: chain.controlUrl,
    async send(r, i) {
      exporter.reset();
      const t0 = Date.now();
      const ok = await post(chain.gatewayUrl, r, i);
      const t1 = Date.now();
      await chain.forceFlush();
      // Server spans of a hung callee end a little after the caller gave up.
      await new Promise((res) => setTimeout(res, 300));
      await chain.forceFlush();
      const body = JSON.parse(
        Buffer.from(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())!).toString('utf8')
      );
      const spans = traceOf(otlpToSpans(body), t0, t1);
      return { ms: t1 - t0, ok, trace: () => spans };
    },
    async settle() {},
    async stop() {
      await chain.stop();
      sink.close();
    },
  };
}

/** The split chain with a live exporter, or why real probes cannot run here. */
async function kernelRig(): Promise<Rig | string> {
  const why = kernelSkipReason();
  if (why) return why;
  const sink = await otlpSink(true);
  const { exp, chain } = await startKernelChain({ ...CHAIN, otlpEndpoint: sink.url, otlpProtocol: 'http/json' });
  const stop = async (): Promise<void> => {
    await chain.stop().catch(() => {});
    await exp.stop().catch(() => {});
    sink.close();
    removeChainNftTables();
  };
  const bad = await unattachedProbes(exp);
  if (bad.length) {
    await stop();
    return `probes not attached: ${bad.join('; ')}`;
  }
  return {
    gatewayUrl: chain.gatewayUrl,
    controlUrl: chain.controlUrl,
    async send(r, i) {
      const t0 = Date.now();
      const ok = await post(chain.gatewayUrl, r, i);
      const t1 = Date.now();
      return { ms: t1 - t0, ok, trace: () => traceOf(sink.spans, t0, t1) };
    },
    // Every replica exports in batches every 500 ms; a hung callee's server span ends after its caller gave up.
    async settle() {
      await new Promise((res) => setTimeout(res, 1500));
    },
    // The window the proxy asks the exporters for when it ranks one trace (routes/rca.ts).
    async kernelEvents(spans) {
      const start = Math.min(...spans.map((s) => s.startMs));
      const end = Math.max(...spans.map((s) => s.endMs));
      return exporterEvents(exp, `from=${Math.floor(start - 5000)}&to=${Math.ceil(end + 1000)}&limit=10000`);
    },
    stop,
  };
}

async function run(mode: Mode, rig: Rig): Promise<string> {
  const retransmitOk = await tcpRetransmitAvailable();
  const pending: Array<{ route: string; sent: Sent }> = [];
  for (let i = 0; i < HEALTHY; i++) {
    const r = routeFor(i % 4 < 2 ? 'rag' : 'agent', i);
    pending.push({ route: r.route, sent: await rig.send(r, i) });
  }
  await rig.settle();
  const healthy = pending.map((p) => p.sent.trace()).filter((t) => t.length);
  // The median healthy request per route: what "usual" means to the client (the first requests pay for warm-up).
  const usual: Record<string, number> = {};
  for (const route of new Set(pending.map((p) => p.route))) {
    const ms = pending
      .filter((p) => p.route === route)
      .map((p) => p.sent.ms)
      .sort((a, b) => a - b);
    usual[route] = ms[Math.floor(ms.length / 2)];
  }
  const hitRows: Array<Record<string, string | number>> = [];
  const baseline = buildBaseline(healthy);

  const rows: Array<Record<string, string | number>> = [];
  let at1 = 0;
  let at3 = 0;
  let total = 0;
  let withKernel = 0;
  const skipped: string[] = [];
  let dumped = false;
  const misses: string[] = [];
  for (const kind of KINDS) {
    const row: Record<string, string | number> = { fault: kind };
    const hitRow: Record<string, string | number> = { fault: kind };
    for (const hop of HOPS) {
      if (kind === 'tcp_retransmit' && retransmitOk !== true) {
        row[hop] = 'n/a';
        continue;
      }
      // The driver reaches the gateway over plain HTTP here: a gateway TLS fault has nothing to slow down.
      if (kind === 'tls_slow_handshake' && hop === 'gateway') {
        row[hop] = 'n/a';
        continue;
      }
      const r = await fetch(`${rig.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: hop, kind, durationS: 600, ...MAGNITUDE[kind] }),
      });
      const f = (await r.json()) as { id?: string; error?: { message: string } };
      if (!r.ok || !f.id) {
        row[hop] = '-';
        skipped.push(`${kind}@${hop}: ${f.error?.message ?? r.status}`);
        continue;
      }
      // In split mode the fault reaches the replica processes over IPC.
      if (mode === 'kernel') await new Promise((res) => setTimeout(res, 200));
      const sent: Sent[] = [];
      // A probabilistic fault may spare a request: keep sending until RUNS were hit (see the header).
      const byChance = kind === 'tcp_retransmit';
      let tries = 0;
      while (sent.length < RUNS && tries < (byChance ? 8 * RUNS : RUNS)) {
        const r = routeFor(hop, tries);
        const x = await rig.send(r, 1000 + tries++);
        if (!byChance || !x.ok || x.ms >= usual[r.route] + 150) sent.push(x);
      }
      if (byChance) hitRow[hop] = `${sent.length}/${tries}`;
      await fetch(`${rig.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
      await rig.settle();
      const ranks: number[] = [];
      for (const x of sent) {
        const spans = x.trace();
        if (!spans.length) {
          misses.push(`${kind}@${hop}: no trace collected`);
          ranks.push(99);
          continue;
        }
        const kernelEvents = rig.kernelEvents ? await rig.kernelEvents(spans) : undefined;
        const a = rankTrace({ spans, baseline, kernelEvents });
        const services = [...new Set(a.candidates.map((c) => c.service))];
        const rank = services.indexOf(hop) + 1 || 99;
        ranks.push(rank);
        if (a.candidates.find((c) => c.service === hop)?.evidence.some((e) => e.kind.startsWith('kernel')))
          withKernel++;
        if (rank !== 1) {
          misses.push(
            `${kind}@${hop}: top ${a.candidates
              .slice(0, 2)
              .map((c) => `${c.service}=${c.score}(${c.evidence.map((e) => e.kind).join('|')})`)
              .join(', ')}`
          );
          if (process.env.RCA_CHAIN_DUMP && !dumped) {
            dumped = true;
            (await import('node:fs')).writeFileSync(
              process.env.RCA_CHAIN_DUMP,
              JSON.stringify({ spans, healthy, kernelEvents })
            );
          }
          if (process.env.RCA_CHAIN_VERBOSE)
            misses.push(
              `    ${spans.map((s) => `${s.service}:${s.kind}:${s.name}:${(s.endMs - s.startMs).toFixed(1)}:${s.status}`).join(' | ')}`
            );
        }
      }
      at1 += ranks.filter((x) => x === 1).length;
      at3 += ranks.filter((x) => x <= 3).length;
      total += ranks.length;
      row[hop] = ranks.join(',');
    }
    rows.push(row);
    if (Object.keys(hitRow).length > 1) hitRows.push(hitRow);
  }
  const title = mode === 'kernel' ? 'split mode, live bpf-exporter, kernel events' : 'in-process, no kernel events';
  report(
    `Our chain (real, ${title}): fault × hop → rank of the faulted hop per request (${RUNS} requests each)`,
    rows,
    { mode, rows, hitRows, at1, at3, total, withKernel, skipped, misses }
  );
  if (hitRows.length)
    report(
      `Requests the fault hit / requests sent (hit: client saw ≥ 150 ms over the median healthy request, or an error; median healthy: ${Object.entries(
        usual
      )
        .map(([k, v]) => `${k} ${v} ms`)
        .join(', ')})`,
      hitRows,
      { hitRows }
    );
  const summary =
    `real chain [${mode}]: AC@1 ${((100 * at1) / Math.max(1, total)).toFixed(1)}% (${at1}/${total}), AC@3 ${((100 * at3) / Math.max(1, total)).toFixed(1)}% (${at3}/${total})` +
    (mode === 'kernel' ? `; faulted hop with kernel evidence in ${withKernel}/${total}` : '');
  console.log(summary);
  if (retransmitOk !== true) console.log(`tcp_retransmit not injected: ${retransmitOk}`);
  if (skipped.length) console.log(`not applicable: ${skipped.join('; ')}`);
  if (misses.length) console.log(`misses:\n  ${misses.slice(0, 40).join('\n  ')}`);
  return summary;
}

// A smoke round proves the bench runs with the chain in-process (the kernel rig's start, probes and split chain are
// what tests/integration/fullstack/kernel-rca.test.ts exercises); RCA_CHAIN_KERNEL still picks either.
const want = (process.env.RCA_CHAIN_KERNEL ?? smoke('auto', '0')).toLowerCase();
if (!['auto', '0', '1', 'both'].includes(want))
  throw new Error(`RCA_CHAIN_KERNEL=${want}: expected 0, 1 or both (unset: kernel when available)`);
const summaries: string[] = [];
if (want === '0' || want === 'both') {
  console.log('mode: no-kernel (chain in-process, no bpf-exporter)');
  const rig = await inProcessRig();
  try {
    summaries.push(await run('no-kernel', rig));
  } finally {
    await rig.stop();
  }
}
if (want !== '0') {
  const rig = await kernelRig();
  if (typeof rig === 'string') {
    if (want !== 'auto') throw new Error(`kernel mode unavailable: ${rig}`);
    console.log(`mode: no-kernel (kernel mode unavailable: ${rig})`);
    const plain = await inProcessRig();
    try {
      summaries.push(await run('no-kernel', plain));
    } finally {
      await plain.stop();
    }
  } else {
    console.log('mode: kernel (split chain, live bpf-exporter with real bpftrace probes)');
    try {
      summaries.push(await run('kernel', rig));
    } finally {
      await rig.stop();
    }
  }
}
if (summaries.length > 1) console.log(`\n${summaries.join('\n')}`);
