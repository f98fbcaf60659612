/** The host's reading of plugin.json routes follows Grafana's data-proxy semantics (pkg/api/pluginproxy). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { joinUrlFragments, matchRoute, renderTemplate, routeHeaders, targetUrl, type PluginRoute } from '../../host/pluginRoutes';

const routes = (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'plugin.json'), 'utf8')) as { routes: PluginRoute[] }).routes;
const data = { JsonData: { proxyUrl: 'http://proxy.local:3301' }, SecureJsonData: { proxyToken: 's3cret' } };

describe('plugin routes', () => {
  it('api/<path> of the plugin proxy goes to {{proxyUrl}}/api/<path>, query kept', () => {
    const match = matchRoute(routes, 'GET', 'api/traces/abc/rca');
    assert.ok(match);
    assert.equal(match.rest, 'traces/abc/rca');
    assert.equal(targetUrl(match, data, '?from=now-1h&to=now').toString(), 'http://proxy.local:3301/api/traces/abc/rca?from=now-1h&to=now');
  });

  it('every method matches (the route has none), and the bearer header is rendered', () => {
    const match = matchRoute(routes, 'POST', 'api/rca');
    assert.ok(match);
    assert.deepEqual(routeHeaders(match.route, data), { authorization: 'Bearer s3cret' });
  });

  it('paths outside api/ do not match', () => {
    assert.equal(matchRoute(routes, 'GET', 'metrics'), undefined);
    assert.equal(matchRoute(routes, 'GET', 'apix/health'), undefined);
    assert.equal(matchRoute(routes, 'GET', 'api'), undefined);
  });

  it('method lists, :params and patterns without * behave as in Grafana', () => {
    const custom: PluginRoute[] = [
      { path: 'exact', method: 'GET', url: 'http://a/x' },
      { path: 'items/:id/*', method: 'GET, PUT', url: 'http://b/y' },
    ];
    assert.equal(matchRoute(custom, 'POST', 'exact'), undefined);
    const exact = matchRoute(custom, 'GET', 'exact');
    assert.equal(exact && targetUrl(exact, data, '').toString(), 'http://a/x');
    const item = matchRoute(custom, 'PUT', 'items/42/more/deep');
    assert.equal(item?.rest, 'more/deep');
    assert.equal(matchRoute(custom, 'DELETE', 'items/42/x'), undefined);
  });

  it('templates: missing values render empty, unknown actions fail loudly', () => {
    assert.equal(renderTemplate('Bearer {{ .SecureJsonData.proxyToken }}', { JsonData: {}, SecureJsonData: {} }), 'Bearer ');
    assert.equal(renderTemplate('{{.JsonData.proxyUrl}}/api', data), 'http://proxy.local:3301/api');
    assert.throws(() => renderTemplate('{{ .URL | printf }}', data), /unsupported template action/);
  });

  it('joins URL fragments with exactly one slash', () => {
    assert.equal(joinUrlFragments('/api/', '/health'), '/api/health');
    assert.equal(joinUrlFragments('/api', 'health/'), '/api/health/');
    assert.equal(joinUrlFragments('/api', ''), '/api');
  });
});
