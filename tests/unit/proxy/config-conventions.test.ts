/**
 * Conventions users configure by: the scrape interval behind every rate window ($__rate_interval's rule), source
 * credentials (one scheme for Prometheus, Tempo, Alertmanager; errors that never repeat a secret), the live
 * root-cause settings file (JSON or YAML, checked by the engine's schema at start), and the standard OTEL_* variables
 * for the proxy's own traces (HOPSCOPE_PROXY_OTLP_URL as the fallback).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configFromEnv } from '../../../backend-proxy/src/config';
import { goldenPlans, rateIntervalMs } from '../../../backend-proxy/src/services/promql';
import { authHeaders, describeAuth } from '../../../backend-proxy/src/sources/auth';
import { selfTracingFromEnv } from '../../../backend-proxy/src/telemetry';

const throwsNaming = (fn: () => unknown, name: string, secret?: string): void => {
  assert.throws(fn, (e: Error) => {
    assert.ok(e instanceof ConfigError, `${e.name}: ${e.message}`);
    assert.match(e.message, new RegExp(name));
    if (secret) assert.ok(!e.message.includes(secret), `the message repeats the secret: ${e.message}`);
    return true;
  });
};

describe('rate windows follow the scrape interval', () => {
  it('HOPSCOPE_SCRAPE_INTERVAL: default 15s, Prometheus durations, bounded', () => {
    assert.equal(configFromEnv({}).scrapeIntervalMs, 15_000);
    assert.equal(configFromEnv({ HOPSCOPE_SCRAPE_INTERVAL: '5s' }).scrapeIntervalMs, 5000);
    assert.equal(configFromEnv({ HOPSCOPE_SCRAPE_INTERVAL: '1m' }).scrapeIntervalMs, 60_000);
    assert.equal(configFromEnv({ HOPSCOPE_SCRAPE_INTERVAL: '30' }).scrapeIntervalMs, 30_000);
    for (const bad of ['fast', '500ms', '2h', '-5s'])
      throwsNaming(() => configFromEnv({ HOPSCOPE_SCRAPE_INTERVAL: bad }), 'HOPSCOPE_SCRAPE_INTERVAL');
  });

  it("max(step + scrape, 4 × scrape), as Grafana's $__rate_interval", () => {
    for (const [step, scrape] of [
      [5000, 5000],
      [60_000, 15_000],
      [1000, 15_000],
      [300_000, 1000],
    ]) {
      const w = rateIntervalMs(step, scrape);
      assert.equal(w, Math.max(step + scrape, 4 * scrape));
      assert.ok(
        goldenPlans({ stepMs: step, scrapeMs: scrape, backend: 'vllm' }).plans.every((p) =>
          p.query.includes(`[${Math.ceil(w / 1000)}s]`)
        ),
        `${step}/${scrape}`
      );
    }
    // The demo: Prometheus every 5 s, a 5 s step → 20 s windows (the old fixed minimum was 30 s).
    assert.ok(goldenPlans({ stepMs: 5000, scrapeMs: 5000 }).plans[0].query.includes('[20s]'));
  });
});

describe('source credentials', () => {
  it('basic, bearer and tenant per source, as headers', () => {
    const c = configFromEnv({
      HOPSCOPE_PROMETHEUS_URL: 'https://mimir.example/prometheus',
      HOPSCOPE_PROMETHEUS_BASIC_AUTH: 'reader:pa:ss',
      HOPSCOPE_PROMETHEUS_ORG_ID: 'team-a|team-b',
      HOPSCOPE_TEMPO_URL: 'http://tempo:3200',
      HOPSCOPE_TEMPO_BEARER_TOKEN: 'tok-123',
      HOPSCOPE_ALERTMANAGER_ORG_ID: 'team-a',
    });
    assert.deepEqual(authHeaders(c.sourceAuth.prometheus), {
      authorization: `Basic ${Buffer.from('reader:pa:ss').toString('base64')}`,
      'x-scope-orgid': 'team-a|team-b',
    });
    assert.deepEqual(authHeaders(c.sourceAuth.tempo), { authorization: 'Bearer tok-123' });
    assert.deepEqual(authHeaders(c.sourceAuth.alertmanager), { 'x-scope-orgid': 'team-a' });
    assert.equal(describeAuth(c.sourceAuth.prometheus), 'basic (user reader), X-Scope-OrgID team-a|team-b');
    assert.ok(!describeAuth(c.sourceAuth.tempo).includes('tok-123'));
    assert.deepEqual(configFromEnv({}).sourceAuth, {});
  });

  it('bad settings name the variable and never repeat the secret', () => {
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_PROMETHEUS_BASIC_AUTH: 'no-colon-s3cret' }),
      'HOPSCOPE_PROMETHEUS_BASIC_AUTH',
      'no-colon-s3cret'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_TEMPO_BASIC_AUTH: 'a:b', HOPSCOPE_TEMPO_BEARER_TOKEN: 'x' }),
      'HOPSCOPE_TEMPO_BASIC_AUTH and HOPSCOPE_TEMPO_BEARER_TOKEN'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_ALERTMANAGER_BEARER_TOKEN: 'two words-s3cret' }),
      'HOPSCOPE_ALERTMANAGER_BEARER_TOKEN',
      's3cret'
    );
    throwsNaming(() => configFromEnv({ HOPSCOPE_PROMETHEUS_ORG_ID: 'a b' }), 'HOPSCOPE_PROMETHEUS_ORG_ID');
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_PROMETHEUS_URL: 'http://user:hunter2@prom:9090' }),
      'HOPSCOPE_PROMETHEUS_URL.*HOPSCOPE_PROMETHEUS_BASIC_AUTH',
      'hunter2'
    );
  });
});

describe('live root-cause settings (HOPSCOPE_RCA_CONFIG)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-rca-config-'));
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("JSON and YAML, checked by the engine's schema", () => {
    const json = configFromEnv({
      HOPSCOPE_RCA_CONFIG: file(
        'rca.json',
        JSON.stringify({
          sloMs: { gateway: 2000 },
          lambda: { kvCacheLowHit: 1.5 },
          expectedEdges: [['gateway', 'rag']],
        })
      ),
    });
    assert.deepEqual(json.rcaConfig, {
      sloMs: { gateway: 2000 },
      lambda: { kvCacheLowHit: 1.5 },
      expectedEdges: [['gateway', 'rag']],
    });
    const yaml = configFromEnv({
      HOPSCOPE_RCA_CONFIG: file(
        'rca.yaml',
        'sloMs:\n  gateway: 1500\n  rag: 300\nexpectedEdges:\n  - [gateway, embedding]\n  - [embedding, vector-cache]\n'
      ),
    });
    assert.deepEqual(yaml.rcaConfig, {
      sloMs: { gateway: 1500, rag: 300 },
      expectedEdges: [
        ['gateway', 'embedding'],
        ['embedding', 'vector-cache'],
      ],
    });
    assert.equal(yaml.rcaConfigFile, join(dir, 'rca.yaml'));
    assert.deepEqual(configFromEnv({ HOPSCOPE_RCA_CONFIG: file('empty.yaml', '') }).rcaConfig, {});
    assert.equal(configFromEnv({}).rcaConfig, undefined);
  });

  it('clear errors at start: a missing file, a parse error, a typo, a bad value', () => {
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_RCA_CONFIG: join(dir, 'absent.json') }),
      'HOPSCOPE_RCA_CONFIG: cannot read .*ENOENT'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_RCA_CONFIG: file('broken.json', '{"sloMs": ') }),
      'HOPSCOPE_RCA_CONFIG: .* is not valid JSON'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_RCA_CONFIG: file('broken.yaml', 'sloMs: [1, 2\n') }),
      'HOPSCOPE_RCA_CONFIG: .* is not valid YAML'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_RCA_CONFIG: file('typo.yaml', 'sloMS:\n  gateway: 1\n') }),
      'HOPSCOPE_RCA_CONFIG: .*sloMS'
    );
    throwsNaming(
      () => configFromEnv({ HOPSCOPE_RCA_CONFIG: file('neg.json', '{"sloMs": {"gateway": -5}}') }),
      'HOPSCOPE_RCA_CONFIG: .*sloMs\\.gateway'
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("OTEL_* for the proxy's own traces", () => {
  it('the signal endpoint as is, the base endpoint + /v1/traces, HOPSCOPE_PROXY_OTLP_URL as the fallback', () => {
    assert.equal(selfTracingFromEnv({}).endpoint, undefined);
    assert.equal(
      selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/' }).endpoint,
      'http://otel:4318/v1/traces'
    );
    assert.equal(
      selfTracingFromEnv({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://otel:4318/custom',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:1',
      }).endpoint,
      'http://otel:4318/custom'
    );
    const old = selfTracingFromEnv({ HOPSCOPE_PROXY_OTLP_URL: 'http://127.0.0.1:3301/v1/traces' });
    assert.deepEqual(
      [old.endpoint, old.protocol, old.from],
      ['http://127.0.0.1:3301/v1/traces', 'http/json', 'HOPSCOPE_PROXY_OTLP_URL']
    );
    assert.equal(
      selfTracingFromEnv({ HOPSCOPE_PROXY_OTLP_URL: 'http://a:1/v1/traces', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:2' })
        .endpoint,
      'http://b:2/v1/traces',
      'OTEL_* wins'
    );
    assert.equal(selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:2' }).protocol, 'http/protobuf');
    assert.equal(
      selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:2', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })
        .protocol,
      'http/json'
    );
  });

  it('headers, service name and resource attributes; off switches', () => {
    const c = selfTracingFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%3Db,x-tenant=t1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=t2',
      OTEL_SERVICE_NAME: 'proxy-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=p-0,service.name=ignored',
    });
    assert.deepEqual(c.headers, { 'api-key': 'a=b', 'x-tenant': 't2' });
    assert.equal(c.serviceName, 'proxy-eu');
    assert.equal(c.resource['k8s.pod.name'], 'p-0');
    assert.equal(selfTracingFromEnv({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs' }).serviceName, 'from-attrs');
    assert.equal(selfTracingFromEnv({}).serviceName, 'hopscope-proxy');
    assert.equal(
      selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:2', OTEL_SDK_DISABLED: 'true' }).endpoint,
      undefined
    );
    assert.equal(
      selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:2', OTEL_TRACES_EXPORTER: 'none' }).endpoint,
      undefined
    );
  });

  it('bad values name the variable', () => {
    throwsNaming(() => selfTracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel:4317' }), 'OTEL_EXPORTER_OTLP_ENDPOINT');
    throwsNaming(() => selfTracingFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), 'OTEL_EXPORTER_OTLP_PROTOCOL=grpc');
    throwsNaming(() => selfTracingFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' }), 'OTEL_TRACES_EXPORTER');
    throwsNaming(() => selfTracingFromEnv({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }), 'OTEL_EXPORTER_OTLP_HEADERS');
    throwsNaming(() => selfTracingFromEnv({ HOPSCOPE_PROXY_OTLP_URL: 'ftp://x' }), 'HOPSCOPE_PROXY_OTLP_URL');
  });
});
