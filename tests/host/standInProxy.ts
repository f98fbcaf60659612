/**
 * A stand-in for the backend proxy that answers the app's endpoints with contract-valid, deterministic data: golden
 * series for two backends, a 64 × 720 GPU heatmap, seven services with two pods each, a 5,000-span trace with its
 * root cause, TLS handshakes on a pod, a fault annotation, an A/B comparison and an alert. For benchmarks (the app's
 * own cost, no real sources) and for e2e tests of the panels (menus, inspect, links) that need known data.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';

import { renderPostmortem } from '../../backend-proxy/src/services/postmortem-md';
import type {
  AlertsAnswer,
  AnnotationsAnswer,
  CompareAnswer,
  GoldenAnswer,
  HeatmapAnswer,
  KernelEvent,
  PodKernelEventsAnswer,
  PodsAnswer,
  RcaAnswer,
  RcaRangeAnswer,
  ServicesAnswer,
  Span,
  TraceDetail,
  TraceList,
} from '../../contract';

/** The clock of the data: the last hour before the proxy started, one point every 5 s. */
export const NOW = Date.now();
export const FROM = NOW - 3600_000;
const STEP = 5000;
const COLS = 720;
export const HEATMAP_ROWS = 64;
export const TRACE_ID = 'ab'.repeat(16);
export const SERVICES = ['gateway', 'embedding', 'vector-cache', 'rag', 'llm-vllm', 'llm-tgi', 'agent'];
export const GOLDEN_METRICS = [
  'rps',
  'output_tokens_per_s',
  'e2e_p99_s',
  'ttft_p99_s',
  'kv_cache_hit_rate',
  'error_rate',
] as const;
/** The PromQL the stand-in says it ran for a metric and backend (what Explore must carry). */
export const promqlOf = (metric: string, backend: string): string => `hopscope_standin_${metric}{backend="${backend}"}`;
/** The fault marked on the charts: 10 minutes ago, for a minute. */
export const FAULT = {
  id: 'f1',
  target: 'rag' as const,
  kind: 'latency' as const,
  magnitude: 400,
  startMs: NOW - 600_000,
  endMs: NOW - 540_000,
  active: false,
};

/** Each metric's level and swing, in its own unit (requests/s, tokens/s, seconds, ratios). */
const SCALE: Record<(typeof GOLDEN_METRICS)[number], [number, number]> = {
  rps: [6, 3],
  output_tokens_per_s: [600, 250],
  e2e_p99_s: [1.6, 0.8],
  ttft_p99_s: [0.35, 0.15],
  kv_cache_hit_rate: [0.8, 0.12],
  error_rate: [0.004, 0.004],
};

function golden(): GoldenAnswer {
  const series = GOLDEN_METRICS.flatMap((metric, m) =>
    (['vllm', 'tgi'] as const).map((backend, b) => ({
      metric,
      backend,
      labels: { model_name: `model-${b}` },
      unit: 'x',
      origin: 'prometheus' as const,
      query: promqlOf(metric, backend),
      points: Array.from(
        { length: COLS },
        (_, i) =>
          [FROM + i * STEP, SCALE[metric][0] + SCALE[metric][1] * Math.sin((i + m * 7 + b * 3) / 30)] as [
            number,
            number,
          ]
      ),
    }))
  );
  return { from: FROM, to: NOW, stepMs: STEP, series, missing: [], sources: [{ source: 'prometheus', ok: true }] };
}

function heatmap(): HeatmapAnswer {
  return {
    from: FROM,
    to: NOW,
    stepMs: STEP,
    field: 'DCGM_FI_PROF_SM_ACTIVE',
    granularity: 'gpu',
    times: Array.from({ length: COLS }, (_, i) => FROM + i * STEP),
    rows: Array.from({ length: HEATMAP_ROWS }, (_, r) => ({
      gpu: String(r % 8),
      uuid: `GPU-${r}`,
      host: `gpu-node-${Math.floor(r / 8)}`,
      pod: `llm-vllm-${r % 2}`,
      values: Array.from({ length: COLS }, (_, c) => ((r * 13 + c) % 97) / 97),
    })),
    sources: [{ source: 'prometheus', ok: true }],
  };
}

const exact = { origin: 'ingest-counters' as const, exact: true };
const figures = {
  rate: exact,
  errors: exact,
  latency: { origin: 'sampled-traces' as const, exact: false, note: 'percentiles of the traces kept' },
};
const services = (): ServicesAnswer => ({
  from: FROM,
  to: NOW,
  sources: [],
  notes: [],
  services: SERVICES.map((s, i) => ({
    service: s,
    spans: 1000,
    errors: i,
    requests: 18_000,
    rps: 5,
    errorRate: i / 18_000,
    p50Ms: 100 + i,
    p99Ms: 900 + i * 10,
    pods: [`${s}-0`, `${s}-1`],
    figures,
  })),
});
const pods = (service: string): PodsAnswer => ({
  service,
  from: FROM,
  to: NOW,
  sources: [],
  notes: [],
  pods: [0, 1].map((i) => ({
    pod: `${service}-${i}`,
    node: 'node-a',
    spans: 500,
    errors: i,
    requests: 9000,
    rps: 2.5,
    errorRate: i / 9000,
    p50Ms: 100,
    p99Ms: 900,
    kernelEvents: { tls_handshake: 10 * i },
    figures,
  })),
});

/** A pod's kernel events: 20 TLS handshakes (one slow, carrying the trace id) and a retransmit. */
function kernelEvents(pod: string): PodKernelEventsAnswer {
  const ev = (i: number, type: KernelEvent['type'], durationMs?: number, traceId?: string): KernelEvent => ({
    ts: NOW - 1_800_000 + i * 60_000,
    type,
    pid: 4242,
    comm: 'python',
    pod,
    node: 'node-a',
    durationMs,
    traceId,
    detail: { dst: '10.0.0.7:443' },
    mode: 'live',
  });
  const events = [
    ...Array.from({ length: 20 }, (_, i) =>
      ev(i, 'tls_handshake', i === 10 ? 640 : 8 + i, i === 10 ? TRACE_ID : undefined)
    ),
    ev(5, 'tcp_retransmit'),
  ];
  return {
    pod,
    from: FROM,
    to: NOW,
    events,
    counts: { tls_handshake: 20, tcp_retransmit: 1 },
    dropped: 0,
    truncated: false,
    sources: [{ source: 'bpf-exporter', ok: true }],
  };
}

/** A 5,000-span trace: a root, 50 children, each with 99 descendants in short chains. */
function bigTrace(): TraceDetail {
  const spans: Span[] = [];
  const mk = (id: string, parent: string | undefined, service: string, s: number, e: number): Span => ({
    traceId: TRACE_ID,
    spanId: id,
    parentSpanId: parent,
    name: `${service} op`,
    service,
    kind: 'server',
    startMs: s,
    endMs: e,
    status: 'ok',
    attributes: {},
    resource: { 'k8s.pod.name': `${service}-0` },
  });
  spans.push(mk('r'.padStart(16, '0'), undefined, 'gateway', NOW - 10_000, NOW));
  let n = 1;
  for (let c = 0; c < 50; c++) {
    const cs = NOW - 10_000 + c * 190;
    const cid = `c${c}`.padStart(16, '0');
    spans.push(mk(cid, spans[0].spanId, SERVICES[c % 7], cs, cs + 180));
    n++;
    let parent = cid;
    for (let k = 0; k < 99 && n < 5000; k++, n++) {
      const id = `s${c}-${k}`.padStart(16, '0');
      const st = cs + (k % 10) * 17;
      spans.push(mk(id, k % 10 === 0 ? cid : parent, SERVICES[(c + k) % 7], st, st + 15));
      parent = id;
    }
  }
  return { traceId: TRACE_ID, spans };
}

/** The root cause of the big trace: rag first, on the critical path root → its 49th child (a rag span). */
function rcaOf(t: TraceDetail): RcaAnswer {
  const root = t.spans[0];
  const child = t.spans.find((s) => s.spanId === 'c45'.padStart(16, '0'))!;
  const llm = t.spans.find((s) => s.service === 'llm-vllm')!;
  const item = (s: Span, depth: number) => ({
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    depth,
    service: s.service,
    pod: `${s.service}-0`,
    operation: s.name,
    kind: s.kind,
    status: s.status,
    startMs: s.startMs,
    endMs: s.endMs,
    durationMs: s.endMs - s.startMs,
    selfMs: s.endMs - s.startMs,
    onPathMs: s.endMs - s.startMs,
    skewCorrectedMs: depth ? 2 : undefined,
  });
  return {
    traceId: TRACE_ID,
    tookMs: 3,
    missing: [],
    verdict: 'rag-0 slow: own time 180 ms (usually 40 ms), with a 640 ms TLS handshake',
    // The LLM span split as vLLM's llm_request span reports it (gen_ai.latency.*), its engine state with the metric
    // names found (the older KV-cache gauge, as a release before its rename exposes it).
    llmPhases: [
      {
        spanId: llm.spanId,
        service: llm.service,
        pod: `${llm.service}-0`,
        engine: 'vllm',
        source: 'llm_request / gen_ai.latency.*',
        startMs: llm.startMs,
        durationMs: llm.endMs - llm.startMs,
        phases: [
          { name: 'queue', durationMs: 2, startMs: llm.startMs, baselineMs: 2 },
          { name: 'prefill', durationMs: 5, baselineMs: 4 },
          { name: 'decode', durationMs: 8, baselineMs: 9 },
        ],
        promptTokens: 600,
        completionTokens: 32,
        baselinePromptTokens: 580,
        engineState: {
          waiting: 0,
          running: 3,
          kvCacheUsage: 0.21,
          provenance: [
            { figure: 'waiting', metric: 'vllm:num_requests_waiting', instantMs: llm.startMs, scrapeIntervalS: 15 },
            { figure: 'running', metric: 'vllm:num_requests_running', instantMs: llm.startMs, scrapeIntervalS: 15 },
            {
              figure: 'kvCacheUsage',
              metric: 'vllm:gpu_cache_usage_perc',
              instantMs: llm.startMs,
              scrapeIntervalS: 15,
            },
          ],
        },
      },
    ],
    criticalPath: [item(root, 0), item(child, 1)],
    candidates: [
      {
        rank: 1,
        service: child.service,
        pod: `${child.service}-0`,
        spanId: child.spanId,
        operation: child.name,
        score: 0.9,
        selfMs: 180,
        baselineMs: 40,
        evidence: [
          { kind: 'self_time', summary: 'own time 180 ms vs 40 ms baseline' },
          { kind: 'kernel:tls_handshake', summary: '1 slow TLS handshake (640 ms)' },
        ],
      },
      {
        rank: 2,
        service: 'gateway',
        pod: 'gateway-0',
        spanId: root.spanId,
        operation: root.name,
        score: 0.2,
        evidence: [{ kind: 'critical_path_share', summary: 'on the critical path' }],
      },
    ],
  };
}

function compare(): CompareAnswer {
  const times = Array.from({ length: 12 }, (_, i) => FROM + i * 300_000);
  const side = (backend: 'vllm' | 'tgi', k: number) => ({
    selector: { backend },
    count: 1000 * k,
    p50Ms: 100 * k,
    p99Ms: 400 * k,
    ttftP50Ms: 50 * k,
    ttftP99Ms: 200 * k,
    histogram: [5, 20, 60, 30, 10].map((c) => c * k),
    p50Series: times.map(() => 100 * k),
    p99Series: times.map((_, i) => (i === 6 ? 900 : 400) * k),
    hotZones: [{ startMs: times[6], endMs: times[7], ratio: 9, p50Ms: 100 * k, p99Ms: 900 * k }],
    origin: 'sampled-traces' as const,
    exact: true,
    estimatedRequests: 1000 * k,
  });
  return {
    from: FROM,
    to: NOW,
    bucketEdgesMs: [10, 50, 100, 500, 1000, 5000],
    times,
    bucketMs: 300_000,
    a: side('vllm', 1),
    b: side('tgi', 2),
    sources: [],
  };
}

const alerts = (): AlertsAnswer => ({
  evaluatedAt: NOW,
  sources: [],
  alerts: [
    {
      ruleId: 'tls-slow',
      name: 'Slow TLS on a pod',
      state: 'firing',
      severity: 'critical',
      startsAt: NOW - 300_000,
      pod: 'rag-0',
      summary: '3 TLS handshakes over 500 ms',
      link: `/a/hopscope-rca-app/services/rag/pods/rag-0?from=${NOW - 600_000}&to=${NOW}`,
    },
  ],
});

/** Where the stand-in's Markdown says the app is opened (the proxy's HOPSCOPE_APP_URL). */
export const STAND_IN_APP_URL = 'http://grafana.example:3000';

export interface StandInProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the stand-in on a free port; `delayMs` delays every answer (a real proxy queries its sources first);
 * `prometheusDown` answers as the proxy does when Prometheus is unreachable (no golden series, no GPU rows, the
 * source reported failed), the other sources still answering.
 */
export async function startStandInProxy(
  options: { delayMs?: number; prometheusDown?: boolean } = {}
): Promise<StandInProxy> {
  const app = express();
  const delay = options.delayMs ?? 0;
  if (delay > 0) {
    app.use((_q, _r, next) => void setTimeout(next, delay));
  }
  const down = [{ source: 'prometheus', ok: false, error: 'connect ECONNREFUSED 127.0.0.1:9090' }];
  const g: GoldenAnswer = options.prometheusDown ? { ...golden(), series: [], sources: down } : golden();
  const h: HeatmapAnswer = options.prometheusDown
    ? { ...heatmap(), field: null, times: [], rows: [], sources: down }
    : heatmap();
  const t = bigTrace();
  const rca = rcaOf(t);
  const list: TraceList = {
    traces: [
      {
        traceId: TRACE_ID,
        rootService: 'gateway',
        rootName: 'POST',
        startMs: NOW - 10_000,
        durationMs: 10_000,
        status: 'ok',
        spanCount: t.spans.length,
      },
    ],
  };
  const annotations: AnnotationsAnswer = { annotations: [FAULT], sources: [] };
  app.get('/api/golden', (_q, r) => r.json(g));
  app.get('/api/gpu/heatmap', (_q, r) => r.json(h));
  app.get('/api/annotations', (_q, r) => r.json(annotations));
  app.get('/api/services', (_q, r) => r.json(services()));
  app.get('/api/services/:s/pods', (q, r) => r.json(pods(String(q.params.s))));
  app.get('/api/traces', (_q, r) => r.json(list));
  app.get('/api/traces/:id/rca', (_q, r) => r.json(rca));
  // The window root cause of any range: the big trace's answer, as the one trace the stand-in holds.
  const windowRca = (from: number, to: number): RcaRangeAnswer => ({
    ...rca,
    traceId: undefined,
    criticalPath: [],
    from,
    to,
    window: { traces: 1, spans: t.spans.length, anomalousTraces: 1 },
    sample: { found: 1, analysed: 1, failed: 0, sampled: false, how: "the stand-in proxy's one trace" },
    sources: [],
  });
  app.get('/api/rca', (q, r) => r.json(windowRca(Number(q.query.from) || FROM, Number(q.query.to) || NOW)));
  app.get('/api/traces/:id', (_q, r) => r.json(t));
  app.get('/api/pods/:pod/kernel-events', (q, r) => r.json(kernelEvents(String(q.params.pod))));
  app.get('/api/compare', (_q, r) => r.json(compare()));
  app.get('/api/alerts', (_q, r) => r.json(alerts()));
  app.get('/api/alerts/rules', (_q, r) => r.json({ rules: [] }));
  // A save is taken as is (the access checks in front of it are what tests look at).
  app.put('/api/alerts/rules', express.json(), (q, r) =>
    r.json({ rules: (q.body as { rules?: unknown[] }).rules ?? [], version: 1 })
  );
  app.get('/api/runs', (_q, r) => r.json({ runs: [], total: 0 }));
  // The Markdown export, rendered by the proxy's own renderer on this data (no headless Chromium: format=png is 501).
  app.get('/api/export/postmortem', (q, r) => {
    const p = q.query as Record<string, string | undefined>;
    if (p.format === 'png') {
      r.status(501).json({
        error: { code: 'not_implemented', message: 'the stand-in proxy has no headless Chromium' },
      });
      return;
    }
    const ids = (p.traceId ?? '').split(',').filter(Boolean);
    const markdown = renderPostmortem({
      range: { from: Number(p.from) || FROM, to: Number(p.to) || NOW },
      generatedMs: NOW,
      appUrl: STAND_IN_APP_URL,
      view: p.view,
      service: p.service,
      traces: ids.map((id) =>
        id === TRACE_ID ? { id, rca: { ...rca, partial: false, sources: [] } as never } : { id, error: 'not found' }
      ),
      alerts: alerts().alerts,
      ...(p.window === '1'
        ? { window: { ...windowRca(Number(p.from) || FROM, Number(p.to) || NOW), service: undefined } }
        : {}),
    });
    r.type('text/markdown; charset=utf-8').send(markdown);
  });
  // No root-cause answer saved yet.
  app.get('/api/rca/answers', (_q, r) => r.json({ answers: [] }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}
