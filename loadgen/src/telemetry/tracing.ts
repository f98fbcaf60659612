/**
 * One TracerProvider per hop replica, so each span carries its own pod's resource (service.name, k8s.pod.name,
 * k8s.node.name, k8s.namespace.name) even when several simulated pods share one process. The operator's resource
 * attributes (OTEL_RESOURCE_ATTRIBUTES) are merged underneath: a hop's identity always wins. W3C trace context and
 * baggage are the global propagators; async-hooks context follows requests across awaits.
 */
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Context } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { AdaptiveSampler, parentBasedAdaptive } from './adaptive-sampler';
import { KeepErrorsSpanProcessor } from './keep-errors-processor';

let globalsInstalled = false;

/** Installs the context manager and propagators once per process (idempotent). */
export function installTelemetryGlobals(): void {
  if (globalsInstalled) return;
  globalsInstalled = true;
  const cm = new AsyncLocalStorageContextManager();
  cm.enable();
  context.setGlobalContextManager(cm);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })
  );
}

export interface HopIdentity {
  service: string;
  pod: string;
  node: string;
  namespace: string;
}

export interface HopTelemetryOptions {
  tracing: boolean;
  otlpEndpoint: string;
  otlpProtocol?: 'http/protobuf' | 'http/json';
  otlpHeaders?: Record<string, string>;
  /** service.namespace of the hop (default hopscope). */
  serviceNamespace?: string;
  /** Extra resource attributes, beneath the hop's own. */
  resourceAttributes?: Record<string, string>;
  samplerBaseRate: number;
  samplerMinRate: number;
  samplerP99KneeMs: number;
  samplerAdaptive?: boolean;
  registry?: Registry;
  /** Extra span processors (tests use an in-memory exporter). */
  extraProcessors?: SpanProcessor[];
}

export interface HopTelemetry {
  tracer: Tracer;
  sampler?: AdaptiveSampler;
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
}

/** Feeds finished local-root spans' latencies to the adaptive sampler (its P99 knee signal). */
class LatencyFeed implements SpanProcessor {
  constructor(private readonly sampler: AdaptiveSampler) {}
  onStart(_s: Span, _c: Context): void {}
  onEnd(span: ReadableSpan): void {
    if (!span.parentSpanContext || span.parentSpanContext.isRemote) {
      this.sampler.observeLatency(span.duration[0] * 1000 + span.duration[1] / 1e6);
    }
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export function createHopTelemetry(id: HopIdentity, opts: HopTelemetryOptions): HopTelemetry {
  installTelemetryGlobals();
  if (!opts.tracing) {
    // No SDK at all: the API's no-op tracer still propagates the incoming trace context (for the overhead bench).
    return { tracer: trace.getTracer('hopscope-chain-noop'), shutdown: async () => {}, forceFlush: async () => {} };
  }
  const sampler = new AdaptiveSampler({
    baseRate: opts.samplerBaseRate,
    minRate: opts.samplerMinRate,
    p99KneeMs: opts.samplerP99KneeMs,
    adaptive: opts.samplerAdaptive ?? true,
    // No service label: Prometheus adds service/pod as target labels (a metric label would become exported_service).
    registry: opts.registry,
  });
  const exporterConfig = { url: opts.otlpEndpoint, timeoutMillis: 5000, headers: opts.otlpHeaders ?? {} };
  const exporter =
    opts.otlpProtocol === 'http/json' ? new OTLPJsonExporter(exporterConfig) : new OTLPProtoExporter(exporterConfig);
  const batch = new BatchSpanProcessor(exporter, {
    maxQueueSize: 8192,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 500,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      ...opts.resourceAttributes,
      'service.name': id.service,
      'service.namespace': opts.serviceNamespace ?? 'hopscope',
      'k8s.pod.name': id.pod,
      'k8s.node.name': id.node,
      'k8s.namespace.name': id.namespace,
      'host.name': id.node,
    }),
    sampler: parentBasedAdaptive(sampler),
    spanProcessors: [new KeepErrorsSpanProcessor(batch), new LatencyFeed(sampler), ...(opts.extraProcessors ?? [])],
  });
  return {
    tracer: provider.getTracer('hopscope-chain', '0.1.0'),
    sampler,
    shutdown: () => provider.shutdown(),
    forceFlush: () => provider.forceFlush(),
  };
}
