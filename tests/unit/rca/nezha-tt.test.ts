/**
 * TrainTicket (Nezha, a held-out system: see tests/fixtures/rca/nezha-tt/README.md): its CSV says no span kinds, so
 * the window RCA must find the faulted service from the tree alone, as it does with the kinds the OpenTelemetry Java
 * agent gave those spans.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RcaAnswer, Span } from '../../../contract';
import { buildBaseline, rankWindow } from '../../../backend-proxy/src/rca';
import {
  findNezhaRepo,
  isLatencyFault,
  loadTrainTicketCases,
  nezhaSampleSource,
  trainTicketFaultFree,
  trainTicketWindow,
  withJavaAgentKinds,
} from '../../support/rca/nezha-tt';

const src = nezhaSampleSource();
const DAY = ['2023-01-30'];
const services = (a: RcaAnswer): string[] => [...new Set(a.candidates.map((c) => c.service))];

test("TrainTicket sample: cases, kind-less rows, the Java agent's kinds put back", () => {
  const cases = loadTrainTicketCases(src, DAY);
  assert.deepEqual(
    cases.map((c) => [c.injectType, c.rootCauseService, c.minutes.join(' ')]),
    [
      ['cpu_contention', 'ts-food-service', '12_44 12_45 12_46'],
      ['network_delay', 'ts-route-service', '13_44 13_45 13_46'],
    ]
  );
  assert.equal(cases[0].injectMs, Date.UTC(2023, 0, 30, 12, 44, 36));
  assert.ok(cases.every(isLatencyFault));
  const w = trainTicketWindow(src, cases[1]);
  assert.equal(w.length, 77);
  const tr = w.find((t) => t.length > 20)!;
  for (const s of tr) Span.parse(s);
  assert.ok(tr.every((s) => s.kind === 'unspecified'));
  const k = withJavaAgentKinds(tr);
  assert.ok(k.some((s) => s.kind === 'client' && /^HTTP [A-Z]+$/.test(s.name)));
  assert.equal(k.find((s) => s.parentSpanId === undefined)!.kind, 'server');
  assert.ok(
    tr.every((s) => s.kind === 'unspecified'),
    'the input is not changed'
  );
});

for (const [i, what] of [
  [0, 'CPU contention'],
  [1, 'network delay'],
] as const) {
  test(`TrainTicket sample, ${what}: kind-less spans rank the faulted service first, as the Java agent's kinds do`, () => {
    const c = loadTrainTicketCases(src, DAY)[i];
    const traces = trainTicketWindow(src, c);
    const healthy = trainTicketFaultFree(src, c.day);
    const kindless = rankWindow({ traces, baseline: buildBaseline(healthy) });
    const kinds = rankWindow({
      traces: traces.map(withJavaAgentKinds),
      baseline: buildBaseline(healthy.map(withJavaAgentKinds)),
    });
    assert.equal(services(kinds)[0], c.rootCauseService, services(kinds).join(','));
    assert.equal(services(kindless)[0], c.rootCauseService, services(kindless).join(','));
    assert.deepEqual(services(kindless).slice(0, 3), services(kinds).slice(0, 3));
    assert.ok(kindless.missing.some((m) => /calls were inferred from the tree/.test(m)));
    assert.ok(kinds.missing.every((m) => !/inferred from the tree/.test(m)));
  });
}

test('TrainTicket full benchmark: the snapshot has the 45 labelled cases', (t) => {
  const { source, why } = findNezhaRepo();
  if (!source) return t.skip(why);
  const cases = loadTrainTicketCases(source);
  assert.equal(cases.length, 45);
  assert.equal(cases.filter(isLatencyFault).length, 21);
});
