/**
 * The proxy's own traces: spans from @opentelemetry/api (around each source call and each root-cause run) are
 * exported over OTLP/HTTP when HOPSCOPE_PROXY_OTLP_URL is set; otherwise the API stays a no-op (zero cost).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export function startSelfTracing(otlpUrl: string | undefined): () => Promise<void> {
  if (!otlpUrl) return async () => {};
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'hopscope-proxy', 'service.namespace': 'hopscope' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpUrl, timeoutMillis: 5000 }))],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return () => provider.shutdown();
}
