/**
 * The configs of the observability stack docker-compose runs: Prometheus and Alertmanager checked by their own tools
 * (promtool, amtool from Debian), Tempo structurally (no Tempo binary here), and each one's targets naming real
 * compose services on the ports those services listen on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readYaml, repo, which, type Doc } from './support';

const compose = readYaml('docker-compose.yaml');

function check(tool: string, args: string[]): string {
  try {
    execFileSync(tool, args, { encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || `${tool} failed`;
  }
}

/** Container ports a compose service listens on: published ones, plus those the upstream images use by default. */
const IMAGE_PORTS: Record<string, number[]> = { prometheus: [9090], tempo: [3200, 4317, 4318], 'otel-collector': [4317, 4318, 8888, 13133], alertmanager: [9093] };
function listens(service: string, port: number): boolean {
  const published = (compose.services[service]?.ports ?? []).map((p: string) => Number(p.split(':').at(-1)));
  return published.includes(port) || (IMAGE_PORTS[service] ?? []).includes(port);
}

describe('Prometheus config (docker-compose)', () => {
  const prom = readYaml('deploy', 'prometheus', 'prometheus.yml');

  it('passes promtool check config', (t) => {
    if (!which('promtool')) return t.skip('promtool not installed (Debian package prometheus)');
    assert.equal(check('promtool', ['check', 'config', repo('deploy', 'prometheus', 'prometheus.yml')]), '');
  });

  it('scrapes the proxy, the exporter, the chain (via its /targets discovery), Tempo and the Collector', () => {
    const jobs = new Map<string, Doc>(prom.scrape_configs.map((j: Doc) => [j.job_name, j]));
    const targets = (j: Doc): string[] => (j.static_configs ?? []).flatMap((s: Doc) => s.targets);
    assert.deepEqual(targets(jobs.get('hopscope-backend-proxy')), ['backend-proxy:3301']);
    assert.deepEqual(targets(jobs.get('hopscope-bpf-exporter')), ['bpf-exporter:3302']);
    assert.equal(jobs.get('hopscope-chain').http_sd_configs[0].url, 'http://chain:3319/targets');
    for (const j of prom.scrape_configs) {
      for (const target of targets(j)) {
        const [host, port] = target.split(':');
        if (host === 'localhost') continue;
        assert.ok(listens(host, Number(port)), `${j.job_name}: ${target} is a compose service port`);
      }
    }
  });

  it('rewrites the chain\'s self-reported addresses (its bind address) to the chain container', () => {
    const relabel = prom.scrape_configs.find((j: Doc) => j.job_name === 'hopscope-chain').relabel_configs[0];
    const re = new RegExp(`^(?:${relabel.regex})$`);
    for (const addr of ['0.0.0.0:41234', '127.0.0.1:3310']) {
      assert.equal(addr.replace(re, relabel.replacement), `chain:${addr.split(':')[1]}`);
    }
  });

  it('accepts what Tempo\'s metrics generator writes (remote-write receiver on) and stores exemplars', () => {
    const cmd: string[] = compose.services.prometheus.command;
    assert.ok(cmd.includes('--web.enable-remote-write-receiver'));
    assert.ok(cmd.some((c) => /--enable-feature=.*exemplar-storage/.test(c)));
    assert.ok(cmd.includes('--config.file=/etc/prometheus/prometheus.yml'));
    assert.ok(compose.services.prometheus.volumes.includes('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro'));
  });
});

describe('Alertmanager config', () => {
  it('passes amtool check-config', (t) => {
    if (!which('amtool')) return t.skip('amtool not installed (Debian package prometheus-alertmanager)');
    assert.equal(check('amtool', ['check-config', repo('deploy', 'alertmanager', 'alertmanager.yml')]), '');
  });

  it('the proxy pushes to it', () => {
    assert.equal(compose.services['backend-proxy'].environment.HOPSCOPE_ALERTMANAGER_URL, 'http://alertmanager:9093');
  });
});

describe('Tempo config', () => {
  const tempo = readYaml('deploy', 'tempo', 'tempo.yaml');

  it('receives OTLP on all interfaces (Tempo >= 2.7 defaults to localhost) on the ports the Collector sends to', () => {
    const p = tempo.distributor.receivers.otlp.protocols;
    assert.equal(p.grpc.endpoint, '0.0.0.0:4317');
    assert.equal(p.http.endpoint, '0.0.0.0:4318');
    assert.equal(compose.services['otel-collector'].environment.TEMPO_OTLP_ENDPOINT, 'tempo:4317');
    assert.equal(tempo.server.http_listen_port, 3200);
    assert.equal(compose.services['backend-proxy'].environment.HOPSCOPE_TEMPO_URL, 'http://tempo:3200');
  });

  it('keeps every path on the tempo-data volume, and writes service-graph and span metrics to Prometheus', () => {
    const mount = compose.services.tempo.volumes.find((v: string) => v.startsWith('tempo-data:')).split(':')[1];
    const paths = [tempo.storage.trace.wal.path, tempo.storage.trace.local.path, tempo.metrics_generator.storage.path, tempo.metrics_generator.traces_storage.path];
    for (const p of paths) assert.ok(p.startsWith(`${mount}/`), `${p} is under ${mount}`);
    assert.equal(tempo.metrics_generator.storage.remote_write[0].url, 'http://prometheus:9090/api/v1/write');
    const processors = tempo.overrides.defaults.metrics_generator.processors;
    for (const p of ['service-graphs', 'span-metrics']) assert.ok(processors.includes(p), p);
  });
});
