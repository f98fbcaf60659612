/**
 * Zipkin v2 JSON → OTLP JSON, as the OpenTelemetry Collector's zipkin receiver translates it
 * (`pkg/translator/zipkin/zipkinv2`): one resource per local endpoint (`service.name`), the kind mapped
 * (CLIENT/SERVER/PRODUCER/CONSUMER; absent → SPAN_KIND_UNSPECIFIED, or INTERNAL when a `span.kind` tag says so),
 * tags as string attributes, the remote endpoint as `peer.service`/`net.peer.ip`/`net.peer.port`, an `error` tag as
 * status ERROR, µs → ns, and a shared span's id kept as it is (both sides of the RPC under one id). Feeding the result
 * to `otlpToSpans` gives what the proxy sees of Zipkin data that came through a Collector.
 */

export interface ZipkinEndpoint {
  serviceName?: string;
  ipv4?: string;
  ipv6?: string;
  port?: number;
}
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name?: string;
  kind?: 'CLIENT' | 'SERVER' | 'PRODUCER' | 'CONSUMER';
  timestamp?: number;
  duration?: number;
  localEndpoint?: ZipkinEndpoint;
  remoteEndpoint?: ZipkinEndpoint;
  tags?: Record<string, string>;
  shared?: boolean;
}

const KIND: Record<string, string> = {
  CLIENT: 'SPAN_KIND_CLIENT',
  SERVER: 'SPAN_KIND_SERVER',
  PRODUCER: 'SPAN_KIND_PRODUCER',
  CONSUMER: 'SPAN_KIND_CONSUMER',
};
/** The Collector's resource service name for a span without a local endpoint. */
const NO_SERVICE = 'OTLPResourceNoServiceName';

const str = (key: string, v: string): { key: string; value: { stringValue: string } } => ({
  key,
  value: { stringValue: v },
});
const int = (key: string, v: number): { key: string; value: { intValue: string } } => ({
  key,
  value: { intValue: String(v) },
});

/** Zipkin v2 spans (one or many traces) → an OTLP JSON ExportTraceServiceRequest. */
export function zipkinToOtlp(spans: ZipkinSpan[]): { resourceSpans: unknown[] } {
  const byService = new Map<string, unknown[]>();
  for (const z of spans) {
    const service = z.localEndpoint?.serviceName || NO_SERVICE;
    const tags = { ...(z.tags ?? {}) };
    let kind = z.kind ? KIND[z.kind] : 'SPAN_KIND_UNSPECIFIED';
    if (!z.kind && tags['span.kind'] !== undefined) {
      if (tags['span.kind'] === 'internal') kind = 'SPAN_KIND_INTERNAL';
      delete tags['span.kind'];
    }
    const status: Record<string, unknown> = {};
    if (tags.error !== undefined) {
      status.code = 'STATUS_CODE_ERROR';
      if (tags.error === 'true') delete tags.error;
    }
    const attributes: unknown[] = Object.entries(tags).map(([k, v]) => str(k, v));
    const r = z.remoteEndpoint;
    if (r?.serviceName) attributes.push(str('peer.service', r.serviceName));
    if (r?.ipv4 || r?.ipv6) attributes.push(str('net.peer.ip', (r.ipv4 ?? r.ipv6)!));
    if (r?.port) attributes.push(int('net.peer.port', r.port));
    const l = z.localEndpoint;
    if (l?.ipv4 || l?.ipv6) attributes.push(str('net.host.ip', (l.ipv4 ?? l.ipv6)!));
    if (l?.port) attributes.push(int('net.host.port', l.port));
    const startNs = BigInt(z.timestamp ?? 0) * 1000n;
    const span: Record<string, unknown> = {
      traceId: z.traceId.padStart(32, '0'),
      spanId: z.id.padStart(16, '0'),
      name: z.name ?? '',
      kind,
      startTimeUnixNano: String(startNs),
      endTimeUnixNano: String(startNs + BigInt(z.duration ?? 0) * 1000n),
      attributes,
      status,
    };
    if (z.parentId && z.parentId !== z.id) span.parentSpanId = z.parentId.padStart(16, '0');
    const list = byService.get(service);
    if (list) list.push(span);
    else byService.set(service, [span]);
  }
  return {
    resourceSpans: [...byService].map(([service, list]) => ({
      resource: { attributes: [str('service.name', service)] },
      scopeSpans: [{ scope: { name: 'zipkin' }, spans: list }],
    })),
  };
}

/** The same spans as a producer that sets no kind would send them (Zipkin lets `kind` be absent). */
export const withoutKinds = (spans: ZipkinSpan[]): ZipkinSpan[] => spans.map(({ kind: _kind, ...z }) => z);
