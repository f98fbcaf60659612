import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOtelList } from '../../../contract/otel-env';
import { controlBindProblem, loadChainConfig } from '../../../loadgen/src/config';

const load = (env: Record<string, string>) => loadChainConfig({}, env);

describe('chain configuration: OpenTelemetry SDK variables', () => {
  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is; OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces; HOPSCOPE_OTLP_ENDPOINT is the fallback', () => {
    assert.equal(load({}).otlpEndpoint, 'http://127.0.0.1:3301/v1/traces');
    assert.equal(load({ HOPSCOPE_OTLP_ENDPOINT: 'http://h:1/v1/traces' }).otlpEndpoint, 'http://h:1/v1/traces');
    assert.equal(
      load({ HOPSCOPE_OTLP_ENDPOINT: 'http://h:1/v1/traces', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })
        .otlpEndpoint,
      'http://collector:4318/v1/traces'
    );
    assert.equal(
      load({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/base',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/custom',
      }).otlpEndpoint,
      'http://t:9/custom'
    );
  });

  it('protocol: the traces-specific variable, then the general one, then HOPSCOPE_OTLP_PROTOCOL; grpc is refused clearly', () => {
    assert.equal(load({ HOPSCOPE_OTLP_PROTOCOL: 'http/json' }).otlpProtocol, 'http/json');
    assert.equal(
      load({ HOPSCOPE_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).otlpProtocol,
      'http/protobuf'
    );
    assert.equal(
      load({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })
        .otlpProtocol,
      'http/json'
    );
    assert.throws(
      () => load({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc: .*http\/protobuf or http\/json/
    );
  });

  it('headers and resource attributes: key=value lists with URL-encoded values, signal-specific headers win', () => {
    const c = load({
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%3D%3D,x-tenant=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=b',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=demo,team=ml%20ops',
    });
    assert.deepEqual(c.otlpHeaders, { 'api-key': 'abc==', 'x-tenant': 'b' });
    assert.deepEqual(c.resourceAttributes, { 'deployment.environment.name': 'demo', team: 'ml ops' });
    assert.throws(
      () => parseOtelList('OTEL_RESOURCE_ATTRIBUTES', 'novalue'),
      /OTEL_RESOURCE_ATTRIBUTES: "novalue" is not key=value/
    );
    assert.throws(() => parseOtelList('OTEL_EXPORTER_OTLP_HEADERS', 'k=%E0%A4%A'), /not URL-encoded/);
  });

  it('OTEL_SERVICE_NAME names the chain (service.namespace): each hop stays its own service.name', () => {
    assert.equal(load({}).serviceNamespace, 'hopscope');
    assert.equal(load({ OTEL_RESOURCE_ATTRIBUTES: 'service.namespace=shop' }).serviceNamespace, 'shop');
    assert.equal(
      load({ OTEL_RESOURCE_ATTRIBUTES: 'service.namespace=shop', OTEL_SERVICE_NAME: 'ai-chain' }).serviceNamespace,
      'ai-chain'
    );
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn tracing off; other exporters are refused', () => {
    assert.equal(load({}).tracing, true);
    assert.equal(load({ OTEL_SDK_DISABLED: 'true' }).tracing, false);
    assert.equal(load({ OTEL_TRACES_EXPORTER: 'none', HOPSCOPE_TRACING: 'on' }).tracing, false);
    assert.equal(load({ HOPSCOPE_TRACING: 'off', OTEL_TRACES_EXPORTER: 'otlp' }).tracing, false);
    assert.throws(() => load({ OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER=zipkin/);
  });

  it('overrides (what tests and the CLI pass) win over every variable', () => {
    assert.equal(
      loadChainConfig(
        { otlpEndpoint: 'http://x:1/v1/traces' },
        { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/custom' }
      ).otlpEndpoint,
      'http://x:1/v1/traces'
    );
  });
});

describe('chain configuration: the control API token', () => {
  it('a non-loopback bind without HOPSCOPE_CHAIN_TOKEN is a problem; loopback or a token is not', () => {
    assert.match(
      controlBindProblem(load({ HOPSCOPE_CHAIN_HOST: '0.0.0.0' }))!,
      /refusing to bind the control API to 0\.0\.0\.0 without a token.*HOPSCOPE_CHAIN_TOKEN/
    );
    assert.equal(
      controlBindProblem(load({ HOPSCOPE_CHAIN_HOST: '0.0.0.0', HOPSCOPE_CHAIN_TOKEN: 's3cret-token' })),
      undefined
    );
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1'])
      assert.equal(controlBindProblem(load({ HOPSCOPE_CHAIN_HOST: host })), undefined, host);
    assert.throws(() => load({ HOPSCOPE_CHAIN_TOKEN: 'has space' }), /controlToken: must not contain whitespace/);
  });
});

describe('chain configuration: the exporter token', () => {
  it('HOPSCOPE_EXPORTER_TOKEN is the exporterToken (trimmed, blank = none); one with whitespace inside is refused without showing it', () => {
    assert.equal(load({ HOPSCOPE_EXPORTER_TOKEN: ' bpf-token-0123 ' }).exporterToken, 'bpf-token-0123');
    assert.equal(load({}).exporterToken, undefined);
    assert.equal(load({ HOPSCOPE_EXPORTER_TOKEN: '   ' }).exporterToken, undefined);
    assert.throws(
      () => load({ HOPSCOPE_EXPORTER_TOKEN: 'two secret-words' }),
      (e: Error) => /exporterToken: must not contain whitespace/.test(e.message) && !e.message.includes('secret')
    );
  });
});

describe('chain configuration: the LLM engines’ limits', () => {
  it('HOPSCOPE_LLM_MAX_NUM_SEQS and HOPSCOPE_LLM_NUM_GPU_BLOCKS set them; unset leaves the defaults; bad values are refused', () => {
    assert.equal(load({}).llmMaxNumSeqs, undefined);
    const c = load({ HOPSCOPE_LLM_MAX_NUM_SEQS: '2', HOPSCOPE_LLM_NUM_GPU_BLOCKS: '512' });
    assert.equal(c.llmMaxNumSeqs, 2);
    assert.equal(c.llmNumGpuBlocks, 512);
    assert.throws(() => load({ HOPSCOPE_LLM_MAX_NUM_SEQS: '0' }), /llmMaxNumSeqs/);
    assert.throws(() => load({ HOPSCOPE_LLM_NUM_GPU_BLOCKS: 'many' }), /llmNumGpuBlocks/);
  });
});
