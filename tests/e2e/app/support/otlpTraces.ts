/**
 * OTLP/JSON traces shaped like the chain's (gateway → embedding → vector-cache → rag → llm-vllm → agent), for e2e runs
 * that feed the real proxy's embedded store directly: healthy traffic for the baseline, then slow traces where one hop
 * (the "injected" one) takes far longer than its baseline. Deterministic (seeded) so screenshots mean something.
 */
const HOPS = ['gateway', 'embedding', 'vector-cache', 'rag', 'llm-vllm', 'agent'] as const;
export type Hop = (typeof HOPS)[number];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const hex = (r: () => number, n: number): string =>
  Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');

interface SpanSpec {
  hop: Hop;
  name: string;
  startMs: number;
  endMs: number;
  parent?: string;
  id: string;
  error?: boolean;
}

/** Nested chain: each hop calls the next; `slowHop` gets `extraMs` of its own (exclusive) time. */
function chainSpans(r: () => number, t0: number, slowHop?: Hop, extraMs = 0): SpanSpec[] {
  const base: Record<Hop, number> = {
    gateway: 4,
    embedding: 18,
    'vector-cache': 6,
    rag: 12,
    'llm-vllm': 420,
    agent: 30,
  };
  const self = HOPS.map((h) => base[h] * (0.8 + r() * 0.4) + (h === slowHop ? extraMs : 0));
  const spans: SpanSpec[] = [];
  // total of a hop = its own time + its callee's total; each starts after half of its own time
  const totals = new Array(HOPS.length).fill(0);
  for (let i = HOPS.length - 1; i >= 0; i--) {
    totals[i] = self[i] + (i + 1 < HOPS.length ? totals[i + 1] : 0);
  }
  let start = t0;
  let parent: string | undefined;
  HOPS.forEach((hop, i) => {
    const id = hex(r, 16);
    spans.push({
      hop,
      name: hop === 'llm-vllm' ? 'chat llama-3-8b' : `${hop} handle`,
      startMs: start,
      endMs: start + totals[i],
      parent,
      id,
    });
    parent = id;
    start += self[i] / 2;
  });
  return spans;
}

const attr = (key: string, value: string | number) =>
  typeof value === 'number'
    ? { key, value: { intValue: String(Math.round(value)) } }
    : { key, value: { stringValue: value } };

/** OTLP/JSON body (ExportTraceServiceRequest) for `count` traces starting at `startMs`, `gapMs` apart. */
export function otlpBatch(opts: {
  seed: number;
  startMs: number;
  count: number;
  gapMs: number;
  slowHop?: Hop;
  extraMs?: number;
}): { body: unknown; traceIds: string[] } {
  const r = rng(opts.seed);
  const byHop = new Map<Hop, unknown[]>();
  const traceIds: string[] = [];
  for (let k = 0; k < opts.count; k++) {
    const traceId = hex(r, 32);
    traceIds.push(traceId);
    for (const s of chainSpans(r, opts.startMs + k * opts.gapMs, opts.slowHop, opts.extraMs)) {
      const list = byHop.get(s.hop) ?? [];
      list.push({
        traceId,
        spanId: s.id,
        parentSpanId: s.parent ?? '',
        name: s.name,
        kind: 2,
        startTimeUnixNano: String(BigInt(Math.round(s.startMs * 1000)) * 1000n),
        endTimeUnixNano: String(BigInt(Math.round(s.endMs * 1000)) * 1000n),
        attributes:
          s.hop === 'llm-vllm'
            ? [
                attr('gen_ai.operation.name', 'chat'),
                attr('gen_ai.request.model', 'llama-3-8b'),
                attr('gen_ai.usage.output_tokens', 200),
              ]
            : [],
        status: { code: 1 },
      });
      byHop.set(s.hop, list);
    }
  }
  const resourceSpans = [...byHop.entries()].map(([hop, spans]) => ({
    resource: {
      attributes: [
        attr('service.name', hop),
        attr('k8s.pod.name', `${hop}-0`),
        attr('k8s.node.name', hop.startsWith('llm') ? 'gpu-node-0' : 'cpu-node-0'),
        attr('k8s.namespace.name', 'hopscope'),
      ],
    },
    scopeSpans: [{ scope: { name: 'hopscope-e2e' }, spans }],
  }));
  return { body: { resourceSpans }, traceIds };
}
