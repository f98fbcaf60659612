/** The PNG export's view path (issue 20, finding 12): a path of the app only, no `.`/`..` segments (encoded or not). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewPath } from '../../../backend-proxy/src/routes/export';

test('view paths with dot segments are refused; app paths pass', () => {
  for (const bad of [
    '/a/hopscope-rca-app/../../api/health',
    '/a/hopscope-rca-app/..',
    '/a/hopscope-rca-app/./x',
    '/a/hopscope-rca-app/%2e%2e/%2E%2e/login',
    '/a/hopscope-rca-app/.%2e/admin?from=1',
    '//evil.example/x',
  ])
    assert.throws(() => viewPath(bad), /view: must/, bad);
  for (const ok of [
    '/a/hopscope-rca-app/traces/0af7651916cd43dd8448eb211c80319c?from=1&to=2',
    '/a/hopscope-rca-app/services/rag.v2',
    '/a/hopscope-rca-app/runs?q=..',
  ])
    assert.equal(viewPath(ok), ok);
});
