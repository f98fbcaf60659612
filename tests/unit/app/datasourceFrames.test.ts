/**
 * The data source's pure transforms: contract answers → the data frames panels draw (field names, units, links,
 * parts by refId, notices). Run in Node on hand-built answers; the proxy's shapes are the contract's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataFrame } from '@grafana/data';

import type {
  AlertsAnswer,
  CompareAnswer,
  GoldenAnswer,
  HeatmapAnswer,
  KernelEvent,
  PodKernelEventsAnswer,
  PodsAnswer,
  RcaAnswer,
  ServicesAnswer,
  Span,
  TraceDetail,
} from '../../../contract';
import { faultAnnotationsFrame, alertsFrame } from '../../../src/datasource/frames/alerts';
import {
  compareFrames,
  compareNotices,
  formatSelector,
  HOT,
  parseSelector,
  STEADY,
} from '../../../src/datasource/frames/compare';
import { sourceNotices, withNotices } from '../../../src/datasource/frames/frame';
import { GOLDEN_METRICS, goldenFrames } from '../../../src/datasource/frames/golden';
import { heatmapFrame, heatmapNote } from '../../../src/datasource/frames/heatmap';
import { kernelEventsFrame, kernelNotices, tlsHistogramFrame } from '../../../src/datasource/frames/kernel';
import { figureNotices, kernelCell, podsFrame, servicesFrame } from '../../../src/datasource/frames/services';
import {
  rcaFrames,
  slowestTraces,
  spansOfFrame,
  traceFrame,
  traceListFrame,
} from '../../../src/datasource/frames/traces';
import { answerFrames } from '../../../src/datasource/kind';

const col = (f: DataFrame, name: string) => f.fields.find((x) => x.name === name)!;
const EXACT = { origin: 'ingest-counters' as const, exact: true };
const T = [0, 60_000, 120_000];

describe('golden', () => {
  const answer: GoldenAnswer = {
    from: 0,
    to: 120_000,
    stepMs: 60_000,
    sources: [],
    series: [
      {
        metric: 'rps',
        backend: 'vllm',
        labels: { model_name: 'llama' },
        unit: 'x',
        origin: 'prometheus',
        query: 'sum(rate(vllm:e2e_request_latency_seconds_count[1m]))',
        points: T.map((t, i) => [t, i + 1]),
      },
      { metric: 'rps', backend: 'tgi', labels: {}, unit: 'x', origin: 'otel', points: T.map((t) => [t, null]) },
      {
        metric: 'error_rate',
        backend: 'vllm',
        labels: {},
        unit: 'x',
        origin: 'prometheus',
        points: T.map((t) => [t, 0]),
      },
    ],
    missing: [{ metric: 'kv_cache_hit_rate', backend: 'tgi', reason: 'TGI exposes no prefix-cache counters' }],
  };
  const frames = goldenFrames(answer, 'golden');

  test('one frame per series, its part refId the metric, in the metric unit, named by backend and labels', () => {
    const rps = frames.filter((f) => f.refId === 'golden:rps');
    assert.deepEqual(
      rps.map((f) => f.name),
      ['vllm llama', 'tgi (client spans)']
    );
    assert.equal(rps[0].fields[1].config.unit, 'reqps');
    assert.deepEqual(rps[0].fields[1].values, [1, 2, 3]);
    assert.deepEqual(rps[0].fields[1].labels, { backend: 'vllm', model_name: 'llama' });
    assert.equal(rps[0].fields[0].type, 'time');
  });

  test('the PromQL the proxy ran is the executed query of its frame (Inspect, Explore); OTel series have none', () => {
    const rps = frames.filter((f) => f.refId === 'golden:rps');
    assert.equal(rps[0].meta?.executedQueryString, 'sum(rate(vllm:e2e_request_latency_seconds_count[1m]))');
    assert.equal(rps[1].meta?.executedQueryString, undefined);
  });

  test('a flat error rate keeps a readable axis; a metric a backend lacks says why in its own part', () => {
    const err = frames.find((f) => f.refId === 'golden:error_rate')!;
    assert.deepEqual(err.fields[1].config.custom, { axisSoftMin: 0, axisSoftMax: 0.01 });
    const kv = frames.filter((f) => f.refId?.startsWith('golden:kv_cache_hit_rate'));
    assert.deepEqual(
      kv.map((f) => f.refId),
      ['golden:kv_cache_hit_rate', 'golden:kv_cache_hit_rate:combined']
    );
    assert.equal(kv[0].fields.length, 0);
    assert.deepEqual(kv[0].meta?.notices, [{ severity: 'info', text: 'tgi: TGI exposes no prefix-cache counters' }]);
    assert.equal(
      frames.filter((f) => f.refId === 'golden:ttft_p99_s').length,
      1,
      'a metric with no series keeps its part'
    );
    assert.equal(GOLDEN_METRICS.length, 6);
  });
});

describe('heatmap', () => {
  const answer: HeatmapAnswer = {
    from: 0,
    to: 120_000,
    stepMs: 60_000,
    field: 'DCGM_FI_DEV_GPU_UTIL',
    granularity: 'gpu',
    times: T,
    sources: [],
    rows: [
      { gpu: '0', uuid: 'GPU-a', host: 'node-a', pod: 'llm-vllm-0', values: [50, 100, null] },
      { gpu: '1', mig: '1g.10gb', host: 'node-a', values: [120, -3, 7] },
    ],
  };
  const services: ServicesAnswer = {
    from: 0,
    to: 1,
    sources: [],
    notes: [],
    services: [
      {
        service: 'llm-vllm',
        spans: 1,
        errors: 0,
        requests: 1,
        rps: 1,
        errorRate: 0,
        p50Ms: 1,
        p99Ms: 1,
        pods: ['llm-vllm-0'],
        figures: { rate: EXACT, errors: EXACT, latency: EXACT },
      },
    ],
  };

  test('a heatmap-rows frame: time, then one row per GPU named by host and GPU, percent brought to 0..1', () => {
    const f = heatmapFrame(answer, services);
    assert.equal(f.meta?.type, 'heatmap-rows');
    assert.deepEqual(
      f.fields.map((x) => x.name),
      ['time', 'node-a · GPU 0', 'node-a · GPU 1 · MIG 1g.10gb']
    );
    assert.deepEqual(f.fields[1].values, [0.5, 1, null]);
    assert.deepEqual(f.fields[2].values, [1, 0, 0.07]);
    assert.equal(f.fields[1].config.unit, 'percentunit');
    assert.deepEqual(f.fields[1].labels, {
      gpu: '0',
      host: 'node-a',
      pod: 'llm-vllm-0',
      uuid: 'GPU-a',
      field: 'DCGM_FI_DEV_GPU_UTIL',
    });
  });

  test("a row links to its pod's evidence when its service is known, else to the services, keeping the page's keys", () => {
    const f = heatmapFrame(answer, services);
    assert.match(
      f.fields[1].config.links![0].url,
      /^\/a\/hopscope-rca-app\/services\/llm-vllm\/pods\/llm-vllm-0\$\{__url\.params:include:from,to,/
    );
    assert.match(f.fields[2].config.links![0].url, /^\/a\/hopscope-rca-app\/services\$\{__url/);
    assert.match(
      heatmapFrame(answer).fields[1].config.links![0].url,
      /^\/a\/hopscope-rca-app\/services\$\{__url/,
      'services unknown'
    );
  });

  test('the note says per GPU, not per SM, and names the DCGM field', () => {
    assert.match(heatmapNote(answer).text, /per-SM/);
    assert.match(heatmapNote(answer).text, /DCGM_FI_DEV_GPU_UTIL/);
  });
});

describe('services, pods, kernel events', () => {
  const services: ServicesAnswer = {
    from: 0,
    to: 1,
    sources: [],
    notes: ['a window shorter than the rate rule'],
    services: [
      {
        service: 'llm vllm',
        spans: 10,
        errors: 2,
        requests: 40,
        rps: 1.5,
        errorRate: 0.05,
        p50Ms: 100,
        p99Ms: 1900,
        pods: ['a', 'b'],
        figures: { rate: EXACT, errors: EXACT, latency: { origin: 'sampled-traces', exact: false, note: '12 traces' } },
      },
    ],
  };
  test('services: names link through a hidden path field; latencies in ms; kernel signals only when asked', () => {
    const f = servicesFrame(services);
    assert.deepEqual(col(f, 'servicePath').values, ['/a/hopscope-rca-app/services/llm%20vllm']);
    assert.equal(col(f, 'servicePath').config.custom.hidden, true);
    assert.match(f.fields[0].config.links![0].url, /^\$\{__data\.fields\.servicePath:raw\}\$\{__url\.params:include:/);
    assert.equal(col(f, 'p99').config.unit, 'ms');
    assert.equal(
      f.fields.some((x) => x.name === 'kernel'),
      false
    );
    assert.deepEqual(
      col(servicesFrame(services, { 'llm vllm': { tls_handshake: 3, http_traceparent: 9 } }), 'kernel').values,
      ['TLS 3']
    );
    assert.deepEqual(col(servicesFrame(services, {}), 'kernel').values, ['unavailable']);
    assert.equal(col(f, 'errorRate').config.unit, 'percentunit');
  });

  test('what the figures are: the answer caveats, and each estimated figure with the reason, once', () => {
    assert.deepEqual(
      figureNotices(services, [...services.services, ...services.services]).map((n) => n.text),
      ['a window shorter than the rate rule', 'P50 and P99 are estimated from sampled traces: 12 traces.']
    );
  });

  test('pods: each pod links to its evidence page under its service', () => {
    const pods: PodsAnswer = {
      service: 'rag',
      from: 0,
      to: 1,
      sources: [],
      notes: [],
      pods: [
        {
          pod: 'rag-0',
          spans: 3,
          errors: 0,
          requests: 3,
          rps: 1,
          errorRate: 0,
          p50Ms: 1,
          p99Ms: 2,
          kernelEvents: { tcp_retransmit: 2, gpu_alloc_fail: 1 },
        },
      ],
    };
    const f = podsFrame(pods);
    assert.deepEqual(col(f, 'podPath').values, ['/a/hopscope-rca-app/services/rag/pods/rag-0']);
    assert.deepEqual(col(f, 'kernel').values, ['retrans 2 · GPU alloc fail 1']);
    assert.deepEqual(col(f, 'kernelEvents').values, [3]);
    assert.equal(kernelCell({}), 'none');
  });

  const ev = (ts: number, type: KernelEvent['type'], durationMs?: number, traceId?: string): KernelEvent => ({
    ts,
    type,
    pid: 7,
    comm: 'python',
    pod: 'rag-0',
    durationMs,
    traceId,
    detail: { dst: '10.0.0.7:443', nested: { x: 1 } },
    mode: 'live',
  });
  test('kernel events: oldest first, labelled from the catalogue, trace ids linking to their root cause', () => {
    const f = kernelEventsFrame([ev(2, 'tls_handshake', 600, 'ab'.repeat(16)), ev(1, 'tcp_retransmit')], 'events');
    assert.deepEqual(col(f, 'time').values, [1, 2]);
    assert.deepEqual(col(f, 'signal').values, ['TCP retransmits', 'TLS handshakes']);
    assert.deepEqual(col(f, 'type').values, ['tcp_retransmit', 'tls_handshake']);
    assert.deepEqual(col(f, 'detail').values, ['dst=10.0.0.7:443', 'dst=10.0.0.7:443']);
    assert.deepEqual(col(f, 'tracePath').values, ['', `/a/hopscope-rca-app/traces/${'ab'.repeat(16)}`]);
    assert.equal(col(f, 'duration').config.unit, 'ms');
  });

  test('TLS handshakes as a histogram frame on log bins; none gives an empty histogram', () => {
    const events = [5, 10, 20, 40, 800].map((d, i) => ev(i, 'tls_handshake', d));
    const h = tlsHistogramFrame(events, 'events', 4);
    assert.equal(h.refId, 'events:tls');
    assert.deepEqual(
      h.fields.map((x) => x.name),
      ['xMin', 'xMax', 'count']
    );
    assert.equal(col(h, 'xMin').values[0], 5);
    assert.equal(col(h, 'xMax').values[3], 800);
    assert.equal(
      (col(h, 'count').values as number[]).reduce((a, b) => a + b, 0),
      5
    );
    assert.equal(tlsHistogramFrame([ev(1, 'tcp_retransmit')], 'e').length, 0);
  });

  test('notices: replayed data and truncation are said, with a one-line summary', () => {
    const answer: PodKernelEventsAnswer = {
      pod: 'rag-0',
      from: 0,
      to: 1,
      events: [{ ...ev(1, 'tls_handshake', 10), mode: 'replay' }],
      counts: {},
      dropped: 4,
      truncated: true,
      sources: [],
    };
    const texts = kernelNotices(answer).map((n) => n.text);
    assert.ok(texts.includes('Replayed data, not live.'));
    assert.ok(texts.includes('Truncated: 4 events dropped by the exporter.'));
    assert.match(texts.at(-1)!, /TLS P50 10 ms/);
  });
});

describe('traces and root cause', () => {
  const span = (
    id: string,
    parent: string | undefined,
    service: string,
    s: number,
    e: number,
    status: Span['status'] = 'ok'
  ): Span => ({
    traceId: 'a'.repeat(32),
    spanId: id,
    parentSpanId: parent,
    name: `${service} op`,
    service,
    kind: 'server',
    startMs: s,
    endMs: e,
    status,
    attributes: { 'http.status_code': 200 },
    resource: { 'k8s.pod.name': `${service}-0` },
  });
  const detail: TraceDetail = {
    traceId: 'a'.repeat(32),
    spans: [span('g', undefined, 'gateway', 0, 1000), span('r', 'g', 'rag', 100.5, 950, 'timeout')],
  };

  test("a trace is Grafana's trace frame, and reads back into the same spans", () => {
    const f = traceFrame(detail);
    assert.equal(f.meta?.preferredVisualisationType, 'trace');
    assert.deepEqual(col(f, 'duration').values, [1000, 849.5]);
    assert.deepEqual(col(f, 'statusCode').values, [1, 2]);
    assert.deepEqual(col(f, 'pod').values, ['gateway-0', 'rag-0']);
    assert.deepEqual(spansOfFrame(f), JSON.parse(JSON.stringify(detail.spans)));
  });

  test('a list: slowest first, errors first among equals, each id a link', () => {
    const list = [
      { traceId: '1', rootService: 'g', rootName: 'POST', startMs: 0, durationMs: 10, status: 'ok' as const },
      { traceId: '2', rootService: 'g', rootName: 'POST', startMs: 0, durationMs: 30, status: 'ok' as const },
      { traceId: '3', rootService: 'g', rootName: 'POST', startMs: 0, durationMs: 30, status: 'error' as const },
    ];
    assert.deepEqual(
      slowestTraces(list, 2).map((t) => t.traceId),
      ['3', '2']
    );
    assert.deepEqual(col(traceListFrame(list), 'tracePath').values, [
      '/a/hopscope-rca-app/traces/1',
      '/a/hopscope-rca-app/traces/2',
      '/a/hopscope-rca-app/traces/3',
    ]);
  });

  test('root cause: ranked candidates with catalogue-labelled evidence, and the engine critical path as its own part', () => {
    const answer: RcaAnswer = {
      traceId: 'a'.repeat(32),
      tookMs: 2.5,
      missing: ['no kernel events for rag-0'],
      candidates: [
        {
          rank: 1,
          service: 'rag',
          pod: 'rag-0',
          spanId: 'r',
          operation: 'retrieve',
          score: 0.91,
          selfMs: 700,
          baselineMs: 90,
          evidence: [
            { kind: 'self_time', summary: '700 ms vs 90 ms' },
            { kind: 'kernel:tls_handshake', summary: '2 slow handshakes' },
          ],
        },
      ],
      criticalPath: [
        {
          spanId: 'g',
          depth: 0,
          service: 'gateway',
          pod: 'gateway-0',
          operation: 'POST',
          kind: 'server',
          status: 'ok',
          startMs: 0,
          endMs: 1000,
          durationMs: 1000,
          selfMs: 150,
          onPathMs: 150,
        },
        {
          spanId: 'r',
          parentSpanId: 'g',
          depth: 1,
          service: 'rag',
          pod: 'rag-0',
          operation: 'retrieve',
          kind: 'server',
          status: 'timeout',
          startMs: 100,
          endMs: 950,
          durationMs: 850,
          selfMs: 850,
          onPathMs: 850,
          skewCorrectedMs: 4,
        },
      ],
    };
    const [cands, path] = rcaFrames(answer, 'rca');
    assert.equal(cands.refId, 'rca');
    assert.deepEqual(col(cands, 'evidence').values, ['Own time: 700 ms vs 90 ms\nTLS handshakes: 2 slow handshakes']);
    assert.deepEqual(col(cands, 'podPath').values, ['/a/hopscope-rca-app/services/rag/pods/rag-0']);
    assert.match(col(cands, 'operation').config.links![0].url, /span=\$\{__data\.fields\.spanId:raw\}$/);
    assert.equal(path.refId, 'rca:criticalPath');
    assert.deepEqual(col(path, 'spanId').values, ['g', 'r']);
    assert.deepEqual(col(path, 'skewCorrectedMs').values, [null, 4]);
  });
});

describe('compare, alerts, annotations', () => {
  const side = (backend: 'vllm' | 'tgi', p99: Array<number | null>, hot: Array<[number, number]>) => ({
    selector: { backend },
    count: 10,
    p50Ms: 100,
    p99Ms: 400,
    ttftP50Ms: null,
    ttftP99Ms: null,
    histogram: [1, 2, 3],
    p50Series: [100, 100, 100],
    p99Series: p99,
    hotZones: hot.map(([startMs, endMs]) => ({ startMs, endMs, ratio: 4, p50Ms: 100, p99Ms: 400 })),
    origin: 'sampled-traces' as const,
    exact: backend === 'vllm',
    note: backend === 'tgi' ? '1 in 10 traces kept' : undefined,
    estimatedRequests: 10,
  });
  const answer: CompareAnswer = {
    from: 0,
    to: 180_000,
    bucketEdgesMs: [0, 10, 100, 1000],
    times: T,
    bucketMs: 60_000,
    sources: [],
    a: side('vllm', [400, 300, 200], [[60_000, 120_000]]),
    b: { ...side('tgi', [null, 300, 200], []), p99Ms: 600 },
  };

  test('histogram on the shared bins, stats with B vs A, hot zones as a state per bucket', () => {
    const [hist, stats, latency, hot] = compareFrames(answer, 'compare');
    assert.deepEqual(
      hist.fields.map((f) => f.name),
      ['xMin', 'xMax', 'A: vllm', 'B: tgi']
    );
    assert.deepEqual(col(hist, 'xMax').values, [10, 100, 1000]);
    assert.deepEqual(col(stats, 'change').values[3], 0.5);
    assert.deepEqual(compareNotices(answer), [
      { severity: 'info', text: 'B: estimated from sampled traces — 1 in 10 traces kept' },
    ]);
    assert.equal(latency.refId, 'compare:latency');
    assert.deepEqual(col(hot, 'A: vllm').values, [STEADY, HOT, STEADY]);
    assert.deepEqual(col(hot, 'B: tgi').values, [null, STEADY, STEADY]);
  });

  test('selectors round-trip in the proxy syntax', () => {
    assert.equal(formatSelector({ backend: 'tgi', model: 'mistral-7b=v2' }), 'backend=tgi,model=mistral-7b=v2');
    assert.deepEqual(parseSelector('backend=vllm, bogus=1,model='), { backend: 'vllm' });
  });

  test('alerts link to the drill-down the proxy anchored them to; faults are annotation frames', () => {
    const alerts: AlertsAnswer = {
      evaluatedAt: 5,
      sources: [],
      alerts: [
        {
          ruleId: 'tls',
          name: 'Slow TLS',
          state: 'firing',
          severity: 'critical',
          startsAt: 1,
          summary: 's',
          link: '/a/hopscope-rca-app/services/rag/pods/rag-0?from=1&to=2',
        },
      ],
    };
    const f = alertsFrame(alerts);
    assert.equal(col(f, 'name').config.links![0].url, '${__data.fields.link:raw}');
    assert.deepEqual(col(f, 'endsAt').values, [null]);
    const a = faultAnnotationsFrame({
      sources: [],
      annotations: [{ id: '1', target: 'rag', kind: 'latency', magnitude: 400, startMs: 10, endMs: 20, active: false }],
    });
    assert.equal(a.meta?.dataTopic, 'annotations');
    assert.deepEqual(col(a, 'title').values, ['fault latency on rag']);
    assert.deepEqual(col(a, 'timeEnd').values, [20]);
  });
});

describe('answers into results', () => {
  const ctx = { from: 0, to: 1, refId: 'A' };
  test("a failed call is the panel's error, with the proxy's code", async () => {
    const r = await answerFrames(
      ctx,
      Promise.resolve({
        ok: false as const,
        error: { kind: 'http' as const, status: 502, code: 'source_unavailable', message: 'Prometheus did not answer' },
      }),
      () => []
    );
    assert.deepEqual(r, {
      error: { refId: 'A', message: 'Prometheus did not answer (source_unavailable)', status: 502 },
    });
  });

  test('failed sources are warnings on the first frame; with no data, an empty frame carries them', async () => {
    const data = {
      sources: [
        { source: 'prometheus', ok: false, error: 'connect ECONNREFUSED' },
        { source: 'tempo', ok: true },
      ],
    };
    const r = await answerFrames(ctx, Promise.resolve({ ok: true as const, data }), () => []);
    assert.equal(r.frames!.length, 1);
    assert.equal(r.frames![0].fields.length, 0);
    assert.deepEqual(r.frames![0].meta?.notices, [
      { severity: 'warning', text: 'prometheus: connect ECONNREFUSED — showing what the other sources returned' },
    ]);
    assert.deepEqual(sourceNotices([{ source: 'x', ok: true }]), []);
    // Several parts: each part's first frame carries them (each panel shows its part's).
    const parts = withNotices(
      [
        { refId: 'g:a', fields: [], length: 0 },
        { refId: 'g:a', fields: [], length: 0 },
        { refId: 'g:b', fields: [], length: 0 },
      ],
      [{ severity: 'warning', text: 'x' }]
    );
    assert.deepEqual(
      parts.map((f) => f.meta?.notices?.length ?? 0),
      [1, 0, 1]
    );
    assert.equal(withNotices([], []).length, 0);
  });
});

test('golden: each metric has its series combined into one part (sum, max or mean per instant) for its stat', () => {
  const point = (vs: Array<number | null>) => [0, 60_000].map((t, i) => [t, vs[i]] as [number, number | null]);
  const answer: GoldenAnswer = {
    from: 0,
    to: 60_000,
    stepMs: 60_000,
    sources: [],
    missing: [],
    series: [
      {
        metric: 'rps',
        backend: 'vllm',
        labels: {},
        unit: 'x',
        origin: 'prometheus',
        query: 'q1',
        points: point([1, 2]),
      },
      {
        metric: 'rps',
        backend: 'tgi',
        labels: {},
        unit: 'x',
        origin: 'prometheus',
        query: 'q2',
        points: point([3, null]),
      },
      { metric: 'e2e_p99_s', backend: 'vllm', labels: {}, unit: 'x', origin: 'prometheus', points: point([1, 5]) },
      { metric: 'e2e_p99_s', backend: 'tgi', labels: {}, unit: 'x', origin: 'prometheus', points: point([2, 4]) },
    ],
  };
  const frames = goldenFrames(answer, 'g');
  const rps = frames.find((f) => f.refId === 'g:rps:combined')!;
  assert.deepEqual(rps.fields[1].values, [4, 2]);
  assert.deepEqual(rps.meta?.custom?.queries, ['q1', 'q2']);
  assert.deepEqual(frames.find((f) => f.refId === 'g:e2e_p99_s:combined')!.fields[1].values, [2, 5]);
  assert.equal(frames.find((f) => f.refId === 'g:ttft_p99_s:combined')!.fields.length, 0, 'no series: an empty part');
});
