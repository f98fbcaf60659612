/**
 * deploy/otel-collector/config.yaml: parsed, built only from components of the contrib distribution
 * (otel/opentelemetry-collector-contrib), wired into a traces pipeline, and — the point of it — its transform/genai
 * statements enrich spans exactly as the proxy's ingest does (backend-proxy/src/store/enrich.ts), checked by running
 * both on the same spans: the GenAI fixture traces and a seeded set of synthetic ones.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { enrichSpan } from '../../../backend-proxy/src/store/enrich';
import type { Span } from '../../../contract';
import { parseStatement, runStatements, type SpanData, type Value } from './ottl';
import { fixtures, readYaml, readYamlDocs, type Doc } from './support';

const config = readYaml('deploy', 'otel-collector', 'config.yaml');

/**
 * Components of the contrib distribution (its manifest), by kind — the ones a Hopscope user is likely to need.
 * Everything of the core distribution is in contrib too. A name missing here fails the test: check the manifest, add it.
 */
const CONTRIB: Record<string, string[]> = {
  receivers: ['otlp', 'prometheus', 'hostmetrics', 'filelog', 'jaeger', 'zipkin', 'kafka', 'k8s_cluster', 'kubeletstats', 'k8s_events', 'journald', 'statsd', 'syslog', 'httpcheck', 'receiver_creator'],
  processors: ['batch', 'memory_limiter', 'attributes', 'resource', 'resourcedetection', 'k8sattributes', 'filter', 'transform', 'tail_sampling', 'probabilistic_sampler', 'span', 'groupbyattrs', 'groupbytrace', 'metricstransform', 'cumulativetodelta', 'deltatorate', 'redaction'],
  exporters: ['otlp', 'otlphttp', 'debug', 'file', 'prometheus', 'prometheusremotewrite', 'loadbalancing', 'kafka', 'zipkin', 'nop'],
  extensions: ['health_check', 'pprof', 'zpages', 'file_storage', 'bearertokenauth', 'basicauth', 'oauth2client', 'headers_setter', 'k8s_observer'],
  connectors: ['spanmetrics', 'servicegraph', 'count', 'forward', 'routing', 'roundrobin', 'failover'],
};
/** `transform/genai` → `transform` (the part before the slash is the component type). */
const typeOf = (id: string): string => id.split('/')[0];

function unknownComponents(cfg: Doc): string[] {
  const out: string[] = [];
  for (const kind of Object.keys(CONTRIB)) for (const id of Object.keys(cfg[kind] ?? {})) if (!CONTRIB[kind].includes(typeOf(id))) out.push(`${kind}.${id}`);
  return out;
}

const statements = (): string[] => {
  const ts = config.processors['transform/genai'].trace_statements as Doc[];
  return ts.flatMap((g) => { assert.equal(g.context, 'span'); return g.statements as string[]; });
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
      for (const a of rs.resource?.attributes ?? []) { const v = otlpValue(a.value ?? {}); if (v !== undefined) resource[a.key] = v; }
      for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) {
        const attributes: Record<string, Value> = {};
        for (const a of s.attributes ?? []) { const v = otlpValue(a.value ?? {}); if (v !== undefined) attributes[a.key] = v; }
        out.push({ attributes, resource });
      }
    }
  }
  return out;
}

/** Seeded synthetic spans: every source name the rules know, in random subsets, values valid and invalid. */
function syntheticSpans(n: number): Array<{ attributes: Record<string, Value>; resource: Record<string, Value> }> {
  let seed = 7;
  const rnd = (): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const keys = [...new Set(statements().flatMap((s) => [...s.matchAll(/attributes\["([^"]+)"\]/g)].map((m) => m[1])))];
  const values: Value[] = ['llama-3-8b', 'qwen2.5-7b@v2', '', 0, 7, 512, 513.5, 2.5, -3, '42', '12.6', '-1', 'abc', '1e3', true, false];
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
  const span = { traceId: '0'.repeat(31) + '1', spanId: '0'.repeat(15) + '1', name: 'x', service: String(s.resource['service.name'] ?? ''), attributes: structuredClone(s.attributes), resource: structuredClone(s.resource) } as unknown as Span;
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
    assert.deepEqual(unknownComponents({ processors: { 'genai_enricher/x': {} } }), ['processors.genai_enricher/x'], 'the check flags a non-contrib component');
  });

  it('defines every component a pipeline names, and runs otlp → memory_limiter … transform/genai … batch → Tempo', () => {
    const svc = config.service;
    for (const ext of svc.extensions ?? []) assert.ok(config.extensions?.[ext], `extension ${ext} is defined`);
    for (const [name, p] of Object.entries(svc.pipelines as Record<string, Doc>)) {
      for (const kind of ['receivers', 'processors', 'exporters']) for (const id of p[kind] ?? []) assert.ok(config[kind]?.[id] !== undefined, `${name}: ${kind}.${id} is defined`);
    }
    const traces = svc.pipelines.traces;
    assert.deepEqual(traces.receivers, ['otlp']);
    assert.equal(traces.processors[0], 'memory_limiter', 'memory_limiter first');
    assert.equal(traces.processors.at(-1), 'batch', 'batch last');
    assert.ok(traces.processors.includes('transform/genai'));
    assert.ok(traces.exporters.some((e: string) => typeOf(e) === 'otlp'));
  });

  it('takes the Tempo endpoint from TEMPO_OTLP_ENDPOINT, which docker-compose and the Kubernetes Deployment set', () => {
    assert.equal(config.exporters['otlp/tempo'].endpoint, '${env:TEMPO_OTLP_ENDPOINT}');
    assert.equal(readYaml('docker-compose.yaml').services['otel-collector'].environment.TEMPO_OTLP_ENDPOINT, 'tempo:4317');
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
    assert.throws(() => parseStatement('set(attributes["a"], attributes["b"]) where attributes["a"] == nil or true'), /OTTL subset/);
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
    if (!existsSync(fixtures('llm-traces'))) return t.skip('fixtures not found beside the repository (../shared/fixtures)');
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
