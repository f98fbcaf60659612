/**
 * A root-cause worker thread (./rca-pool.ts): runs the pure engine (../rca, with whatever passes it lists) on the
 * inputs it is sent, one at a time, and posts each answer back; also the parsing that comes before it for large
 * bodies (POST /api/rca's incident window, OTLP ingest), so that megabytes of JSON cost this thread's time, never
 * the event loop's. Spans parsed for the store go back in v8-serialized chunks the pool unpacks one per turn of the
 * event loop. No I/O, no state between jobs. In the image this file is its own bundle (`rca-worker.mjs` beside
 * `main.mjs`, see backend-proxy/Dockerfile).
 */
import { setPriority } from 'node:os';
import { serialize } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { DomainError } from '../domain/errors';
import { assertOtlpDepth, OtlpBodyError, parseOtlpBody } from '../otlp/parse-body';
import { rankTrace, rankWindow } from '../rca';
import type { RcaJob, RcaJobResult } from './rca-pool';
import { windowInputOf } from './rca-window-request';

/** Spans per chunk handed back to the event loop. */
const CHUNK = 1000;

const port = parentPort;
if (!port) throw new Error('rca-worker: start me as a worker thread (services/rca-pool.ts)');
// The lowest CPU priority for this thread only (Linux: a thread's nice value is its own): when the cores are busy,
// the event loop (health, /metrics, ingest, heartbeats, lease renewals) runs first and the engine takes what is left.
try {
  setPriority(19);
} catch {
  // Not permitted here (some sandboxes): the engine still runs off the event loop.
}

function run(job: RcaJob): { out: RcaJobResult; transfer: ArrayBuffer[] } {
  switch (job.kind) {
    case 'trace':
      return { out: { id: job.id, answer: rankTrace(job.input) }, transfer: [] };
    case 'window':
      return { out: { id: job.id, answer: rankWindow(job.input) }, transfer: [] };
    case 'window-body':
      return {
        out: { id: job.id, answer: rankWindow(windowInputOf(Buffer.from(job.body), job.config)) },
        transfer: [],
      };
    case 'otlp': {
      const body = new Uint8Array(job.body);
      assertOtlpDepth(body, job.encoding);
      const spans = parseOtlpBody(body, job.encoding);
      const chunks: ArrayBuffer[] = [];
      for (let i = 0; i < spans.length; i += CHUNK) {
        const b = serialize(spans.slice(i, i + CHUNK));
        chunks.push(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
      }
      return { out: { id: job.id, chunks }, transfer: chunks };
    }
  }
}

port.on('message', (job: RcaJob) => {
  let result: { out: RcaJobResult; transfer: ArrayBuffer[] };
  try {
    result = run(job);
  } catch (err) {
    const e = err as Error;
    const error =
      err instanceof DomainError
        ? {
            name: 'DomainError',
            message: e.message,
            kind: err.kind,
            code: err.code,
            details: err.details,
            retryAfterS: err.retryAfterS,
          }
        : err instanceof OtlpBodyError
          ? { name: 'OtlpBodyError', message: e.message }
          : { name: e?.name ?? 'Error', message: e?.message ?? String(err) };
    result = { out: { id: job.id, error }, transfer: [] };
  }
  port.postMessage(result.out, result.transfer);
});
