/**
 * The labels every probe metric starts with: pod, namespace, node, then one per configured workload label
 * (HOPSCOPE_BPF_POD_LABELS, e.g. `app.kubernetes.io/name` → `label_app_kubernetes_io_name`, kube-state-metrics'
 * spelling). A short allow-list on purpose: every label multiplies the series a node exports.
 */
import type { KernelEvent } from '../../../contract';
import type { PodLabelSet, PodLabelValues } from './probe';

export const POD_LABELS = ['pod', 'namespace', 'node'] as const;

/** Prometheus label name of a Kubernetes label key. */
export const metricLabelName = (key: string): string => `label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;

export function podLabelSet(workloadLabels: readonly string[]): PodLabelSet & {
  values(pod: string, namespace: string, node: string, labels?: Record<string, string>): PodLabelValues;
} {
  const extra = workloadLabels.map((k) => [k, metricLabelName(k)] as const);
  const values = (pod: string, namespace: string, node: string, labels?: Record<string, string>): PodLabelValues => {
    const v: PodLabelValues = { pod, namespace, node };
    for (const [k, name] of extra) v[name] = labels?.[k] ?? '';
    return v;
  };
  return {
    names: [...POD_LABELS, ...extra.map(([, n]) => n)],
    values,
    ofEvent: (e: KernelEvent) => values(e.pod ?? '', e.namespace ?? '', e.node ?? '', e.labels),
  };
}
