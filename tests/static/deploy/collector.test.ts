/**
 * deploy/otel-collector/: config.yaml (docker-compose) and config.yaml + kubernetes.yaml merged as the Collector merges
 * two --config files (Kubernetes), each parsed and built only from components of the contrib distribution
 * (otel/opentelemetry-collector-contrib:0.128.0), with every pipeline's components defined and in the right order; the
 * tail_sampling policies well-formed and the weight Tempo's span metrics give a sampled span consistent with them (an
 * estimate of all traffic, simulated here); k8sattributes' association and extraction well-formed; every ${env:…}
 * set where the Collector runs; and — the point of transform/genai — its statements enrich spans exactly as the
 * proxy's ingest does (backend-proxy/src/store/enrich.ts), checked by running both on the same spans: the GenAI
 * fixture traces and a seeded set of synthetic ones.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { enrichSpan } from '../../../backend-proxy/src/store/enrich';
import type { Span } from '../../../contract';
import { parseStatement, runStatements, type SpanData, type Value } from './ottl';
import { fixtures, readYaml, readYamlDocs, type Doc } from './support';

const config = readYaml('deploy', 'otel-collector', 'config.yaml');
const compose = readYaml('docker-compose.yaml');
const k8sDeployment = readYamlDocs('deploy', 'kubernetes', 'otel-collector.yaml').find((d) => d.kind === 'Deployment');

/** How the Collector merges several --config files (confmap, without the mergeAppend feature gate): maps key by key, anything else (lists included) replaced. */
export function mergeConfigs(base: Doc, over: Doc): Doc {
  if (
    base === null ||
    over === null ||
    typeof base !== 'object' ||
    typeof over !== 'object' ||
    Array.isArray(base) ||
    Array.isArray(over)
  )
    return structuredClone(over);
  const out: Doc = structuredClone(base);
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? mergeConfigs(out[k], v) : structuredClone(v);
  return out;
}

/** The config each deployment runs: the files its --config flags name, merged in order. */
function configFiles(args: string[]): string[] {
  return args
    .filter((a) => a.startsWith('--config='))
    .map((a) => a.slice('--config='.length).replace(/^\/etc\/otelcol-contrib\//, ''));
}
const EFFECTIVE: Record<string, { config: Doc; args: string[]; env: Record<string, string> }> = {
  'docker-compose': {
    args: compose.services['otel-collector'].command,
    config: configFiles(compose.services['otel-collector'].command)
      .map((f) => readYaml('deploy', 'otel-collector', f))
      .reduce(mergeConfigs),
    env: compose.services['otel-collector'].environment,
  },
  kubernetes: {
    args: k8sDeployment.spec.template.spec.containers[0].args,
    config: configFiles(k8sDeployment.spec.template.spec.containers[0].args)
      .map((f) => readYaml('deploy', 'otel-collector', f))
      .reduce(mergeConfigs),
    env: Object.fromEntries(k8sDeployment.spec.template.spec.containers[0].env.map((e: Doc) => [e.name, e.value])),
  },
};

/**
 * Components of the contrib distribution (its manifest), by kind — the ones a Hopscope user is likely to need,
 * checked against the manifest of otelcol-contrib 0.128.0, the version docker-compose and the Deployment run.
 * Everything of the core distribution is in contrib too. A name missing here fails the test: check the manifest, add it.
 */
const CONTRIB: Record<string, string[]> = {
  receivers: [
    'otlp',
    'prometheus',
    'hostmetrics',
    'filelog',
    'jaeger',
    'zipkin',
    'kafka',
    'k8s_cluster',
    'kubeletstats',
    'k8s_events',
    'journald',
    'statsd',
    'syslog',
    'httpcheck',
    'receiver_creator',
  ],
  processors: [
    'batch',
    'memory_limiter',
    'attributes',
    'resource',
    'resourcedetection',
    'k8sattributes',
    'filter',
    'transform',
    'tail_sampling',
    'probabilistic_sampler',
    'span',
    'groupbyattrs',
    'groupbytrace',
    'metricstransform',
    'cumulativetodelta',
    'deltatorate',
    'redaction',
  ],
  exporters: [
    'otlp',
    'otlphttp',
    'debug',
    'file',
    'prometheus',
    'prometheusremotewrite',
    'loadbalancing',
    'kafka',
    'zipkin',
    'nop',
  ],
  extensions: [
    'health_check',
    'pprof',
    'zpages',
    'file_storage',
    'bearertokenauth',
    'basicauth',
    'oauth2client',
    'headers_setter',
    'k8s_observer',
  ],
  connectors: ['spanmetrics', 'servicegraph', 'count', 'forward', 'routing', 'roundrobin', 'failover'],
};
/** `transform/genai` → `transform` (the part before the slash is the component type). */
const typeOf = (id: string): string => id.split('/')[0];

function unknownComponents(cfg: Doc): string[] {
  const out: string[] = [];
  for (const kind of Object.keys(CONTRIB))
    for (const id of Object.keys(cfg[kind] ?? {})) if (!CONTRIB[kind].includes(typeOf(id))) out.push(`${kind}.${id}`);
  return out;
}

/** tail_sampling policy types of 0.128.0 and the keys each one's block takes. */
const POLICY_KEYS: Record<string, string[]> = {
  always_sample: [],
  latency: ['threshold_ms', 'upper_threshold_ms'],
  numeric_attribute: ['key', 'min_value', 'max_value', 'invert_match'],
  probabilistic: ['hash_salt', 'sampling_percentage'],
  status_code: ['status_codes'],
  string_attribute: ['key', 'values', 'enabled_regex_matching', 'cache_max_size', 'invert_match'],
  rate_limiting: ['spans_per_second'],
  span_count: ['min_spans', 'max_spans'],
  trace_state: ['key', 'values'],
  boolean_attribute: ['key', 'value', 'invert_match'],
  ottl_condition: ['error_mode', 'span', 'spanevent'],
  and: ['and_sub_policy'],
  composite: ['max_total_spans_per_second', 'policy_order', 'composite_sub_policy', 'rate_allocation'],
};
function policyErrors(policies: Doc[]): string[] {
  const out: string[] = [];
  const names = new Set<string>();
  for (const p of policies) {
    if (typeof p.name !== 'string' || !p.name) out.push('a policy without a name');
    if (names.has(p.name)) out.push(`${p.name}: name used twice`);
    names.add(p.name);
    const keys = POLICY_KEYS[p.type];
    if (!keys) {
      out.push(`${p.name}: type ${p.type} is not a tail_sampling policy`);
      continue;
    }
    for (const k of Object.keys(p))
      if (!['name', 'type', p.type].includes(k)) out.push(`${p.name}: ${k} is not read for type ${p.type}`);
    const c = p[p.type] ?? {};
    for (const k of Object.keys(c))
      if (!keys.includes(k)) out.push(`${p.name}: ${p.type}.${k} is not a key of that policy`);
    if (p.type === 'latency' && !(Number.isInteger(c.threshold_ms) && c.threshold_ms > 0))
      out.push(`${p.name}: latency.threshold_ms must be a positive integer`);
    if (p.type === 'probabilistic' && !(c.sampling_percentage > 0 && c.sampling_percentage <= 100))
      out.push(`${p.name}: sampling_percentage must be in (0, 100]`);
    if (
      p.type === 'status_code' &&
      !(c.status_codes?.length && c.status_codes.every((x: string) => ['OK', 'ERROR', 'UNSET'].includes(x)))
    )
      out.push(`${p.name}: status_codes must be OK, ERROR or UNSET`);
  }
  return out;
}

/** The span attribute Tempo's span_multiplier_key reads: the probability with which the span's trace was kept. */
const WEIGHT_KEY = 'hopscope.sampling.probability';
/** transform/sampling_weight as policy name → probability it writes; refuses any other statement. */
function samplingWeights(): Map<string, number> {
  const t = config.processors['transform/sampling_weight'];
  assert.equal(t.error_mode, 'ignore');
  const out = new Map<string, number>();
  for (const g of t.trace_statements as Doc[]) {
    assert.equal(g.context, 'span');
    for (const st of g.statements as string[]) {
      const m =
        /^set\(attributes\["([^"]+)"\], (\d*\.?\d+)\) where instrumentation_scope\.attributes\["tailsampling\.policy"\] == "([^"]+)"$/.exec(
          st
        );
      assert.ok(m, `a weight statement: ${st}`);
      assert.equal(m[1], WEIGHT_KEY);
      out.set(m[3], Number(m[2]));
    }
  }
  return out;
}

const statements = (): string[] => {
  const ts = config.processors['transform/genai'].trace_statements as Doc[];
  return ts.flatMap((g) => {
    assert.equal(g.context, 'span');
    return g.statements as string[];
  });
};

/** OTLP JSON (fixtures) → the proxy's Span shape and the interpreter's view of the same span. */
function otlpValue(v: Doc): Value | undefined {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  return undefined;
}
function fixtureSpans(): Array<{ attributes: Record<string, Value>; resource: Record<string, Value> }> {
  const dir = fixtures('llm-traces', 'otlp_converted');
  const out = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const doc = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
    for (const rs of doc.resourceSpans ?? []) {
      const resource: Record<string, Value> = {};
      for (const a of rs.resource?.attributes ?? []) {
        const v = otlpValue(a.value ?? {});
        if (v !== undefined) resource[a.key] = v;
      }
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? []) {
          const attributes: Record<string, Value> = {};
          for (const a of s.attributes ?? []) {
            const v = otlpValue(a.value ?? {});
            if (v !== undefined) attributes[a.key] = v;
          }
          out.push({ attributes, resource });
        }
    }
  }
  return out;
}

/** Seeded synthetic spans: every source name the rules know, in random subsets, values valid and invalid. */
function syntheticSpans(n: number): Array<{ attributes: Record<string, Value>; resource: Record<string, Value> }> {
  let seed = 7;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const keys = [...new Set(statements().flatMap((s) => [...s.matchAll(/attributes\["([^"]+)"\]/g)].map((m) => m[1])))];
  const values: Value[] = [
    'llama-3-8b',
    'qwen2.5-7b@v2',
    '',
    0,
    7,
    512,
    513.5,
    2.5,
    -3,
    '42',
    '12.6',
    '-1',
    'abc',
    '1e3',
    true,
    false,
  ];
  const services = ['llm-vllm', 'llm-tgi', 'rag', 'text-generation-inference', 'gateway'];
  const out = [];
  for (let i = 0; i < n; i++) {
    const attributes: Record<string, Value> = {};
    const resource: Record<string, Value> = { 'service.name': pick(services) };
    const k = Math.floor(rnd() * 6);
    for (let j = 0; j < k; j++) (rnd() < 0.6 ? attributes : resource)[pick(keys)] = pick(values);
    out.push({ attributes, resource });
  }
  return out;
}

/** What both paths produce, minus the proxy's bookkeeping attribute. */
function viaProxy(s: { attributes: Record<string, Value>; resource: Record<string, Value> }): Record<string, Value> {
  const span = {
    traceId: '0'.repeat(31) + '1',
    spanId: '0'.repeat(15) + '1',
    name: 'x',
    service: String(s.resource['service.name'] ?? ''),
    attributes: structuredClone(s.attributes),
    resource: structuredClone(s.resource),
  } as unknown as Span;
  const a = { ...enrichSpan(span).attributes } as Record<string, Value>;
  delete a['hopscope.enriched'];
  return a;
}
function viaCollector(s: SpanData): Record<string, Value> {
  return runStatements(statements().map(parseStatement), structuredClone(s)).attributes;
}

describe('OpenTelemetry Collector config', () => {
  it('uses only components of the contrib distribution', () => {
    assert.deepEqual(unknownComponents(config), []);
    assert.deepEqual(
      unknownComponents({ processors: { 'genai_enricher/x': {} } }),
      ['processors.genai_enricher/x'],
      'the check flags a non-contrib component'
    );
  });

  it('uses only components of the contrib distribution, in Kubernetes too (config.yaml + kubernetes.yaml)', () => {
    for (const [where, e] of Object.entries(EFFECTIVE)) assert.deepEqual(unknownComponents(e.config), [], where);
  });

  it('merges two --config files as the Collector does: maps key by key, lists replaced', () => {
    const merged = mergeConfigs({ a: { x: 1, l: [1, 2] }, b: 2 }, { a: { y: 3, l: [9] } });
    assert.deepEqual(merged, { a: { x: 1, y: 3, l: [9] }, b: 2 });
    assert.deepEqual(configFiles(EFFECTIVE.kubernetes.args), ['config.yaml', 'kubernetes.yaml']);
    assert.deepEqual(configFiles(EFFECTIVE['docker-compose'].args), ['config.yaml']);
  });

  for (const [where, { config: cfg, env }] of Object.entries(EFFECTIVE)) {
    describe(where, () => {
      const pipelines = cfg.service.pipelines as Record<string, Doc>;

      it('defines every component a pipeline names, and uses every component it defines', () => {
        for (const ext of cfg.service.extensions ?? []) assert.ok(cfg.extensions?.[ext], `extension ${ext} is defined`);
        const used = new Set<string>();
        for (const [name, p] of Object.entries(pipelines)) {
          for (const kind of ['receivers', 'processors', 'exporters']) {
            assert.ok((p[kind] ?? []).length > 0 || kind === 'processors', `${name}: has ${kind}`);
            for (const id of p[kind] ?? []) {
              assert.ok(cfg[kind]?.[id] !== undefined, `${name}: ${kind}.${id} is defined`);
              used.add(`${kind}.${id}`);
            }
          }
        }
        for (const kind of ['receivers', 'processors', 'exporters'])
          for (const id of Object.keys(cfg[kind] ?? {}))
            assert.ok(used.has(`${kind}.${id}`), `${kind}.${id} is used by a pipeline`);
      });

      it('traces: otlp → memory_limiter first … resourcedetection, transform/genai … tail_sampling → its weight … batch last → Tempo', () => {
        const t = pipelines.traces;
        const at = (id: string): number => t.processors.indexOf(id);
        assert.deepEqual(t.receivers, ['otlp']);
        assert.equal(t.processors[0], 'memory_limiter', 'memory_limiter first');
        assert.equal(t.processors.at(-1), 'batch', 'batch last');
        for (const id of ['resourcedetection', 'transform/genai', 'tail_sampling', 'transform/sampling_weight'])
          assert.ok(at(id) > 0, `${id} in the traces pipeline`);
        // tail_sampling regroups spans by trace: what needs each span's own context, or should count in its decision, comes first.
        for (const before of ['resourcedetection', 'transform/genai'])
          assert.ok(at(before) < at('tail_sampling'), `${before} before tail_sampling`);
        assert.equal(at('transform/sampling_weight'), at('tail_sampling') + 1, 'the weight right after the decision');
        assert.deepEqual(t.exporters, ['otlp/tempo']);
        if (where === 'kubernetes') {
          // It reads the connection the spans came in on: before anything that regroups them (tail_sampling, batch).
          assert.equal(at('k8sattributes'), 1, 'k8sattributes right after memory_limiter');
        } else {
          assert.equal(
            at('k8sattributes'),
            -1,
            'no k8sattributes outside Kubernetes (it needs the API server to start)'
          );
        }
      });

      it("metrics: otlp → memory_limiter … batch → Prometheus's OTLP receiver", () => {
        const m = pipelines.metrics;
        assert.deepEqual(m.receivers, ['otlp']);
        assert.equal(m.processors[0], 'memory_limiter');
        assert.equal(m.processors.at(-1), 'batch');
        assert.deepEqual(m.exporters, ['otlphttp/prometheus']);
        assert.equal(cfg.exporters['otlphttp/prometheus'].endpoint, '${env:PROMETHEUS_OTLP_ENDPOINT}');
        // otlphttp appends /v1/metrics: Prometheus answers OTLP at /api/v1/otlp/v1/metrics (Mimir at /otlp/v1/metrics).
        assert.match(env.PROMETHEUS_OTLP_ENDPOINT, /^http:\/\/[\w.-]+:\d+\/(api\/v1\/)?otlp$/);
        for (const p of Object.values(pipelines))
          assert.ok(!p.processors?.includes('tail_sampling') || p === pipelines.traces, 'tail_sampling only on traces');
      });

      it('sets every ${env:…} the config reads, and the feature gate transform/sampling_weight depends on', () => {
        const refs = [...JSON.stringify(cfg).matchAll(/\$\{env:(\w+)\}/g)].map((m) => m[1]);
        assert.ok(refs.length >= 2);
        for (const r of refs) assert.ok(env[r], `${r} is set`);
        assert.ok(
          EFFECTIVE[where].args.includes('--feature-gates=processor.tailsamplingprocessor.recordpolicy'),
          'recordpolicy gate on'
        );
      });

      it('detects only what is true of every sender (resourcedetection), never overriding the instrumentation', () => {
        const rd = cfg.processors.resourcedetection;
        assert.equal(rd.override, false);
        for (const d of rd.detectors)
          assert.ok(
            ['env', 'system', 'docker', 'k8snode', 'ec2', 'gcp', 'azure', 'eks', 'aks', 'openshift'].includes(d),
            `detector ${d}`
          );
        assert.ok(rd.detectors.includes('env'));
        if (where === 'kubernetes') {
          // A gateway for pods of every node: its own host and node describe none of them (the proxy books a span
          // without k8s.pod.name on its host.name).
          assert.deepEqual(
            rd.detectors.filter((d: string) => ['system', 'docker', 'k8snode'].includes(d)),
            []
          );
        } else {
          assert.deepEqual(rd.system.hostname_sources, ['os']);
          assert.equal(
            compose.services['otel-collector'].hostname,
            compose.services['bpf-exporter'].environment.HOPSCOPE_BPF_NODE,
            "host.name = the exporter's node name"
          );
        }
      });
    });
  }

  it('tail_sampling: well-formed policies that keep errors and slow traces first, then a share of the rest', () => {
    const ts = config.processors.tail_sampling;
    assert.match(ts.decision_wait, /^\d+(ms|s|m)$/);
    assert.ok(Number.isInteger(ts.num_traces) && ts.num_traces > 0);
    assert.deepEqual(policyErrors(ts.policies), []);
    const types = ts.policies.map((p: Doc) => p.type);
    assert.ok(
      ts.policies.some((p: Doc) => p.type === 'status_code' && p.status_code.status_codes.includes('ERROR')),
      'keeps errors'
    );
    assert.ok(types.includes('latency'), 'keeps slow traces');
    assert.ok(types.includes('probabilistic'), 'keeps a share of the rest');
    // The first policy that keeps a trace is the one recorded: a certain keep must be credited before a chance one.
    assert.ok(
      types.lastIndexOf('status_code') < types.indexOf('probabilistic') &&
        types.lastIndexOf('latency') < types.indexOf('probabilistic')
    );
    // The check is live.
    assert.notDeepEqual(policyErrors([{ name: 'x', type: 'latency', latency: { threshold: 5 } }]), []);
    assert.notDeepEqual(
      policyErrors([{ name: 'x', type: 'probabilistic', probabilistic: { sampling_percentage: 0 } }]),
      []
    );
    assert.notDeepEqual(
      policyErrors([{ name: 'x', type: 'status_code', status_code: { status_codes: ['FAILED'] } }]),
      []
    );
    assert.notDeepEqual(policyErrors([{ name: 'x', type: 'tail', tail: {} }]), []);
  });

  it("weights each sampled span by its trace's probability, under the attribute Tempo's span metrics multiply by", () => {
    const weights = samplingWeights();
    const chance = config.processors.tail_sampling.policies.filter(
      (p: Doc) => p.type === 'probabilistic' && p.probabilistic.sampling_percentage < 100
    );
    assert.deepEqual(
      [...weights.keys()].sort(),
      chance.map((p: Doc) => p.name).sort(),
      'one weight per chance policy, none for the certain ones'
    );
    for (const p of chance) assert.equal(weights.get(p.name), p.probabilistic.sampling_percentage / 100, p.name);
    const gen = readYaml('deploy', 'tempo', 'tempo.yaml').metrics_generator.processor;
    assert.equal(gen.span_metrics.span_multiplier_key, WEIGHT_KEY);
    assert.equal(gen.service_graphs.span_multiplier_key, WEIGHT_KEY);
  });

  it('so span metrics estimate all traffic: a simulated 200,000 traces, sampled and weighted as configured', () => {
    const policies = config.processors.tail_sampling.policies as Doc[];
    const weights = samplingWeights();
    let seed = 11;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const truth = { all: 0, errors: 0, slow: 0 };
    const est = { all: 0, errors: 0, slow: 0 };
    let kept = 0;
    for (let i = 0; i < 200_000; i++) {
      const error = rnd() < 0.03;
      const durationMs = rnd() < 0.05 ? 2000 + rnd() * 20_000 : 50 + rnd() * 1500;
      truth.all++;
      if (error) truth.errors++;
      if (durationMs > 2000) truth.slow++;
      // The processor evaluates every policy and credits the first, in order, that keeps the trace.
      const credit = policies.find(
        (p) =>
          (p.type === 'status_code' && error && p.status_code.status_codes.includes('ERROR')) ||
          (p.type === 'latency' && durationMs >= p.latency.threshold_ms) ||
          (p.type === 'probabilistic' && rnd() < p.probabilistic.sampling_percentage / 100)
      );
      if (!credit) continue;
      kept++;
      const w = 1 / (weights.get(credit.name) ?? 1);
      est.all += w;
      if (error) est.errors += w;
      if (durationMs > 2000) est.slow += w;
    }
    assert.ok(kept < truth.all * 0.3, `it samples (${kept} of ${truth.all} kept)`);
    assert.equal(est.errors, truth.errors, 'errors counted exactly');
    assert.equal(est.slow, truth.slow, 'slow requests counted exactly');
    assert.ok(
      Math.abs(est.all - truth.all) / truth.all < 0.02,
      `all requests within 2 % (${Math.round(est.all)} for ${truth.all})`
    );
  });

  it('k8sattributes (Kubernetes): the pod by k8s.pod.uid, k8s.pod.ip or the connection; its name, uid, namespace, node and Deployment', () => {
    const k = EFFECTIVE.kubernetes.config.processors.k8sattributes;
    assert.equal(k.auth_type, 'serviceAccount');
    assert.notEqual(k.passthrough, true, 'a gateway extracts (passthrough only adds the IP)');
    const META = [
      'k8s.namespace.name',
      'k8s.pod.name',
      'k8s.pod.uid',
      'k8s.pod.start_time',
      'k8s.pod.ip',
      'k8s.deployment.name',
      'k8s.deployment.uid',
      'k8s.replicaset.name',
      'k8s.replicaset.uid',
      'k8s.daemonset.name',
      'k8s.statefulset.name',
      'k8s.job.name',
      'k8s.cronjob.name',
      'k8s.node.name',
      'k8s.node.uid',
      'k8s.container.name',
      'container.id',
      'container.image.name',
      'container.image.tag',
      'k8s.cluster.uid',
    ];
    for (const m of k.extract.metadata) assert.ok(META.includes(m), `extract.metadata ${m} is one k8sattributes knows`);
    for (const m of ['k8s.pod.name', 'k8s.pod.uid', 'k8s.namespace.name', 'k8s.node.name', 'k8s.deployment.name'])
      assert.ok(k.extract.metadata.includes(m), m);
    const rules = k.pod_association.map((a: Doc) => {
      assert.ok(a.sources?.length, 'a rule has sources');
      return a.sources;
    });
    for (const src of rules.flat()) {
      assert.ok(['resource_attribute', 'connection'].includes(src.from), `from: ${src.from}`);
      if (src.from === 'resource_attribute')
        assert.ok(typeof src.name === 'string' && src.name, 'resource_attribute names one');
      else assert.equal(src.name, undefined);
    }
    const flat = rules.flat().map((s: Doc) => s.name ?? s.from);
    assert.equal(flat[0], 'k8s.pod.uid', 'the uid first: exact where the SDK or operator set it');
    assert.equal(flat.at(-1), 'connection', 'the connection last');
    assert.equal(config.processors.k8sattributes, undefined, 'not in the docker-compose config');
  });

  it('takes the Tempo endpoint from TEMPO_OTLP_ENDPOINT, which docker-compose and the Kubernetes Deployment set', () => {
    assert.equal(config.exporters['otlp/tempo'].endpoint, '${env:TEMPO_OTLP_ENDPOINT}');
    assert.equal(
      readYaml('docker-compose.yaml').services['otel-collector'].environment.TEMPO_OTLP_ENDPOINT,
      'tempo:4317'
    );
    const dep = readYamlDocs('deploy', 'kubernetes', 'otel-collector.yaml').find((d) => d.kind === 'Deployment');
    assert.ok(dep.spec.template.spec.containers[0].env.some((e: Doc) => e.name === 'TEMPO_OTLP_ENDPOINT' && e.value));
  });

  it('every transform statement is in the checked OTTL subset, and never overwrites an attribute instrumentation set', () => {
    const parsed = statements().map(parseStatement);
    assert.ok(parsed.length > 10);
    for (const s of parsed) {
      if (s.target.scope !== 'attributes') continue;
      const where = s.source.split(' where ')[1] ?? '';
      assert.ok(where.includes(`attributes["${s.target.key}"] == nil`), `guarded by == nil: ${s.source}`);
    }
    assert.throws(() => parseStatement('delete_key(attributes, "x")'), /OTTL subset/);
    assert.throws(
      () => parseStatement('set(attributes["a"], attributes["b"]) where attributes["a"] == nil or true'),
      /OTTL subset/
    );
  });

  it('the interpreter behaves as OTTL: first match wins through cache, nil set is a no-op, cross-type compare is unequal', () => {
    const st = [
      'set(cache["m"], attributes["x"]) where cache["m"] == nil and attributes["x"] != nil',
      'set(cache["m"], resource.attributes["x"]) where cache["m"] == nil and resource.attributes["x"] != nil',
      'set(attributes["out"], Int(Double(cache["m"]) + 0.5)) where attributes["out"] == nil and Double(cache["m"]) >= 0',
    ].map(parseStatement);
    assert.equal(runStatements(st, { attributes: { x: '2.5' }, resource: { x: 9 } }).attributes.out, 3);
    assert.equal(runStatements(st, { attributes: {}, resource: { x: 9 } }).attributes.out, 9);
    assert.equal(runStatements(st, { attributes: { x: 'abc' }, resource: { x: 9 } }).attributes.out, undefined);
    assert.equal(runStatements(st, { attributes: { x: 4, out: 'kept' }, resource: {} }).attributes.out, 'kept');
  });

  it('enriches the GenAI fixture traces exactly as the proxy does', (t) => {
    if (!existsSync(fixtures('llm-traces')))
      return t.skip('fixtures not found beside the repository (../shared/fixtures)');
    const spans = fixtureSpans();
    assert.ok(spans.length > 50);
    let changed = 0;
    for (const s of spans) {
      const want = viaProxy(s);
      assert.deepEqual(viaCollector(s), want);
      if (Object.keys(want).length !== Object.keys(s.attributes).length) changed++;
    }
    t.diagnostic(`${spans.length} fixture spans, ${changed} enriched`);
  });

  it('enriches 5,000 seeded synthetic spans (every source name, valid and invalid values) exactly as the proxy does', () => {
    const spans = syntheticSpans(5000);
    let changed = 0;
    for (const s of spans) {
      const want = viaProxy(s);
      assert.deepEqual(viaCollector(s), want, JSON.stringify(s));
      if (Object.keys(want).length !== Object.keys(s.attributes).length) changed++;
    }
    assert.ok(changed > 1000, `the synthetic spans exercise the rules (${changed} enriched)`);
  });
});
