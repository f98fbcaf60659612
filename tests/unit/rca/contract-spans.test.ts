import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  EVIDENCE_KINDS,
  EvidenceKind,
  KERNEL_EVENT_TYPES,
  KernelEventType,
  type Span,
  endpointKey,
  isFailedSpan,
  kernelEvidenceKind,
  kvCacheHitRateOfSpan,
  modelFallbackOfSpan,
  peerOfClientSpan,
  podOfSpan,
  podOrServiceOfSpan,
  serverEndpointOfSpan,
  ttftMsOfSpan,
} from '../../../contract';
import { PASSES } from '../../../backend-proxy/src/rca/analyze';
import { sp } from './helpers';

const span = (extra: Partial<Span> = {}): Span =>
  sp('1', undefined, 'llm', 'chat', 'server', 0, 10, { resource: { 'service.name': 'llm' }, ...extra });

test('the pod of a span: resource k8s.pod.name, else the span attribute, else host.name; empty values skipped', () => {
  assert.equal(
    podOfSpan(
      span({ resource: { 'k8s.pod.name': 'p-res', 'host.name': 'h' }, attributes: { 'k8s.pod.name': 'p-attr' } })
    ),
    'p-res'
  );
  assert.equal(
    podOfSpan(span({ resource: { 'k8s.pod.name': '', 'host.name': 'h' }, attributes: { 'k8s.pod.name': 'p-attr' } })),
    'p-attr'
  );
  assert.equal(podOfSpan(span({ resource: { 'host.name': 'h' } })), 'h');
  assert.equal(podOfSpan(span({ resource: { 'k8s.pod.name': 7 } })), undefined);
  assert.equal(podOfSpan(span()), undefined);
  assert.equal(podOrServiceOfSpan(span()), 'llm');
  assert.equal(podOrServiceOfSpan(span({ resource: { 'k8s.pod.name': 'llm-0' } })), 'llm-0');
});

test('failed spans, the peer of a client span, endpoints, TTFT and KV-cache hit rate', () => {
  assert.deepEqual(
    (['ok', 'unset', 'error', 'timeout'] as const).map((status) => isFailedSpan({ status })),
    [false, false, true, true]
  );
  assert.equal(peerOfClientSpan(span({ attributes: { 'server.address': '10.0.0.1', 'peer.service': 'rag' } })), 'rag');
  assert.equal(peerOfClientSpan(span({ attributes: { 'net.peer.name': 'db', 'hopscope.peer': 'x' } })), 'db');
  assert.equal(peerOfClientSpan(span()), undefined);
  assert.equal(endpointKey('::ffff:10.0.0.1', '8443'), '10.0.0.1:8443');
  assert.equal(endpointKey('10.0.0.1', 0), undefined);
  assert.equal(serverEndpointOfSpan(span({ attributes: { 'server.address': 'rag', 'server.port': 443 } })), 'rag:443');
  assert.equal(ttftMsOfSpan(span({ attributes: { 'gen_ai.response.time_to_first_chunk': 0.25 } })), 250);
  assert.equal(
    ttftMsOfSpan(span({ attributes: { 'hopscope.ttft_ms': 12, 'gen_ai.response.time_to_first_chunk': 0.25 } })),
    12
  );
  assert.equal(ttftMsOfSpan(span()), undefined);
  assert.equal(
    kvCacheHitRateOfSpan(
      span({ attributes: { 'gen_ai.usage.input_tokens': 400, 'gen_ai.usage.cache_read.input_tokens': 100 } })
    ),
    0.25
  );
  assert.equal(
    kvCacheHitRateOfSpan(
      span({ attributes: { 'hopscope.kv_cache.hit_rate': '0.5', 'gen_ai.usage.input_tokens': 400 } })
    ),
    0.5
  );
});

test('a model fallback: explicit attributes, or two different models; a dated or tagged alias is the same model', () => {
  const models = (requested: string, served: string): Span =>
    span({ attributes: { 'gen_ai.request.model': requested, 'gen_ai.response.model': served } });
  assert.deepEqual(
    modelFallbackOfSpan(
      span({
        attributes: {
          'hopscope.fallback.from_model': 'a',
          'hopscope.fallback.model': 'b',
          'hopscope.fallback.reason': 'gpu_oom',
        },
      })
    ),
    { requested: 'a', served: 'b', explicit: true, reason: 'gpu_oom' }
  );
  assert.deepEqual(modelFallbackOfSpan(models('llama-3-8b', 'llama-3-1b')), {
    requested: 'llama-3-8b',
    served: 'llama-3-1b',
    explicit: false,
  });
  for (const served of [
    'gpt-4o-2024-08-06',
    'gpt-4-0613',
    'claude-3-5-sonnet-20241022',
    'llama3:8b',
    'gemini-pro@001',
    'gpt-4o',
  ]) {
    const requested = served.startsWith('gpt-4-')
      ? 'gpt-4'
      : served.startsWith('claude')
        ? 'claude-3-5-sonnet'
        : served.startsWith('llama3')
          ? 'llama3'
          : served.startsWith('gemini')
            ? 'gemini-pro'
            : 'gpt-4o';
    assert.equal(modelFallbackOfSpan(models(requested, served)), undefined, served);
  }
  assert.ok(modelFallbackOfSpan(models('gpt-4o', 'gpt-4o-mini')), 'a smaller sibling model is a fallback');
  assert.equal(modelFallbackOfSpan(span({ attributes: { 'gen_ai.request.model': 'a' } })), undefined);
});

test('every evidence kind has a label and a description; every kernel event type has its kind and catalogue entry', () => {
  for (const k of EvidenceKind.options) {
    assert.ok(EVIDENCE_KINDS[k].label.length > 0 && EVIDENCE_KINDS[k].description.length > 0, k);
  }
  for (const t of KernelEventType.options) {
    assert.ok(EvidenceKind.options.includes(kernelEvidenceKind(t)), t);
    const info = KERNEL_EVENT_TYPES[t];
    assert.ok(info.label && info.short && info.noun.one && info.noun.many && info.description, t);
  }
  assert.deepEqual(Object.keys(KERNEL_EVENT_TYPES).sort(), [...KernelEventType.options].sort());
});

test('rca/README.md lists the passes in the order analyze.ts runs them', () => {
  const readme = readFileSync(join(import.meta.dirname, '../../../backend-proxy/src/rca/README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## What one trace goes through'),
    readme.indexOf('## How to add a signal')
  );
  const listed = [...section.matchAll(/^\s*\d+\. \*\*([^*]+)\*\*/gm)].map((m) => m[1]);
  assert.deepEqual(
    listed,
    PASSES.map((p) => p.name)
  );
});
