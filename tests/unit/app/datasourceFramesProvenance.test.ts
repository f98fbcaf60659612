/**
 * What the proxy now says about its own answers, as the panels get it: where each service/pod figure comes from (a
 * `Source` column, estimates said as such), errors over requests, compare sides counted or estimated, the alert
 * history and who evaluates, the root cause's kernel evidence and missing lines, a saved answer. Every answer is the
 * JSON the proxy sends, parsed with the contract's schema first (as the API client does), so a shape change breaks here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataFrame } from '@grafana/data';

import {
  AlertsAnswer,
  CompareAnswer,
  type FigureOrigin,
  PodsAnswer,
  RcaAnswer,
  SavedRcaAnswer,
  ServicesAnswer,
} from '../../../contract';
import { alertHistoryFrame, alertsFrame, alertsNotices, evaluatorText } from '../../../src/datasource/frames/alerts';
import { compareFrames, compareNotices, sidesProvenance } from '../../../src/datasource/frames/compare';
import {
  estimatesCell,
  figureDescription,
  figureNotices,
  originsCell,
  podsFrame,
  servicesFrame,
} from '../../../src/datasource/frames/services';
import { kernelEvidenceText, rcaAboutOfFrame, rcaFrames, rcaNotices } from '../../../src/datasource/frames/traces';
import { readRulesFile, validateRuleText, EXAMPLE_RULE } from '../../../src/transforms/alertRules';

const col = (f: DataFrame, name: string) => {
  const x = f.fields.find((y) => y.name === name);
  assert.ok(x, `field ${name}`);
  return x;
};

const counted = (origin: FigureOrigin, note: string) => ({ origin, exact: true, note });
const estimated = (origin: FigureOrigin, note: string) => ({ origin, exact: false, note });

describe('services and pods: where each figure comes from', () => {
  const services = ServicesAnswer.parse({
    from: 0,
    to: 600_000,
    sources: [{ source: 'prometheus', ok: true, latencyMs: 4 }],
    notes: [
      'no span metrics (traces_spanmetrics_calls_total) in Prometheus for this range: figures without service metrics come from a sample of 40 trace(s)',
    ],
    services: [
      {
        service: 'rag',
        spans: 900,
        errors: 3,
        requests: 120,
        rps: 0.2,
        errorRate: 0.025,
        p50Ms: 80,
        p99Ms: 1900,
        pods: ['rag-0', 'rag-1'],
        figures: {
          rate: counted(
            'service-metrics',
            "the services' own request counters (hopscope_requests_total), rate over 10m"
          ),
          errors: counted('service-metrics', 'answers with a 5xx code'),
          latency: estimated(
            'service-metrics',
            'interpolated within the buckets of hopscope_request_duration_seconds over 10m'
          ),
        },
      },
      {
        service: 'agent',
        spans: 44,
        errors: 1,
        requests: 11,
        rps: 0.02,
        errorRate: 1 / 11,
        p50Ms: 300,
        p99Ms: 900,
        pods: ['agent-0'],
        figures: {
          rate: estimated('sampled-traces', 'a lower bound: from 40 trace(s)'),
          errors: estimated('sampled-traces', 'a lower bound: from 40 trace(s)'),
          latency: estimated('sampled-traces', 'from a sample of 40 trace(s)'),
        },
      },
    ],
    // The proxy may add fields: the schema keeps what the app reads.
    extra: true,
  });
  const f = servicesFrame(services);

  test('requests, errors and errors over requests; spans (every kind received) are not a column', () => {
    assert.deepEqual(col(f, 'requests').values, [120, 11]);
    assert.deepEqual(col(f, 'errors').values, [3, 1]);
    assert.deepEqual(col(f, 'errorRate').values, [3 / 120, 1 / 11]);
    assert.equal(col(f, 'errorRate').config.unit, 'percentunit');
    assert.equal(
      f.fields.some((x) => x.name === 'spans'),
      false
    );
  });

  test('Source and Estimated columns: the origins, and which figures are estimates (in a warning colour)', () => {
    assert.deepEqual(col(f, 'source').values, ['service metrics', 'sampled traces']);
    assert.deepEqual(col(f, 'estimated').values, ['latency', 'all']);
    assert.equal(col(f, 'estimated').config.displayName, 'Estimated');
    assert.equal(col(f, 'estimated').config.custom.cellOptions.type, 'color-text');
    const mixed = {
      rate: counted('service-metrics', ''),
      errors: estimated('sampled-traces', ''),
      latency: estimated('sampled-traces', ''),
    } as const;
    assert.equal(originsCell(mixed), 'service metrics + sampled traces');
    assert.equal(estimatesCell(mixed), 'errors, latency');
    assert.equal(estimatesCell({ ...mixed, errors: mixed.rate, latency: mixed.rate }), 'none');
  });

  test('each figure column is described with its origin, estimates first, with the proxy note', () => {
    assert.match(
      String(col(f, 'p99').config.description),
      /^Estimated from service metrics: interpolated within the buckets/
    );
    assert.match(
      String(col(f, 'requests').config.description),
      /^Estimated from sampled traces: a lower bound: from 40 trace\(s\)\. Counted from service metrics/
    );
    assert.equal(figureDescription('rate', []), '');
  });

  test('notices: the answer notes, then each estimated figure once', () => {
    const texts = figureNotices(services, services.services).map((n) => n.text);
    assert.equal(texts[0], services.notes[0]);
    assert.ok(
      texts.includes(
        'P50 and P99 are estimated from service metrics: interpolated within the buckets of hopscope_request_duration_seconds over 10m.'
      )
    );
    assert.ok(texts.includes('Requests and RPS are estimated from sampled traces: a lower bound: from 40 trace(s).'));
    assert.equal(new Set(texts).size, texts.length);
  });

  test('pods: the same columns; a pod only the kernel probes saw says so', () => {
    const pods = PodsAnswer.parse({
      service: 'rag',
      from: 0,
      to: 1,
      sources: [],
      notes: [],
      pods: [
        {
          pod: 'rag-0',
          node: 'n1',
          spans: 400,
          errors: 0,
          requests: 60,
          rps: 0.1,
          errorRate: 0,
          p50Ms: 70,
          p99Ms: 200,
          kernelEvents: { tls_handshake: 4 },
          figures: {
            rate: counted('ingest-counters', 'counted at ingest'),
            errors: counted('ingest-counters', 'x'),
            latency: estimated('ingest-counters', 'histogram'),
          },
        },
        {
          pod: 'rag-9',
          spans: 0,
          errors: 0,
          requests: 0,
          rps: 0,
          errorRate: null,
          p50Ms: null,
          p99Ms: null,
          kernelEvents: { tcp_retransmit: 2 },
        },
      ],
    });
    const p = podsFrame(pods);
    assert.deepEqual(col(p, 'source').values, ['ingest counters', 'kernel probes only']);
    assert.deepEqual(col(p, 'estimated').values, ['latency', null]);
    assert.deepEqual(col(p, 'errorRate').values, [0, null]);
  });
});

describe('compare: each side counted or estimated', () => {
  const side = (backend: string, exact: boolean) => ({
    selector: { backend },
    count: 40,
    p50Ms: 100,
    p99Ms: 400,
    ttftP50Ms: 20,
    ttftP99Ms: 80,
    histogram: [10, 30],
    p50Series: [100],
    p99Series: [400],
    hotZones: [],
    origin: 'sampled-traces',
    exact,
    ...(exact ? {} : { note: 'the spans carry sampling rates (1 in 4 kept)' }),
    estimatedRequests: exact ? 40 : 160,
  });
  const answer = CompareAnswer.parse({
    from: 0,
    to: 60_000,
    bucketEdgesMs: [0, 100, 1000],
    times: [0],
    bucketMs: 60_000,
    sources: [],
    a: side('vllm', true),
    b: side('tgi', false),
  });

  test('the stats say spans kept vs requests estimated, with a Source column per row', () => {
    const stats = compareFrames(answer, 'compare')[1];
    assert.deepEqual(col(stats, 'stat').values.slice(0, 2), ['Server spans (kept)', 'Requests (estimated)']);
    assert.deepEqual(col(stats, 'b').values.slice(0, 2), [40, 160]);
    assert.equal(col(stats, 'source').values[1], 'A counted · B estimated from sampled traces');
    assert.equal(
      col(stats, 'source').values[3],
      col(stats, 'source').values[1],
      'the percentiles share the side’s provenance'
    );
    assert.deepEqual(
      [col(stats, 'a').config.displayName, col(stats, 'b').config.displayName],
      ['A: vllm', 'B: tgi (estimated)']
    );
    assert.equal(
      col(stats, 'b').config.description,
      'estimated from sampled traces: the spans carry sampling rates (1 in 4 kept)'
    );
    assert.deepEqual(compareNotices(answer), [
      { severity: 'info', text: 'B: estimated from sampled traces — the spans carry sampling rates (1 in 4 kept)' },
    ]);
  });

  test('both sides counted: plain "Requests", said once', () => {
    const both = CompareAnswer.parse({ ...answer, b: side('tgi', true) });
    assert.equal(col(compareFrames(both, 'c')[1], 'stat').values[1], 'Requests');
    assert.equal(sidesProvenance(both), 'both counted');
  });
});

describe('alerts: history and the evaluator', () => {
  const alert = (state: string, atMs: number) => ({
    ruleId: 'tls',
    name: 'Slow TLS',
    state,
    severity: 'critical',
    startsAt: 1000,
    ...(state === 'resolved' ? { endsAt: atMs } : {}),
    pod: 'rag-0',
    summary: '3 handshakes > 500 ms',
    link: '/a/hopscope-rca-app/services/rag/pods/rag-0?from=0&to=2000',
  });
  const answer = AlertsAnswer.parse({
    alerts: [alert('resolved', 5000)],
    evaluatedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    sources: [],
    history: [
      { id: 2, atMs: 5000, alert: alert('resolved', 5000) },
      { id: 1, atMs: 1000, alert: alert('firing', 1000) },
    ],
    evaluator: { holder: 'proxy-a', self: false },
    rulesVersion: 7,
  });

  test('the transitions of the range as their own part, each linking to its drill-down', () => {
    const h = alertHistoryFrame(answer, 'alerts');
    assert.equal(h.refId, 'alerts:history');
    assert.deepEqual(col(h, 'at').values, [5000, 1000]);
    assert.deepEqual(col(h, 'state').values, ['resolved', 'firing']);
    assert.equal(col(h, 'name').config.links![0].url, '${__data.fields.link:raw}');
    assert.equal(col(h, 'link').config.custom.hidden, true);
    assert.equal(alertHistoryFrame(AlertsAnswer.parse({ alerts: [], evaluatedAt: null, sources: [] }), 'a').length, 0);
  });

  test('who evaluates: another proxy, this one, or nobody (a warning)', () => {
    assert.equal(
      evaluatorText(answer),
      'Evaluated by another proxy (proxy-a); this one reads the shared database, last at 2026-01-02 03:04:05 UTC.'
    );
    assert.equal(
      evaluatorText({ evaluatedAt: null, evaluator: { holder: 'me', self: true } }),
      'Evaluated by this proxy (me).'
    );
    const nobody = AlertsAnswer.parse({ ...answer, evaluator: { holder: null, self: false } });
    assert.deepEqual(
      alertsNotices(nobody).map((n) => n.severity),
      ['warning']
    );
    assert.match(alertsNotices(nobody)[0].text, /^No proxy holds the evaluator lease/);
    assert.deepEqual(alertsFrame(answer).meta?.custom?.rulesVersion, 7);
    assert.equal(evaluatorText({ evaluatedAt: null }), undefined);
  });
});

describe('root cause: kernel evidence, missing lines, saved answers', () => {
  const live = RcaAnswer.parse({
    traceId: 'a'.repeat(32),
    tookMs: 3.2,
    missing: [
      "kernel events: the exporters' rings no longer reach back; 4 notable event(s) kept in the database were used for this window",
      'kernel evidence of node-1 is missing from 2026-01-01T00:00:00.000Z to 2026-01-01T00:01:00.000Z: the proxy was down (12 event(s))',
    ],
    candidates: [
      {
        rank: 1,
        service: 'rag',
        pod: 'rag-0',
        score: 0.8,
        evidence: [
          { kind: 'inferred_call', summary: '2 calls inferred from the tree', calls: 2 },
          { kind: 'kernel:tls_handshake', summary: '3 slow handshakes' },
        ],
      },
      { rank: 2, service: 'llm', pod: 'llm-0', score: 0.2, evidence: [{ kind: 'self_time', summary: '+20 ms' }] },
    ],
    criticalPath: [],
    kernelEvidence: {
      source: 'kept',
      ringsFromMs: Date.UTC(2026, 0, 1, 0, 5),
      retainedFromMs: 0,
      gaps: [{ node: 'node-1', fromMs: 0, toMs: 60_000, reason: 'proxy_down', missed: 12 }],
    },
  });

  test('where the kernel evidence came from, said plainly (and a warning unless it is every event)', () => {
    assert.match(
      kernelEvidenceText(live.kernelEvidence)!,
      /^Kernel evidence from the notable events the proxy kept in its database: the exporters' rings no longer reach back to this trace \(their oldest event: 2026-01-01 00:05:00 UTC\), so routine events/
    );
    assert.match(kernelEvidenceText({ source: 'rings' })!, /^Kernel evidence from the exporters' rings/);
    assert.match(kernelEvidenceText({ source: 'rings+kept' })!, /rings, and from the notable events the proxy kept/);
    assert.match(
      kernelEvidenceText({ source: 'none', retainedFromMs: Date.UTC(2026, 0, 1) })!,
      /^No kernel evidence: .*kept from 2026-01-01 00:00:00 UTC/
    );
    assert.equal(kernelEvidenceText(undefined), undefined);
    const n = rcaNotices(live);
    assert.equal(n[1].severity, 'warning');
    assert.equal(n.filter((x) => x.text.startsWith('Missing evidence: ')).length, 2);
    assert.equal(rcaNotices(RcaAnswer.parse({ ...live, kernelEvidence: { source: 'rings' } }))[1].severity, 'info');
  });

  test("the answer's own facts travel on the candidates' frame: kernel evidence, missing lines, inferred calls", () => {
    const about = rcaAboutOfFrame(rcaFrames(live, 'rca')[0])!;
    assert.equal(about.kernelEvidence?.source, 'kept');
    assert.deepEqual(about.missing, live.missing);
    assert.equal(about.inferredCalls, 1);
    assert.equal(about.savedAnswer, undefined);
    assert.match(
      String(col(rcaFrames(live, 'rca')[0], 'evidence').values[0]),
      /^Inferred call: 2 calls inferred from the tree\nTLS handshakes: 3 slow handshakes$/
    );
  });

  test('a saved answer: the ranking as saved, and which answer it is', () => {
    const saved = SavedRcaAnswer.parse({
      id: 'r1',
      traceId: live.traceId,
      fromMs: 0,
      toMs: 10,
      title: `Trace ${live.traceId}`,
      createdMs: 1234,
      answer: { ...live, sources: [], partial: false },
    });
    const { answer, ...meta } = saved;
    const [cands] = rcaFrames(RcaAnswer.parse(answer), 'rca', meta);
    assert.deepEqual(col(cands, 'service').values, ['rag', 'llm']);
    assert.deepEqual(rcaAboutOfFrame(cands)?.savedAnswer, {
      id: 'r1',
      traceId: live.traceId,
      fromMs: 0,
      toMs: 10,
      title: `Trace ${live.traceId}`,
      createdMs: 1234,
    });
  });
});

describe('alert rules: mistakes written by the contract formatter, files to import', () => {
  test('each mistake is one `path: message` line', () => {
    const bad = validateRuleText(
      JSON.stringify({ ...EXAMPLE_RULE, id: 'has space', conditions: [{ kind: 'kernel', type: 'tls_handshake' }] })
    );
    assert.equal(bad.ok, false);
    const lines = !bad.ok ? bad.problems.map((p) => p.text) : [];
    assert.ok(
      lines.some((l) => /^id: The id must be/.test(l)),
      lines.join('\n')
    );
    assert.ok(!bad.ok && bad.problems.every((p) => p.text === `${p.path}: ${p.message}`));
    const notJson = validateRuleText('{');
    assert.match(!notJson.ok ? notJson.problems[0].text : '', /^\(rule\): Not valid JSON/);
  });

  test('a rules file: the export format or {rules}; anything else says why', () => {
    const exported = {
      format: 'hopscope-alert-rules/v1',
      version: 3,
      exportedAt: '2026-01-01T00:00:00Z',
      rules: [EXAMPLE_RULE],
    };
    assert.deepEqual(readRulesFile(JSON.stringify(exported)), { ok: true, rules: [EXAMPLE_RULE] });
    assert.deepEqual(readRulesFile(JSON.stringify({ rules: [] })), { ok: true, rules: [] });
    const wrong = readRulesFile(JSON.stringify({ format: 'other', rules: [{ id: 'x' }] }));
    assert.equal(wrong.ok, false);
    assert.match(!wrong.ok ? wrong.message : '', /^Not a rules file: format: .*; rules\[0\]\.name/);
    assert.match((readRulesFile('nope') as { message: string }).message, /^Not a JSON file/);
  });
});
