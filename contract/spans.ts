/**
 * What a `Span` says about itself, read one way everywhere (engine, proxy routes, app): its pod, whether it failed,
 * whom a client span called, its time to first token, the model it fell back to, the inference backend it is. Pure
 * functions, no I/O.
 */
import type { InferenceBackend } from './proxy';
import type { Span } from './traces';
import { engineOfSpan } from './engines/llm-phases';

type Attrs = Span['attributes'];

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const num = (v: unknown): number | undefined =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;
const firstString = (a: Attrs, keys: readonly string[]): string | undefined => {
  for (const k of keys) {
    const v = str(a[k]);
    if (v) return v;
  }
  return undefined;
};

export { podOfSpan, podOrServiceOfSpan } from './span-pod';

/** The node a span ran on (`k8s.node.name`, else `host.name`). */
export function nodeOfSpan(span: Span): string | undefined {
  return str(span.resource['k8s.node.name']) ?? str(span.resource['host.name']);
}

/** The process id the span's resource reports (`process.pid`): joins kernel events the exporter could not map to a pod. */
export function pidOfSpan(span: Span): number | undefined {
  const p = span.resource['process.pid'];
  return typeof p === 'number' ? p : undefined;
}

const SPAN_KINDS: ReadonlyArray<Span['kind']> = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/**
 * A span kind in any of the spellings producers use, or undefined: OTLP's enum number (0–5) or name
 * (`SPAN_KIND_CLIENT`), Zipkin's `CLIENT`/`SERVER`/`PRODUCER`/`CONSUMER`, Jaeger's and OpenTracing's `span.kind` tag
 * values (`client`, `server`, …, and `rpc.client`/`rpc.server` of some OpenTracing libraries).
 */
export function spanKindOf(v: unknown): Span['kind'] | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v < SPAN_KINDS.length ? SPAN_KINDS[v] : undefined;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (/^\d$/.test(t)) return spanKindOf(Number(t));
  const k = t
    .replace(/^SPAN_KIND_/i, '')
    .replace(/^rpc\./i, '')
    .toLowerCase();
  return (SPAN_KINDS as readonly string[]).includes(k) ? (k as Span['kind']) : undefined;
}

/**
 * The kind a span says it has: its `kind`, else — when that is `unspecified` — the `span.kind` attribute some
 * Jaeger/OpenTracing/Zipkin conversions keep as a tag. `unspecified` when it says neither (the engine then infers
 * the span's role from the tree).
 */
export function declaredKindOfSpan(span: Pick<Span, 'kind' | 'attributes'>): Span['kind'] {
  if (span.kind !== 'unspecified') return span.kind;
  return spanKindOf(span.attributes['span.kind']) ?? 'unspecified';
}

/** A span that failed: status error or timeout (`unset` and `ok` are both healthy). */
export const isFailedSpan = (span: Pick<Span, 'status'>): boolean =>
  span.status === 'error' || span.status === 'timeout';

const PEER_SERVICE_KEYS = ['peer.service', 'service.peer.name'] as const;
const PEER_KEYS = ['peer.service', 'service.peer.name', 'server.address', 'net.peer.name', 'hopscope.peer'] as const;

/**
 * Whom a client span called, by the name it gives (`peer.service`, `service.peer.name` — what the Collector's Zipkin
 * translator writes for a remote endpoint in newer semantic conventions —, `server.address`, `net.peer.name`,
 * `hopscope.peer`).
 */
export const peerOfClientSpan = (span: Span): string | undefined => firstString(span.attributes, PEER_KEYS);

/**
 * The service a span names as its remote peer (`peer.service`, `service.peer.name`: a Zipkin remote endpoint), whatever
 * its kind; not the address attributes, which a server span sets to where it listened.
 */
export const peerServiceOfSpan = (span: Span): string | undefined => firstString(span.attributes, PEER_SERVICE_KEYS);

/** The pod a client span says it reached (`hopscope.peer.pod`), when no server span of the callee joined the trace. */
export const peerPodOfClientSpan = (span: Span): string | undefined => str(span.attributes['hopscope.peer.pod']);

/** `address:port` as spans and kernel events both write it: IPv4-mapped IPv6 addresses as IPv4; undefined if incomplete. */
export function endpointKey(address: unknown, port: unknown): string | undefined {
  const a = str(address);
  const p = Number(port);
  return a && p > 0 ? `${a.replace(/^::ffff:/i, '')}:${p}` : undefined;
}

/** The `server.address`:`server.port` a span names (a server span: where it listened; a client span: what it called). */
export const serverEndpointOfSpan = (span: Span): string | undefined =>
  endpointKey(span.attributes['server.address'], span.attributes['server.port']);

/** Time to first token in ms, whichever attribute the instrumentation used (ms attributes first, then seconds). */
export function ttftMsOfSpan(span: Span): number | undefined {
  const a = span.attributes;
  const ms = a['hopscope.ttft_ms'] ?? a['gen_ai.response.time_to_first_token_ms'];
  if (typeof ms === 'number') return ms;
  const sec =
    a['gen_ai.client.operation.time_to_first_chunk'] ??
    a['gen_ai.server.time_to_first_token'] ??
    a['gen_ai.response.time_to_first_chunk'] ??
    // vLLM's and SGLang's own request spans (contract/engines).
    a['gen_ai.latency.time_to_first_token'];
  return typeof sec === 'number' ? sec * 1000 : undefined;
}

/** KV/prefix-cache hit rate (0…1) of an LLM span: our explicit attribute, else cached ÷ input tokens (GenAI semconv). */
export function kvCacheHitRateOfSpan(span: Span): number | undefined {
  const explicit = num(span.attributes['hopscope.kv_cache.hit_rate']);
  if (explicit !== undefined) return explicit;
  const cached = num(span.attributes['gen_ai.usage.cache_read.input_tokens']);
  const input = num(span.attributes['gen_ai.usage.input_tokens']);
  return cached !== undefined && input ? cached / input : undefined;
}

export interface ModelFallback {
  /** The model asked for. */
  requested: string;
  /** The model that answered. */
  served: string;
  /** Why, when the span says (`hopscope.fallback.reason`, e.g. `gpu_oom`). */
  reason?: string;
  /** The span names the fallback itself (`hopscope.fallback.*`), rather than only showing two different models. */
  explicit: boolean;
}

/** A dated snapshot (`-0613`, `-2024-08-06`, `-20241022`), a tag (`:8b`, `@001`), a version (`-v1.2`) or `-latest`. */
const VERSION_SUFFIX = /^(?:-\d{4}(?:-\d{2}-\d{2})?|-\d{8}|[@:][\w.-]+|-v?\d+(?:\.\d+)+|-latest)$/;

/**
 * A request answered by another model than the one asked for: `hopscope.fallback.model` (from
 * `hopscope.fallback.from_model`), else `gen_ai.request.model` ≠ `gen_ai.response.model`. A served name that only
 * adds a version to the asked one (`gpt-4o` → `gpt-4o-2024-08-06`, `llama3` → `llama3:8b`) is the same model, not a fallback.
 */
export function modelFallbackOfSpan(span: Span): ModelFallback | undefined {
  const a = span.attributes;
  const requested = str(a['hopscope.fallback.from_model']) ?? str(a['gen_ai.request.model']);
  const reason = str(a['hopscope.fallback.reason']);
  const explicitServed = str(a['hopscope.fallback.model']);
  if (explicitServed)
    return {
      requested: requested ?? 'the requested model',
      served: explicitServed,
      explicit: true,
      ...(reason ? { reason } : {}),
    };
  const served = str(a['gen_ai.response.model']);
  if (!requested || !served || served === requested) return undefined;
  if (served.startsWith(requested) && VERSION_SUFFIX.test(served.slice(requested.length))) return undefined;
  return { requested, served, explicit: false, ...(reason ? { reason } : {}) };
}

/** The span reports a GPU out-of-memory of its own (`hopscope.gpu.oom`, or a fallback for that reason). */
export const gpuOomOfSpan = (span: Span): boolean =>
  span.attributes['hopscope.gpu.oom'] === true || span.attributes['hopscope.fallback.reason'] === 'gpu_oom';

const INFERENCE_BACKEND_NAMES: ReadonlyArray<readonly [RegExp, InferenceBackend]> = [
  [/vllm/i, 'vllm'],
  [/tgi|text-generation-inference/i, 'tgi'],
  [/sglang/i, 'sglang'],
];

/** The inference backend a service name says it is (`llm-vllm`, `text-generation-inference`), if any. */
export function inferenceBackendOfName(name: string): InferenceBackend | undefined {
  return INFERENCE_BACKEND_NAMES.find(([re]) => re.test(name))?.[1];
}

/**
 * The inference backend a span is: its `gen_ai.provider.name` (`vllm`, `tgi`, `sglang`), else the engine its own shape
 * says wrote it (vLLM's `llm_request`, SGLang's request span, TGI's router span: contract/engines), else its service's
 * name (`llm-vllm`, `text-generation-inference`, `sglang`…).
 */
export function inferenceBackendOfSpan(
  span: Pick<Span, 'attributes' | 'service'> & Partial<Span>
): InferenceBackend | undefined {
  const p = span.attributes['gen_ai.provider.name'];
  if (typeof p === 'string') {
    const b = p.toLowerCase();
    if (b === 'vllm' || b === 'tgi' || b === 'sglang') return b;
  }
  if (span.name !== undefined && span.spanId !== undefined) {
    const e = engineOfSpan(span as Span);
    if (e) return e;
  }
  return inferenceBackendOfName(span.service);
}
