/**
 * The configs of the observability stack docker-compose runs: Prometheus and Alertmanager checked by their own tools
 * (promtool, amtool from Debian; amtool also routes the labels the proxy pushes), Tempo against the keys Tempo 2.8
 * reads (it refuses any other at start) with the span-metrics labels the proxy queries, and each one's targets naming
 * real compose services on the ports those services listen on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readText, readYaml, repo, which, type Doc } from './support';

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
const IMAGE_PORTS: Record<string, number[]> = {
  prometheus: [9090],
  tempo: [3200, 4317, 4318],
  'otel-collector': [4317, 4318, 8888, 13133],
  alertmanager: [9093],
};
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

  it("rewrites the chain's self-reported addresses (its bind address) to the chain container", () => {
    const relabel = prom.scrape_configs.find((j: Doc) => j.job_name === 'hopscope-chain').relabel_configs[0];
    const re = new RegExp(`^(?:${relabel.regex})$`);
    for (const addr of ['0.0.0.0:41234', '127.0.0.1:3310']) {
      assert.equal(addr.replace(re, relabel.replacement), `chain:${addr.split(':')[1]}`);
    }
  });

  it("accepts what Tempo's metrics generator writes (remote-write receiver on) and stores exemplars", () => {
    const cmd: string[] = compose.services.prometheus.command;
    assert.ok(cmd.includes('--web.enable-remote-write-receiver'));
    assert.ok(cmd.some((c) => /--enable-feature=.*exemplar-storage/.test(c)));
    assert.ok(cmd.includes('--config.file=/etc/prometheus/prometheus.yml'));
    // The Collector's metrics pipeline pushes OTLP: Prometheus 3 takes it at /api/v1/otlp/v1/metrics with this flag.
    assert.ok(cmd.includes('--web.enable-otlp-receiver'));
    assert.equal(
      compose.services['otel-collector'].environment.PROMETHEUS_OTLP_ENDPOINT,
      'http://prometheus:9090/api/v1/otlp'
    );
    assert.ok(listens('prometheus', 9090));
    assert.ok(
      compose.services.prometheus.volumes.includes(
        './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro'
      )
    );
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

  const am = readYaml('deploy', 'alertmanager', 'alertmanager.yml');
  /** The labels the proxy puts on each alert it pushes (the `labels: { … }` of its Alertmanager push), with the constant ones' values. */
  function pushedLabels(): Map<string, string | undefined> {
    const src = readText('backend-proxy', 'src', 'alerts', 'manager.ts');
    assert.match(src, /api\/v2\/alerts/);
    const m = /labels:\s*\{([\s\S]*?)\},\s*\n\s*annotations:/.exec(src);
    assert.ok(m, "the push's labels object in backend-proxy/src/alerts/manager.ts");
    const out = new Map<string, string | undefined>();
    for (const kv of m[1].matchAll(/(?:^\s*|\{\s*|,\s*)([a-z_]+):\s*('([^']*)')?/g)) out.set(kv[1], kv[3]);
    return out;
  }
  const hopscopeRoute = (): Doc =>
    am.route.routes.find((r: Doc) => (r.matchers ?? []).some((x: string) => /^source=/.test(x)));

  it("groups composite alerts by labels the proxy's alerts carry (alertname, rule id, pod), one group per rule and pod", () => {
    const labels = pushedLabels();
    for (const l of ['alertname', 'rule_id', 'severity', 'source', 'pod'])
      assert.ok(labels.has(l), `the proxy pushes ${l}`);
    const r = hopscopeRoute();
    assert.ok(r, "a route for the proxy's alerts");
    assert.deepEqual(r.matchers, [`source="${labels.get('source')}"`], 'it matches the source label the proxy sets');
    for (const g of r.group_by) assert.ok(labels.has(g), `group_by ${g} is a label the proxy pushes`);
    for (const g of ['alertname', 'rule_id', 'pod']) assert.ok(r.group_by.includes(g), `groups by ${g}`);
    for (const g of am.route.group_by)
      assert.ok(g === 'alertname' || g === 'severity' || labels.has(g), `root group_by ${g}`);
    for (const rule of am.inhibit_rules ?? [])
      for (const l of rule.equal ?? []) assert.ok(labels.has(l), `inhibit equal ${l} is a pushed label`);
  });

  it('waits, groups and repeats sensibly: group_wait ≤ group_interval ≤ repeat_interval, a composite alert out within 30 s', () => {
    const s = (d: string): number => {
      const m = /^(\d+)(s|m|h)$/.exec(d);
      assert.ok(m, d);
      return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
    };
    for (const r of [am.route, ...am.route.routes]) {
      const w = s(r.group_wait ?? am.route.group_wait),
        i = s(r.group_interval ?? am.route.group_interval),
        rep = s(r.repeat_interval ?? am.route.repeat_interval);
      assert.ok(w <= i && i <= rep, `${JSON.stringify(r.matchers ?? 'root')}: ${w} ≤ ${i} ≤ ${rep}`);
      assert.ok(rep >= 3600, 'repeat at most hourly');
    }
    assert.ok(s(hopscopeRoute().group_wait) <= 30);
  });

  it('routes what the proxy pushes to the composite-alert receiver and other alerts to the default (amtool config routes test)', (t) => {
    if (!which('amtool')) return t.skip('amtool not installed (Debian package prometheus-alertmanager)');
    const route = (labels: string[]): string =>
      execFileSync(
        'amtool',
        ['config', 'routes', 'test', `--config.file=${repo('deploy', 'alertmanager', 'alertmanager.yml')}`, ...labels],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }
      ).trim();
    const pushed = [...pushedLabels()].map(([k, v]) => `${k}=${v ?? `sample-${k}`}`);
    assert.equal(route(pushed), hopscopeRoute().receiver);
    assert.equal(route(['alertname=HighErrorRate', 'severity=warning']), am.route.receiver);
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
    const paths = [
      tempo.storage.trace.wal.path,
      tempo.storage.trace.local.path,
      tempo.metrics_generator.storage.path,
      tempo.metrics_generator.traces_storage.path,
    ];
    for (const p of paths) assert.ok(p.startsWith(`${mount}/`), `${p} is under ${mount}`);
    assert.equal(tempo.metrics_generator.storage.remote_write[0].url, 'http://prometheus:9090/api/v1/write');
    const processors = tempo.overrides.defaults.metrics_generator.processors;
    for (const p of ['service-graphs', 'span-metrics']) assert.ok(processors.includes(p), p);
  });

  it('uses only keys Tempo 2.8 reads (it refuses any other at start)', () => {
    assert.deepEqual(unknownTempoKeys(tempo), []);
    assert.deepEqual(
      unknownTempoKeys({ metrics_generator: { processor: { span_metrics: { dimension: ['x'] } } } }),
      ['metrics_generator.processor.span_metrics.dimension'],
      'the check is live'
    );
  });

  it('labels span metrics as the proxy queries them: service, span_kind, status_code, and the pod as k8s_pod_name', () => {
    const sm = tempo.metrics_generator.processor.span_metrics;
    for (const d of ['service', 'span_kind', 'status_code'])
      assert.notEqual(sm.intrinsic_dimensions?.[d], false, `intrinsic ${d} on`);
    assert.ok(sm.dimensions.includes('k8s.pod.name'));
    // Tempo makes a dimension a label as Prometheus sanitises names (every character outside [a-zA-Z0-9_] → _).
    assert.deepEqual(
      sm.dimensions.map((d: string) => d.replace(/[^a-zA-Z0-9_]/g, '_')),
      ['k8s_pod_name']
    );
    // The dimension set in the overrides would replace this list: keep it in one place.
    assert.equal(tempo.overrides.defaults.metrics_generator.processor?.span_metrics?.dimensions, undefined);
    // Buckets in seconds, ascending, up to a minute (LLM requests).
    assert.ok(
      sm.histogram_buckets.every((b: number, i: number, a: number[]) => i === 0 || b > a[i - 1]) &&
        sm.histogram_buckets.at(-1) >= 60
    );
  });
});

/**
 * The keys of Tempo 2.8's config (cmd/tempo/app/config.go and the structs under it, read with yaml UnmarshalStrict),
 * for the sections this stack sets; `true` = any value (a map or list Tempo does not check key by key, e.g. the OTLP
 * receivers' own config). A section not listed here fails: look up its struct in the Tempo 2.8 source and add it.
 */
type KeyTree = { [k: string]: KeyTree | true };
const TEMPO_KEYS: KeyTree = {
  target: true,
  auth_enabled: true,
  multitenancy_enabled: true,
  shutdown_delay: true,
  stream_over_http_enabled: true,
  http_api_prefix: true,
  server: {
    http_listen_port: true,
    http_listen_address: true,
    grpc_listen_port: true,
    grpc_listen_address: true,
    log_level: true,
    log_format: true,
  },
  distributor: { receivers: true, log_received_spans: true, log_discarded_spans: true },
  ingester: {
    max_block_duration: true,
    max_block_bytes: true,
    trace_idle_period: true,
    complete_block_timeout: true,
    concurrent_flushes: true,
    flush_check_period: true,
    flush_all_on_shutdown: true,
    lifecycler: true,
  },
  compactor: {
    disabled: true,
    ring: true,
    compaction: {
      block_retention: true,
      compacted_block_retention: true,
      compaction_window: true,
      max_compaction_objects: true,
      max_block_bytes: true,
      compaction_cycle: true,
      retention_concurrency: true,
    },
  },
  metrics_generator: {
    ring: true,
    registry: {
      collection_interval: true,
      stale_duration: true,
      external_labels: true,
      inject_tenant_id_as: true,
      max_label_name_length: true,
      max_label_value_length: true,
    },
    storage: {
      path: true,
      wal: true,
      remote_write_flush_deadline: true,
      remote_write_add_org_id_header: true,
      remote_write: true,
    },
    traces_storage: {
      path: true,
      v2_encoding: true,
      search_encoding: true,
      ingestion_time_range_slack: true,
      version: true,
    },
    traces_query_storage: { path: true },
    metrics_ingestion_time_range_slack: true,
    query_timeout: true,
    processor: {
      span_metrics: {
        histogram_buckets: true,
        intrinsic_dimensions: {
          service: true,
          span_name: true,
          span_kind: true,
          status_code: true,
          status_message: true,
        },
        dimensions: true,
        dimension_mappings: true,
        enable_target_info: true,
        span_multiplier_key: true,
        filter_policies: true,
        target_info_excluded_dimensions: true,
      },
      service_graphs: {
        wait: true,
        max_items: true,
        workers: true,
        histogram_buckets: true,
        dimensions: true,
        enable_client_server_prefix: true,
        enable_messaging_system_latency_histogram: true,
        peer_attributes: true,
        span_multiplier_key: true,
        enable_virtual_node_label: true,
      },
      local_blocks: true,
      host_info: true,
    },
  },
  storage: {
    trace: {
      backend: true,
      wal: { path: true, v2_encoding: true, search_encoding: true, ingestion_time_range_slack: true, version: true },
      local: { path: true },
      s3: true,
      gcs: true,
      azure: true,
      block: true,
      pool: true,
      search: true,
      blocklist_poll: true,
      cache: true,
    },
  },
  overrides: {
    defaults: {
      ingestion: true,
      read: true,
      global: true,
      storage: true,
      forwarders: true,
      cost_attribution: true,
      compaction: true,
      metrics_generator: {
        processors: true,
        max_active_series: true,
        collection_interval: true,
        disable_collection: true,
        ring_size: true,
        forwarder_queue_size: true,
        forwarder_workers: true,
        generate_native_histograms: true,
        remote_write_headers: true,
        trace_id_label_name: true,
        ingestion_time_range_slack: true,
        processor: true,
      },
    },
    per_tenant_override_config: true,
    per_tenant_override_period: true,
  },
  memberlist: true,
  usage_report: true,
  cache: true,
  querier: true,
  query_frontend: true,
  ingester_client: true,
  metrics_generator_client: true,
};
function unknownTempoKeys(doc: Doc, tree: KeyTree = TEMPO_KEYS, at = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc ?? {})) {
    const spec = tree[k];
    const path = at ? `${at}.${k}` : k;
    if (spec === undefined) out.push(path);
    else if (spec !== true) out.push(...unknownTempoKeys(v, spec, path));
  }
  return out;
}
