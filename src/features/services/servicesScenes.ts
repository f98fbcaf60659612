/**
 * The drill-down as Grafana panels on the data source: Services (a table: requests, RPS, error rate, P50/P99, kernel
 * signals) → a service (its pods and its slowest traces) → a pod (its kernel evidence as lanes, the TLS handshake
 * latency histogram, the events whose trace ids open their root cause, and the slowest traces). Each name in a table
 * is its drill-down link; each level is its own URL (`services/:service/pods/:pod`) keeping the range and variables.
 */
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  VizPanelBuilder,
  type SceneObject,
  type VizPanel,
} from '@grafana/scenes';

import { hopscopeQuery, partRefId } from '../../datasource/query';
import { KERNEL_LANES_PANEL, type KernelLanesOptions } from '../../panels/kernelLanes';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';

/** How many traces of the range are scanned for a service's slowest (the proxy returns them slowest first). */
const TRACE_SCAN = 1000;

const table = (title: string, key: string, sortBy: string, description?: string) =>
  hopscopePanel(
    PanelBuilders.table()
      .setTitle(title)
      .setDescription(description)
      .setOption('sortBy', [{ displayName: sortBy, desc: true }])
      .setOption('cellHeight', 'sm' as never),
    { key }
  );

const item = (height: number, body: SceneObject) => new SceneFlexItem({ height, body });

function slowestTraces(service: string, key: string): VizPanel {
  const panel = table(`Slowest traces through ${service}`, key, 'Duration', 'Click a trace id to open its root cause.');
  panel.setState({ $data: hopscopeRunner(hopscopeQuery('traces', { service, limit: TRACE_SCAN, top: 20 })) });
  return panel;
}

export function servicesBody(): SceneObject {
  const panel = table(
    'Services',
    'services',
    'P99',
    'Every traced service of the range; the kernel signals are summed over its pods. Click a service to see its pods.'
  );
  panel.setState({ $data: hopscopeRunner(hopscopeQuery('services', { kernel: true })) });
  return new SceneFlexLayout({ direction: 'column', children: [item(420, panel)] });
}

export function serviceBody(service: string): SceneObject {
  const pods = table(`Pods of ${service}`, 'pods', 'P99', 'Click a pod to see what the kernel saw on it.');
  pods.setState({ $data: hopscopeRunner(hopscopeQuery('pods', { service })) });
  return new SceneFlexLayout({
    direction: 'column',
    children: [item(260, pods), item(320, slowestTraces(service, 'service-traces'))],
  });
}

export function podBody(service: string, pod: string): SceneObject {
  const lanes = hopscopePanel(
    new VizPanelBuilder<KernelLanesOptions, object>(KERNEL_LANES_PANEL, '1.0.0')
      .setTitle(`Kernel evidence on ${pod}`)
      .setDescription(
        "From the eBPF exporter on the pod's node: TCP retransmits, connect latency, TLS handshakes, GPU allocation failures. Click an event that carries a trace id to open its root cause."
      )
      .setData(partOf('kernelEvents')),
    { key: 'kernel-evidence' }
  );
  const tls = hopscopePanel(
    PanelBuilders.histogram()
      .setTitle('TLS handshake latency')
      .setDescription('Handshakes of the range on log-spaced bins.')
      .setData(partOf(partRefId('kernelEvents', 'tls'))),
    { key: 'tls-histogram' }
  );
  const events = hopscopePanel(
    PanelBuilders.table()
      .setTitle('Kernel events')
      .setData(partOf('kernelEvents'))
      .setOption('sortBy', [{ displayName: 'Time', desc: true }])
      .setOption('cellHeight', 'sm' as never),
    { key: 'kernel-events' }
  );
  return new SceneFlexLayout({
    direction: 'column',
    children: [
      new SceneFlexLayout({
        direction: 'column',
        // One kernel-events answer for the lanes, the histogram and the table.
        $data: hopscopeRunner(hopscopeQuery('kernelEvents', { pod })),
        children: [
          item(5 * 25 + 60, lanes),
          new SceneFlexLayout({
            direction: 'row',
            height: 280,
            children: [new SceneFlexItem({ width: '35%', body: tls }), new SceneFlexItem({ body: events })],
          }),
        ],
      }),
      item(300, slowestTraces(service, 'pod-traces')),
    ],
  });
}
