import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Span } from '../../../contract';
import { buildBaseline, rankWindow } from '../../../backend-proxy/src/rca';
import { loadNezhaCases, nezhaFaultFree, nezhaWindow, parseNezhaCsv, serviceOfPod } from '../../support/rca/nezha';
import { fixture } from '../../support/fixtures';

const DIR = fixture('rca', 'nezha-ob');

test('nezha loader: cases, services from pod names, client/server kinds inferred from the rows', () => {
  const cases = loadNezhaCases(DIR);
  assert.equal(cases.length, 8);
  assert.equal(cases[0].injectMs, Date.UTC(2022, 7, 22, 3, 53, 54));
  assert.equal(serviceOfPod('currencyservice-cf787dd48-vpjrd'), 'currencyservice');
  const csv = [
    'TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration',
    't1,a,root,frontend-579b9bff58-t2dbm,hipstershop.Frontend/Recv.,1000000000,9000000000,8000000',
    't1,b,a,frontend-579b9bff58-t2dbm,hipstershop.CurrencyService/Convert,2000000000,5000000000,3000000',
    't1,c,b,currencyservice-cf787dd48-vpjrd,grpc.hipstershop.CurrencyService/Convert,2500000000,4500000000,2000000',
    't1,d,a,frontend-579b9bff58-t2dbm,hipstershop.CartService/GetCart,6000000000,7000000000,1000000',
  ].join('\n');
  const spans = parseNezhaCsv(csv);
  for (const s of spans) Span.parse(s);
  assert.deepEqual(
    spans.map((s) => s.kind),
    ['server', 'client', 'server', 'client']
  );
  assert.equal(spans[3].attributes['peer.service'], 'cartservice'); // its server row is missing
  assert.equal(spans[1].startMs, 2000);
  assert.throws(() => parseNezhaCsv('a,b\n1,2'), /unexpected header/);
});

test('nezha: a network-delay case ranks its service in the top 3 against the fault-free minute', () => {
  const c = loadNezhaCases(DIR).find(
    (x) => x.injectType === 'network_delay' && x.rootCauseService === 'recommendationservice'
  )!;
  const traces = nezhaWindow(DIR, c);
  assert.ok(traces.length > 100);
  for (const tr of traces) assert.ok(Math.min(...tr.map((s) => s.startMs)) >= c.injectMs);
  const a = rankWindow({ traces, baseline: buildBaseline(nezhaFaultFree(DIR)) });
  const services = [...new Set(a.candidates.map((x) => x.service))];
  assert.ok(services.indexOf(c.rootCauseService) >= 0 && services.indexOf(c.rootCauseService) < 3, services.join(','));
});
