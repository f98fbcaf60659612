/** The config page's proxy URL check: what is rejected (with which message) and how a good URL is stored. */
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { normalizeProxyUrl, validateProxyUrl } from '../../../src/pages/AppConfig/validateProxyUrl';

it('accepts absolute http(s) URLs', () => {
  for (const ok of ['http://127.0.0.1:3301', 'https://hopscope.example.com', 'http://proxy:3301/prefix/']) {
    assert.equal(validateProxyUrl(ok), undefined, ok);
  }
});

it('rejects malformed or unsuitable URLs with a message saying why', () => {
  assert.match(validateProxyUrl('')!, /Enter the URL/);
  assert.match(validateProxyUrl('localhost 3301')!, /not a valid URL/);
  assert.match(validateProxyUrl('ftp://x')!, /http:\/\/ or https:\/\//);
  assert.match(validateProxyUrl('http://x/?a=1')!, /query/);
  assert.match(validateProxyUrl('http://u:p@x')!, /credentials/);
});

it('stores the URL trimmed and without trailing slashes (the route appends /api)', () => {
  assert.equal(normalizeProxyUrl('  http://proxy:3301//  '), 'http://proxy:3301');
});
