/**
 * Loader for the Nezha Online Boutique fixture (rca/nezha-ob): per-minute span CSVs (gzip), labelled fault cases and
 * a fault-free minute. Turns rows into contract spans: service from the pod name, and — since the CSV has no span
 * kind — a row whose child runs the same operation on another pod is the client, that child the server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Span } from '../../../contract';
import { groupByTrace } from '../../../backend-proxy/src/rca/baseline';

export interface NezhaCase {
  id: string;
  day: string;
  /** Injection instant, epoch ms (from the UTC `inject_time` string, as the fixture README asks). */
  injectMs: number;
  injectPod: string;
  injectType: string;
  rootCauseService: string;
  files: string[];
}

/** `frontend-579b9bff58-t2dbm` → `frontend` (Deployment pods: name-<replicaset hash>-<pod hash>). */
export const serviceOfPod = (pod: string): string => pod.replace(/-[a-z0-9]{6,10}-[a-z0-9]{5}$/, '');

export function loadNezhaCases(dir: string): NezhaCase[] {
  const raw = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as Array<Record<string, unknown>>;
  return raw.map((c) => {
    const injectMs = Date.parse(`${String(c.inject_time).replace(' ', 'T')}Z`);
    if (!Number.isFinite(injectMs)) throw new Error(`nezha cases.json: bad inject_time ${String(c.inject_time)}`);
    return {
      id: `${String(c.inject_time).replace(/[ :]/g, '_')}_${String(c.inject_type)}_${String(c.root_cause_service)}`,
      day: String(c.day),
      injectMs,
      injectPod: String(c.inject_pod),
      injectType: String(c.inject_type),
      rootCauseService: String(c.root_cause_service),
      files: (c.saved_trace_files as string[]).slice(),
    };
  });
}

const HEADER = 'TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration';

/** One CSV (text) → spans as the rows say them: no kind (`unspecified`), no status, no attributes. */
export function parseNezhaRows(text: string, source = 'csv'): Span[] {
  const lines = text.split('\n');
  if (lines[0].trim() !== HEADER)
    throw new Error(`${source}: unexpected header ${JSON.stringify(lines[0].slice(0, 100))}`);
  const spans: Span[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const f = line.split(',');
    if (f.length !== 8) throw new Error(`${source}:${i + 1}: expected 8 fields, got ${f.length}`);
    const [traceId, spanId, parentId, pod, op, startNs, endNs] = f;
    const startMs = Number(BigInt(startNs) / 1000n) / 1000;
    const endMs = Number(BigInt(endNs) / 1000n) / 1000;
    const service = serviceOfPod(pod);
    const s: Span = {
      traceId,
      spanId,
      name: op,
      service,
      kind: 'unspecified',
      startMs,
      endMs,
      status: 'unset',
      attributes: {},
      resource: { 'service.name': service, 'k8s.pod.name': pod },
    };
    if (parentId !== 'root') s.parentSpanId = parentId;
    spans.push(s);
  }
  return spans;
}

/** One Online Boutique CSV (text) → spans, client/server kinds recovered from the gRPC method names per trace. */
export function parseNezhaCsv(text: string, source = 'csv'): Span[] {
  const spans = parseNezhaRows(text, source);
  for (const s of spans) s.kind = 'internal';
  inferKinds(spans);
  return spans;
}

/** gRPC method names appear as `hipstershop.X/M`, `grpc.hipstershop.X/M` or `/hipstershop.X/M` on the two sides. */
const normOp = (op: string): string => op.replace(/^grpc\./, '').replace(/^\//, '');
/** `hipstershop.CurrencyService/Convert` → `currencyservice`: the service a client row calls. */
const calleeOfOp = (op: string): string | undefined =>
  /^hipstershop\.([A-Za-z]+)\//.exec(normOp(op))?.[1].toLowerCase();

function inferKinds(spans: Span[]): void {
  const byId = new Map<string, Span>();
  for (const s of spans) byId.set(`${s.traceId}/${s.spanId}`, s);
  for (const s of spans) {
    // A row naming another service's method is that call's client side, even when the server row is missing.
    const callee = calleeOfOp(s.name);
    if (callee && callee !== s.service) {
      s.kind = 'client';
      s.attributes['peer.service'] = callee;
    }
  }
  for (const s of spans) {
    if (!s.parentSpanId) {
      s.kind = 'server';
      continue;
    }
    const p = byId.get(`${s.traceId}/${s.parentSpanId}`);
    if (
      p &&
      p.resource['k8s.pod.name'] !== s.resource['k8s.pod.name'] &&
      (p.kind === 'client' || normOp(p.name) === normOp(s.name))
    ) {
      p.kind = 'client';
      p.attributes['peer.service'] ??= s.service;
      s.kind = 'server';
    }
  }
}

export function loadNezhaFiles(dir: string, files: string[]): Span[] {
  const out: Span[] = [];
  for (const f of files) {
    for (const s of parseNezhaCsv(gunzipSync(readFileSync(join(dir, f))).toString('utf8'), f)) out.push(s);
  }
  return out;
}

/** The incident window: traces whose root starts within [inject, inject + windowMs). */
export function nezhaWindow(dir: string, c: NezhaCase, windowMs = 120_000): Span[][] {
  return groupByTrace(loadNezhaFiles(dir, c.files)).filter((tr) => {
    const t0 = Math.min(...tr.map((s) => s.startMs));
    return t0 >= c.injectMs && t0 < c.injectMs + windowMs;
  });
}

/** The fault-free minute shipped with the fixture, grouped by trace. */
export function nezhaFaultFree(dir: string): Span[][] {
  return groupByTrace(loadNezhaFiles(dir, ['fault_free/2022-08-23_17_00_trace.csv.gz']));
}

/** Recent healthy traffic: traces of the case's files that started before the injection (minus a guard interval). */
export function nezhaBeforeInjection(dir: string, c: NezhaCase, guardMs = 5_000): Span[][] {
  return groupByTrace(loadNezhaFiles(dir, c.files)).filter(
    (tr) => Math.min(...tr.map((s) => s.startMs)) < c.injectMs - guardMs
  );
}
