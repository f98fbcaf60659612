import assert from 'node:assert/strict';
import { test } from 'node:test';

import { appLink, appLinks as links, appPaths, preservedQuery } from '../../../contract/app-urls';
import { isTraceId, traceSearchFromUrl, traceSearchToUrl } from '../../../src/transforms/urlState';
import { formatSelector, parseSelector } from '../../../src/datasource/frames/compare';

const search = '?from=now-15m&to=now&var-backend=vllm&var-model=llama&refresh=10s&panel=3&foo=bar';

test('drill-down links keep the time range and variables, and drop the rest', () => {
  assert.equal(preservedQuery(search).toString(), 'from=now-15m&to=now&refresh=10s&var-backend=vllm&var-model=llama');
  assert.equal(
    links.pod('llm vllm', 'llm-vllm-7d9/0', search),
    '/a/hopscope-rca-app/services/llm%20vllm/pods/llm-vllm-7d9%2F0?from=now-15m&to=now&refresh=10s&var-backend=vllm&var-model=llama'
  );
  assert.equal(links.trace('ab'.repeat(16), ''), `/a/hopscope-rca-app/traces/${'ab'.repeat(16)}`);
  assert.equal(
    links.traces(search, { service: 'rag', status: undefined }).split('?')[1],
    'from=now-15m&to=now&refresh=10s&var-backend=vllm&var-model=llama&service=rag'
  );
});

test('links.at centres an absolute window on an instant', () => {
  const url = new URL(links.at('/a/hopscope-rca-app/services/rag', 1_700_000_000_000, 60_000, search), 'http://x');
  assert.equal(url.searchParams.get('from'), '1699999940000');
  assert.equal(url.searchParams.get('to'), '1700000060000');
  assert.equal(url.searchParams.get('var-backend'), 'vllm');
});

test('links for outside the app (alerts, Markdown export) are a base, a page path and its keys', () => {
  assert.equal(
    appLink('https://grafana.example/', appPaths.trace('ab'.repeat(16)), {
      from: 1_700_000_000_000.4,
      to: 1_700_000_060_000,
      span: undefined,
    }),
    `https://grafana.example/a/hopscope-rca-app/traces/${'ab'.repeat(16)}?from=1700000000000&to=1700000060000`
  );
  assert.equal(appLink('', appPaths.alerts(), { rule: 'tls slow' }), '/a/hopscope-rca-app/alerts?rule=tls+slow');
});

test('trace search state round-trips through the URL and rejects bad values', () => {
  const state = { service: 'rag', minDurationMs: 2100, status: 'timeout' as const, traceId: 'ab'.repeat(16) };
  assert.deepEqual(traceSearchFromUrl(traceSearchToUrl(state)), state);
  assert.deepEqual(traceSearchFromUrl(traceSearchToUrl({})), {});
  assert.deepEqual(traceSearchFromUrl({ minDurationMs: '-5', status: 'weird', traceId: 'xyz', service: '' }), {});
  assert.deepEqual(traceSearchFromUrl({ minDurationMs: ['250', '9'] }), { minDurationMs: 250 });
});

test('trace ids are 32 hex digits and not all zero', () => {
  assert.ok(isTraceId('0af7651916cd43dd8448eb211c80319c'));
  assert.ok(!isTraceId('0'.repeat(32)));
  assert.ok(!isTraceId('0af7651916cd43dd8448eb211c80319'));
});

test('compare selectors round-trip in the proxy syntax', () => {
  const s = { backend: 'tgi', model: 'mistral-7b=v2' };
  assert.equal(formatSelector(s), 'backend=tgi,model=mistral-7b=v2');
  assert.deepEqual(parseSelector(formatSelector(s)), s);
  assert.deepEqual(parseSelector('backend=vllm, bogus=1,model='), { backend: 'vllm' });
  assert.equal(formatSelector({}), '');
});
