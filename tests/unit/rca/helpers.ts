import type { Span } from '../../../contract';

export const TRACE = 'a'.repeat(32);

/** A hand-built span: id, parent, service (pod = `${service}-0`), times in ms. */
export function sp(
  spanId: string,
  parentSpanId: string | undefined,
  service: string,
  name: string,
  kind: Span['kind'],
  startMs: number,
  endMs: number,
  extra: Partial<Span> = {}
): Span {
  const s: Span = {
    traceId: TRACE,
    spanId: spanId.padStart(16, '0'),
    name,
    service,
    kind,
    startMs,
    endMs,
    status: 'unset',
    attributes: {},
    resource: { 'service.name': service, 'k8s.pod.name': `${service}-0` },
    ...extra,
  };
  if (parentSpanId !== undefined) s.parentSpanId = parentSpanId.padStart(16, '0');
  return s;
}
