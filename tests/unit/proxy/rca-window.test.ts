/** POST /api/rca validates its body before the engine runs: each bad field is a 400 that names where it is. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBody, RcaAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, otlp } from '../../support/otlp-spans';

let proxy: RunningProxy;
before(async () => {
  proxy = await startProxy({ port: 0, prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined });
});
after(() => proxy.close());

const T0 = Date.now() - 60_000;
const post = async (body: unknown): Promise<{ status: number; body: unknown }> => {
  const r = await fetch(`${proxy.url}/api/rca`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
};

test('a valid window is ranked; engine settings are applied', async () => {
  const traces = otlp(chainTrace(0, T0, 900, 2));
  const r = await post({ traces, config: { maxCandidates: 1 } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(RcaAnswer.parse(r.body).candidates.length, 1);
});

test('a bad engine setting, a bad kernel event or a body that is not an object: 400 naming the field', async () => {
  const traces = otlp(chainTrace(0, T0, 900, 2));
  const cases: Array<[unknown, RegExp]> = [
    [{ traces, config: { maxCandidates: 0 } }, /^config: maxCandidates: /],
    [{ traces, kernelEvents: [{ ts: 'soon' }] }, /kernelEvents\[0\]\.ts: /],
    [[1, 2], /^body: /],
  ];
  for (const [body, re] of cases) {
    const r = await post(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    const e = ErrorBody.parse(r.body);
    assert.equal(e.error.code, 'bad_request');
    assert.match(e.error.message, re);
  }
});
