/** The pod a span ran on: one small module, so contract/engines can read it without importing ./spans (which reads
 *  the engines' span shapes). */
import type { Span } from './traces';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/**
 * The pod a span ran on: `k8s.pod.name` (resource, else span attribute), else the resource's `host.name` (in a
 * Kubernetes container the hostname is the pod's name; elsewhere it names the machine, the nearest thing to a pod).
 * Undefined when the span says none of these.
 */
export function podOfSpan(span: Span): string | undefined {
  return str(span.resource['k8s.pod.name']) ?? str(span.attributes['k8s.pod.name']) ?? str(span.resource['host.name']);
}

/** Where a span is booked when something must be: its pod, else its service (one pod per unnamed service). */
export const podOrServiceOfSpan = (span: Span): string => podOfSpan(span) ?? span.service;
