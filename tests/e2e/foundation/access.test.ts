/**
 * Access through the plugin routes as Grafana enforces it (plugin.json `routes`: reads for Viewers, the alert-rule
 * save for Editors): the host started as a Viewer, an Editor and a user without an org role, talking to the stand-in
 * proxy. A refused call never reaches the proxy and answers Grafana's own 403/404 bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { OrgRole } from '../../host/pluginRoutes';
import { startHost, type RunningHost } from '../../host/server';
import { startStandInProxy, type StandInProxy } from '../../host/standInProxy';
import { DIST, ensurePluginBuilt } from '../../support/host';

let proxy: StandInProxy;
const hosts: Partial<Record<OrgRole, RunningHost>> = {};

before(async () => {
  ensurePluginBuilt();
  proxy = await startStandInProxy();
  for (const role of ['Viewer', 'Editor', 'None'] as const) {
    hosts[role] = await startHost({ port: 0, proxyUrl: proxy.url, dist: DIST, orgRole: role });
  }
});

after(async () => {
  await Promise.all(Object.values(hosts).map((h) => h?.close()));
  await proxy?.close();
});

async function call(
  role: OrgRole,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${hosts[role]!.url}/api/plugin-proxy/hopscope-rca-app/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('plugin routes by role, through the host', () => {
  test("a Viewer reads, and saving the alert rules is refused with Grafana's 403", async () => {
    assert.equal((await call('Viewer', 'GET', 'api/alerts/rules')).status, 200);
    assert.deepEqual(await call('Viewer', 'PUT', 'api/alerts/rules', { rules: [] }), {
      status: 403,
      body: { message: 'plugin proxy route access denied' },
    });
  });

  test('an Editor saves the rules: the PUT reaches the proxy with its body', async () => {
    const res = await call('Editor', 'PUT', 'api/alerts/rules', { rules: [{ id: 'r1' }] });
    assert.deepEqual(res, { status: 200, body: { rules: [{ id: 'r1' }], version: 1 } });
  });

  test('a user without an org role reads nothing; a method no route has is 404', async () => {
    assert.deepEqual(await call('None', 'GET', 'api/health'), {
      status: 403,
      body: { message: 'plugin proxy route access denied' },
    });
    assert.deepEqual(await call('Editor', 'DELETE', 'api/alerts/rules'), {
      status: 404,
      body: { message: 'plugin route match not found' },
    });
  });

  test('the page tells the app who is signed in (boot data orgRole)', async () => {
    const html = await (await fetch(`${hosts.Viewer!.url}/a/hopscope-rca-app/overview`)).text();
    assert.match(html, /"orgRole":"Viewer"/);
  });
});
