/**
 * provisioning/: the app enabled with its proxy URL and token from the environment and the provisioned Prometheus and
 * Tempo as its Explore targets, datasources whose uids the dashboard and the cross-links rely on, and the dashboard
 * provider loading the golden dashboard from the installed plugin (where docker-compose mounts dist/).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readJson, readText, readYaml, repo, type Doc } from './support';

const plugin = readJson('plugin.json');
const compose = readYaml('docker-compose.yaml');
const grafanaEnv = compose.services.grafana.environment as Record<string, string>;

function yamlFiles(dir: string): Array<{ file: string; doc: Doc }> {
  return readdirSync(repo('provisioning', dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => ({ file: `provisioning/${dir}/${f}`, doc: readYaml('provisioning', dir, f) }));
}

/** Grafana expands $VAR and ${VAR} in provisioning files; a literal $ must be written $$. */
function envRefs(text: string): string[] {
  return [...text.replaceAll('$$', '').matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g)].map((m) => m[1]);
}

describe('provisioning/plugins', () => {
  const apps = yamlFiles('plugins').flatMap(({ doc }) => doc.apps ?? []);

  it('enables exactly the Hopscope app, by its plugin.json id', () => {
    assert.equal(apps.length, 1);
    assert.equal(apps[0].type, plugin.id);
    assert.notEqual(apps[0].disabled, true);
  });

  it('sets the fields the plugin route reads: jsonData.proxyUrl and secureJsonData.proxyToken, from the environment', () => {
    const route = plugin.routes.find((r: Doc) => r.path === 'api/*');
    assert.match(route.url, /\.JsonData\.proxyUrl/);
    assert.match(route.headers[0].content, /\.SecureJsonData\.proxyToken/);
    assert.equal(apps[0].jsonData.proxyUrl, '${HOPSCOPE_PROXY_URL}');
    assert.equal(apps[0].secureJsonData.proxyToken, '${HOPSCOPE_ADMIN_TOKEN}');
  });

  it("names the provisioned Prometheus and Tempo as the app's data sources, so Explore works out of the box", () => {
    const byUid = new Map(
      yamlFiles('datasources')
        .flatMap(({ doc }) => doc.datasources ?? [])
        .map((d: Doc) => [d.uid, d.type])
    );
    assert.equal(apps[0].jsonData.prometheusDatasourceUid, 'hopscope-prometheus');
    assert.equal(byUid.get(apps[0].jsonData.prometheusDatasourceUid), 'prometheus');
    assert.equal(apps[0].jsonData.tempoDatasourceUid, 'hopscope-tempo');
    assert.equal(byUid.get(apps[0].jsonData.tempoDatasourceUid), 'tempo');
  });

  it('gets those variables from docker-compose, the URL naming the proxy service and port', () => {
    assert.equal(grafanaEnv.HOPSCOPE_PROXY_URL, 'http://backend-proxy:3301');
    assert.ok(compose.services['backend-proxy'].ports.some((p: string) => p.endsWith(':3301')));
    assert.match(grafanaEnv.HOPSCOPE_ADMIN_TOKEN, /^\$\{HOPSCOPE_ADMIN_TOKEN:\?/);
  });
});

describe('provisioning/datasources', () => {
  const all = yamlFiles('datasources').flatMap(({ doc }) => doc.datasources ?? []);
  const byUid = new Map<string, Doc>(all.map((d: Doc) => [d.uid, d]));

  it('gives every datasource a unique, fixed uid and exactly one default (Prometheus)', () => {
    assert.equal(byUid.size, all.length, 'uids are unique');
    assert.ok(all.every((d: Doc) => typeof d.uid === 'string' && d.uid.length > 0));
    assert.deepEqual(
      all.filter((d: Doc) => d.isDefault).map((d: Doc) => d.type),
      ['prometheus']
    );
    assert.equal(byUid.get('hopscope-prometheus')?.type, 'prometheus');
    assert.equal(byUid.get('hopscope-tempo')?.type, 'tempo');
  });

  it('links Prometheus exemplars to Tempo, and Tempo to Prometheus for traces-to-metrics and the service map', () => {
    const prom = byUid.get('hopscope-prometheus');
    const tempo = byUid.get('hopscope-tempo');
    assert.ok(prom.jsonData.exemplarTraceIdDestinations.length > 0);
    for (const d of prom.jsonData.exemplarTraceIdDestinations) assert.equal(byUid.get(d.datasourceUid)?.type, 'tempo');
    assert.equal(byUid.get(tempo.jsonData.tracesToMetrics.datasourceUid)?.type, 'prometheus');
    assert.equal(byUid.get(tempo.jsonData.serviceMap.datasourceUid)?.type, 'prometheus');
    assert.ok(tempo.jsonData.tracesToMetrics.queries.length > 0);
  });

  it("maps trace tags to labels Tempo's span metrics carry (traces-to-metrics queries filter by them)", () => {
    const sm = readYaml('deploy', 'tempo', 'tempo.yaml').metrics_generator.processor.span_metrics;
    const labels = new Set([
      'service',
      'span_name',
      'span_kind',
      'status_code',
      ...sm.dimensions.map((d: string) => d.replace(/[^a-zA-Z0-9_]/g, '_')),
    ]);
    const tags = byUid.get('hopscope-tempo').jsonData.tracesToMetrics.tags as Doc[];
    for (const t of tags) assert.ok(labels.has(t.value), `${t.key} → ${t.value} is a span-metrics label`);
    assert.ok(
      tags.some((t) => t.key === 'k8s.pod.name' && t.value === 'k8s_pod_name'),
      'the pod'
    );
  });

  it('points each datasource at a service of docker-compose', () => {
    for (const d of all) {
      const host = new URL(d.url).hostname;
      assert.ok(compose.services[host], `${d.name}: ${d.url} names a compose service`);
    }
  });

  it('escapes literal dollars ($$) so Grafana does not expand PromQL macros as environment variables', () => {
    for (const f of ['provisioning/datasources', 'provisioning/plugins']) {
      for (const file of readdirSync(repo(f))) {
        for (const name of envRefs(readText(f, file))) {
          assert.match(name, /^HOPSCOPE_/, `${f}/${file}: $${name} would be expanded from the environment`);
        }
      }
    }
    assert.deepEqual(envRefs('rate(x{$__tags}[5m])'), ['__tags'], 'the check sees an unescaped macro');
    assert.deepEqual(envRefs('rate(x{$$__tags}[5m])'), []);
  });
});

describe('provisioning/dashboards', () => {
  it('loads the dashboards the installed plugin bundles (where docker-compose mounts dist/), built from src/dashboards/', () => {
    const providers = yamlFiles('dashboards').flatMap(({ doc }) => doc.providers ?? []);
    assert.equal(providers.length, 1);
    const mount = (compose.services.grafana.volumes as string[]).find((v) => v.startsWith('./dist:'));
    const pluginDir = mount!.split(':')[1];
    assert.equal(pluginDir, `/var/lib/grafana/plugins/${plugin.id}`);
    assert.equal(providers[0].options.path, `${pluginDir}/dashboards`);
    // plugin.json bundles it from dashboards/, which the build fills from src/dashboards/.
    const included = plugin.includes.filter((i: Doc) => i.type === 'dashboard').map((i: Doc) => i.path);
    assert.deepEqual(included, ['dashboards/hopscope-golden.json']);
    assert.match(readText('webpack.config.ts'), /\{ from: 'src\/dashboards', to: 'dashboards' \}/);
    assert.ok(readdirSync(repo('src', 'dashboards')).includes('hopscope-golden.json'));
  });

  it("preselects the provisioned Prometheus in the golden dashboard's datasource variable", () => {
    const uids = new Map(
      yamlFiles('datasources')
        .flatMap(({ doc }) => doc.datasources ?? [])
        .map((d: Doc) => [d.uid, d.type])
    );
    const v = readJson('src', 'dashboards', 'hopscope-golden.json').templating.list.find(
      (x: Doc) => x.type === 'datasource'
    );
    assert.equal(uids.get(v.current.value), v.query);
  });
});
