/**
 * The host's reading of plugin.json routes follows Grafana's data proxy for app plugins (pkg/api/pluginproxy
 * `HandleRequest`, pkg/web/tree.go): exact method comparison, the router's path patterns, the first match deciding,
 * `reqRole` against the user's org role (403 without a fallback to a later route), 404 when nothing matches.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  decide,
  extractProxyPath,
  joinUrlFragments,
  matchPattern,
  matchRoute,
  renderTemplate,
  roleIncludes,
  routeHeaders,
  targetUrl,
  type PluginRoute,
} from '../../host/pluginRoutes';

const routes = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'plugin.json'), 'utf8')) as {
    routes: PluginRoute[];
  }
).routes;
const data = { JsonData: { proxyUrl: 'http://proxy.local:3301' }, SecureJsonData: { proxyToken: 's3cret' } };

describe('plugin routes: the matching of pkg/api/pluginproxy', () => {
  it('the proxy path is what follows /api/plugin-proxy/<id>/ (escaped, as Grafana reads it)', () => {
    assert.equal(extractProxyPath('/api/plugin-proxy/hopscope-rca-app/api/traces/abc'), 'api/traces/abc');
    assert.equal(
      extractProxyPath('/api/plugin-proxy/hopscope-rca-app/api/services/llm%20vllm/pods'),
      'api/services/llm%20vllm/pods'
    );
    assert.equal(extractProxyPath('/api/plugin-proxy/hopscope-rca-app'), '');
  });

  it('methods are compared exactly: no lists, no case folding; empty and * match every method', () => {
    const r = (method?: string): PluginRoute[] => [{ path: 'x', method, url: 'http://a' }];
    assert.ok(matchRoute(r('GET'), 'GET', 'x'));
    assert.equal(matchRoute(r('GET'), 'POST', 'x'), undefined);
    assert.equal(matchRoute(r('get'), 'GET', 'x'), undefined, 'Go compares the strings as they are');
    assert.equal(matchRoute(r('GET,PUT'), 'PUT', 'x'), undefined, 'a comma list is one string that matches no method');
    assert.equal(matchRoute(r('GET, PUT'), 'GET', 'x'), undefined);
    assert.ok(matchRoute(r(undefined), 'DELETE', 'x'));
    assert.ok(matchRoute(r('*'), 'PATCH', 'x'));
  });

  it('paths: static segments match exactly, :name one segment, * the rest (one segment or more); slashes at the ends ignored', () => {
    assert.deepEqual(matchPattern('api/alerts/rules', 'api/alerts/rules'), {});
    assert.deepEqual(matchPattern('api/alerts/rules', '/api/alerts/rules/'), {});
    assert.equal(matchPattern('api/alerts/rules', 'api/alerts/rules/export'), undefined, 'no prefix matching');
    assert.equal(matchPattern('api/alerts/rules', 'api/alerts'), undefined);
    assert.deepEqual(matchPattern('api/*', 'api/traces/abc/rca'), { glob: 'traces/abc/rca' });
    assert.deepEqual(
      matchPattern('api/*', 'api/services/llm%20vllm'),
      { glob: 'services/llm vllm' },
      'the glob is unescaped'
    );
    assert.equal(matchPattern('api/*', 'api'), undefined, '* needs at least one segment');
    assert.equal(matchPattern('api/*', 'api/'), undefined);
    assert.equal(matchPattern('api/*', 'apix/health'), undefined);
    assert.deepEqual(matchPattern('items/:id/*', 'items/42/more/deep'), { glob: 'more/deep' });
    assert.equal(matchPattern('items/:id', 'items/42/more'), undefined);
    assert.throws(() => matchPattern('items/:id([0-9]+)', 'items/1'), /not supported/, 'regexp segments fail loudly');
  });

  it('the first route whose method and path match decides, in plugin.json order', () => {
    const ordered: PluginRoute[] = [
      { path: 'api/x', method: 'PUT', url: 'http://put' },
      { path: 'api/*', url: 'http://any' },
      { path: 'api/x', url: 'http://never' },
    ];
    assert.equal(matchRoute(ordered, 'PUT', 'api/x')?.route.url, 'http://put');
    assert.equal(matchRoute(ordered, 'GET', 'api/x')?.route.url, 'http://any');
  });

  it('roles: None < Viewer < Editor < Admin (RoleType.Includes)', () => {
    assert.ok(roleIncludes('Admin', 'Editor'));
    assert.ok(roleIncludes('Editor', 'Editor'));
    assert.ok(roleIncludes('Editor', 'Viewer'));
    assert.equal(roleIncludes('Viewer', 'Editor'), false);
    assert.equal(roleIncludes('None', 'Viewer'), false);
  });

  it('a route the user lacks the role for is 403, even when a later route would let them through', () => {
    const r: PluginRoute[] = [
      { path: 'api/x', method: 'PUT', reqRole: 'Editor', url: 'http://editor' },
      { path: 'api/*', url: 'http://open' },
    ];
    assert.deepEqual(decide(r, 'PUT', 'api/x', 'Viewer'), { status: 403, message: 'plugin proxy route access denied' });
    assert.equal(decide(r, 'PUT', 'api/x', 'Editor').status, 200);
    assert.equal(decide(r, 'GET', 'api/x', 'Viewer').status, 200, 'the Editor route does not match a GET');
    assert.deepEqual(decide([], 'GET', 'api/x', 'Admin'), { status: 404, message: 'plugin route match not found' });
  });
});

describe("Hopscope's routes (plugin.json)", () => {
  it('reads go through the GET route (Viewer) to {{proxyUrl}}/api/<path>, query kept, bearer header rendered', () => {
    const d = decide(routes, 'GET', 'api/traces/abc/rca', 'Viewer');
    assert.equal(d.status, 200);
    assert.equal(d.match.route.reqRole, 'Viewer');
    assert.equal(d.match.rest, 'traces/abc/rca');
    assert.equal(
      targetUrl(d.match, data, '?from=now-1h&to=now').toString(),
      'http://proxy.local:3301/api/traces/abc/rca?from=now-1h&to=now'
    );
    assert.deepEqual(routeHeaders(d.match.route, data), { authorization: 'Bearer s3cret' });
    assert.equal(decide(routes, 'GET', 'api/health', 'None').status, 403, 'a user without an org role reads nothing');
  });

  it("a Viewer's PUT of the alert rules is refused as Grafana refuses it (403); an Editor's reaches the proxy", () => {
    assert.deepEqual(decide(routes, 'PUT', 'api/alerts/rules', 'Viewer'), {
      status: 403,
      message: 'plugin proxy route access denied',
    });
    const editor = decide(routes, 'PUT', 'api/alerts/rules', 'Editor');
    assert.equal(editor.status, 200);
    assert.equal(targetUrl(editor.match, data, '').toString(), 'http://proxy.local:3301/api/alerts/rules');
    assert.deepEqual(routeHeaders(editor.match.route, data), { authorization: 'Bearer s3cret' });
    assert.equal(decide(routes, 'PUT', 'api/alerts/rules', 'Admin').status, 200);
  });

  it('every mutating call is an Editor route: rules import, saving a root-cause answer, evaluating the rules, deleting a run', () => {
    for (const [method, path] of [
      ['POST', 'api/alerts/rules/import'],
      ['POST', 'api/rca/answers'],
      ['POST', 'api/alerts/evaluate'],
      ['DELETE', 'api/runs/run-1'],
    ]) {
      assert.equal(decide(routes, method, path, 'Viewer').status, 403, `${method} ${path} as Viewer`);
      const ok = decide(routes, method, path, 'Editor');
      assert.equal(ok.status, 200, `${method} ${path} as Editor`);
      assert.equal(targetUrl(ok.match, data, '').pathname, `/${path}`);
    }
    // Reading the saved answers stays a Viewer's right; an incident window sent as data is only analysed.
    assert.equal(decide(routes, 'GET', 'api/rca/answers', 'Viewer').status, 200);
    assert.equal(decide(routes, 'POST', 'api/rca', 'Viewer').status, 200);
  });

  it('nothing else is forwarded: other methods, other paths, the bare api/ (404)', () => {
    assert.equal(decide(routes, 'DELETE', 'api/alerts/rules', 'Admin').status, 404);
    assert.equal(
      decide(routes, 'POST', 'api/runs', 'Admin').status,
      404,
      'the load generator registers runs with the proxy itself'
    );
    assert.equal(decide(routes, 'PUT', 'api/alerts/rules/export', 'Admin').status, 404);
    assert.equal(decide(routes, 'GET', 'metrics', 'Admin').status, 404);
    assert.equal(decide(routes, 'GET', 'api', 'Admin').status, 404);
  });

  it('every route sends the token and targets the proxy URL', () => {
    for (const r of routes) {
      assert.match(r.url ?? '', /^\{\{ \.JsonData\.proxyUrl \}\}\/api(\/|$)/, r.path);
      assert.deepEqual(
        r.headers,
        [{ name: 'Authorization', content: 'Bearer {{ .SecureJsonData.proxyToken }}' }],
        r.path
      );
      assert.ok(r.method && ['Viewer', 'Editor'].includes(r.reqRole ?? ''), `${r.path}: a method and a role`);
    }
  });
});

describe('route templates and URLs', () => {
  it('templates: missing values render empty, unknown actions fail loudly', () => {
    assert.equal(
      renderTemplate('Bearer {{ .SecureJsonData.proxyToken }}', { JsonData: {}, SecureJsonData: {} }),
      'Bearer '
    );
    assert.equal(renderTemplate('{{.JsonData.proxyUrl}}/api', data), 'http://proxy.local:3301/api');
    assert.throws(() => renderTemplate('{{ .URL | printf }}', data), /unsupported template action/);
  });

  it('joins URL fragments with exactly one slash', () => {
    assert.equal(joinUrlFragments('/api/', '/health'), '/api/health');
    assert.equal(joinUrlFragments('/api', 'health/'), '/api/health/');
    assert.equal(joinUrlFragments('/api', ''), '/api');
  });
});
