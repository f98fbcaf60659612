/**
 * plugin.json, as written and as built into dist/, is valid against Grafana's plugin.json schema
 * (../shared/fixtures/grafana/plugin.schema.json) and says what the app needs: pages, config, the data-proxy route.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { APP_BASE, APP_PAGES, APP_PLUGIN_ID } from '../../../contract/app-urls';
import { fixture } from '../../support/fixtures';
import { ensurePluginBuilt } from '../../support/host';

const root = join(import.meta.dirname, '..', '..', '..');
const schemaPath = process.env.HOPSCOPE_PLUGIN_SCHEMA ?? fixture('grafana', 'plugin.schema.json');

type PluginJson = {
  id: string;
  type: string;
  info: { version: string; updated: string; logos: { small: string; large: string } };
  includes: Array<{ type: string; name: string; path?: string; addToNav?: boolean; defaultNav?: boolean }>;
  routes: Array<{
    path: string;
    method?: string;
    reqRole?: string;
    url: string;
    headers: Array<{ name: string; content: string }>;
  }>;
  dependencies: { grafanaDependency: string };
};

function loadSchemaValidator() {
  const path = schemaPath;
  const schema = JSON.parse(readFileSync(path, 'utf8'));
  // Grafana's schema uses regex syntax that is not valid with the `u` flag.
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('plugin.json', () => {
  const validate = loadSchemaValidator();
  let source: PluginJson;
  let built: PluginJson;

  before(() => {
    ensurePluginBuilt();
    source = JSON.parse(readFileSync(join(root, 'plugin.json'), 'utf8'));
    built = JSON.parse(readFileSync(join(root, 'dist', 'plugin.json'), 'utf8'));
  });

  it('the source plugin.json passes the schema', () => {
    assert.equal(validate(source), true, JSON.stringify(validate.errors, null, 2));
  });

  it('the built plugin.json passes the schema, with version and date filled in', () => {
    assert.equal(validate(built), true, JSON.stringify(validate.errors, null, 2));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    assert.equal(built.info.version, pkg.version);
    assert.match(built.info.updated, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(JSON.stringify(built).includes('%'), false, 'no %PLACEHOLDER% left');
  });

  it('the schema check can fail: a plugin.json without an id is rejected', () => {
    const broken = { ...source } as Partial<PluginJson>;
    delete broken.id;
    assert.equal(validate(broken), false);
  });

  it('declares the app, its pages and the Grafana version it needs', () => {
    assert.equal(built.id, 'hopscope-rca-app');
    assert.equal(APP_PLUGIN_ID, built.id, 'contract/app-urls.ts names the same plugin');
    assert.equal(built.type, 'app');
    // The menu lists the app's top-level pages, as contract/app-urls.ts names them, in that order.
    const pages = built.includes.filter((i) => i.type === 'page' && i.path?.startsWith(`${APP_BASE}/`));
    assert.deepEqual(
      pages.map((p) => [p.name, p.path]),
      APP_PAGES.map((r) => [r[0].toUpperCase() + r.slice(1), `${APP_BASE}/${r}`])
    );
    assert.ok(pages.every((p) => p.addToNav));
    assert.deepEqual(
      pages.filter((p) => p.defaultNav).map((p) => p.name),
      ['Overview']
    );
    assert.equal(built.dependencies.grafanaDependency, '>=12.4.0');
    for (const logo of [built.info.logos.small, built.info.logos.large]) {
      assert.ok(existsSync(join(root, 'dist', logo)), `dist/${logo} exists`);
    }
  });

  it('routes reads (GET, Viewer) and the mutating calls (their method, Editor) to {{ .JsonData.proxyUrl }}/api with the bearer token', () => {
    const bearer = [{ name: 'Authorization', content: 'Bearer {{ .SecureJsonData.proxyToken }}' }];
    assert.deepEqual(
      built.routes.map((r) => [r.method, r.path, r.reqRole, r.url]),
      [
        ['PUT', 'api/alerts/rules', 'Editor', '{{ .JsonData.proxyUrl }}/api/alerts/rules'],
        ['POST', 'api/alerts/rules/import', 'Editor', '{{ .JsonData.proxyUrl }}/api/alerts/rules/import'],
        ['POST', 'api/rca/answers', 'Editor', '{{ .JsonData.proxyUrl }}/api/rca/answers'],
        ['POST', 'api/rca', 'Viewer', '{{ .JsonData.proxyUrl }}/api/rca'],
        ['POST', 'api/alerts/evaluate', 'Editor', '{{ .JsonData.proxyUrl }}/api/alerts/evaluate'],
        ['DELETE', 'api/runs/*', 'Editor', '{{ .JsonData.proxyUrl }}/api/runs'],
        ['GET', 'api/*', 'Viewer', '{{ .JsonData.proxyUrl }}/api'],
      ]
    );
    for (const r of built.routes) {
      assert.deepEqual(r.headers, bearer, `${r.method} ${r.path} sends the token`);
      // Grafana compares a route's method with the request's as strings: one method per route, upper case.
      assert.match(r.method ?? '', /^(GET|POST|PUT|DELETE|PATCH)$/, `${r.path}: one method`);
    }
  });

  it('bundles the golden dashboard it includes: dist/dashboards/, the same JSON as src/dashboards/', () => {
    const dashboards = built.includes.filter((i) => i.type === 'dashboard');
    assert.deepEqual(
      dashboards.map((i) => i.path),
      ['dashboards/hopscope-golden.json']
    );
    for (const d of dashboards) {
      assert.deepEqual(
        JSON.parse(readFileSync(join(root, 'dist', d.path!), 'utf8')),
        JSON.parse(readFileSync(join(root, 'src', d.path!), 'utf8')),
        d.path
      );
    }
  });

  it("declares its links into Grafana and the exposed components it uses, by Grafana 12.4's ids", () => {
    const b = built as unknown as {
      extensions: { addedLinks: Array<{ targets: string[]; title: string }> };
      dependencies: { extensions: { exposedComponents: string[] } };
    };
    assert.deepEqual(
      b.extensions.addedLinks.flatMap((l) => l.targets),
      ['grafana/traceview/header/actions', 'grafana/dashboard/panel/menu']
    );
    assert.deepEqual(b.dependencies.extensions.exposedComponents, [
      'grafana/add-to-dashboard-form/v1',
      'grafana/alerting/create-alert-from-panel/v1',
    ]);
  });

  it('dist/ carries the docs Grafana shows', () => {
    for (const f of ['module.js', 'plugin.json', 'CHANGELOG.md', 'img/logo.svg']) {
      assert.ok(existsSync(join(root, 'dist', f)), `dist/${f}`);
    }
    if (existsSync(join(root, 'README.md'))) {
      assert.ok(existsSync(join(root, 'dist', 'README.md')), 'dist/README.md');
    }
  });
});
