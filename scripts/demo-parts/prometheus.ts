/**
 * A real Prometheus (the Debian package) on 127.0.0.1:3390, data in the demo's temp dir. It scrapes every chain hop
 * and dcgm-exporter (found through the chain control API's http_sd endpoint /targets, so hop ports can be anything),
 * the bpf-exporter on 3302, the backend proxy's /metrics on 3301, and the client metrics of every running load-test
 * worker (hopscope_load_*), found through the proxy's HTTP SD of runs (/api/runs/targets).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoContext, DemoPart } from './types';

/**
 * The scrape job of load-test client metrics: the proxy's HTTP SD lists each running worker's metrics URL with labels
 * run_id, scenario and worker_id. honor_labels: false: the proxy's target labels win over whatever a worker's series
 * say (a worker cannot pose as another run, job or instance); the series' own copies (exported_run_id, …, the same
 * values) are dropped by relabelling, so each series carries the run labels once, as the proxy set them.
 */
export function runsScrapeJob(proxyUrl: string, o: { refresh?: string; token?: string } = {}): string {
  return `  - job_name: hopscope-load
    honor_labels: false
    metric_relabel_configs:
      - action: labeldrop
        regex: exported_(run_id|scenario|worker_id)
    http_sd_configs:
      - url: ${proxyUrl.replace(/\/+$/, '')}/api/runs/targets
        refresh_interval: ${o.refresh ?? '5s'}
${o.token ? `        authorization: { type: Bearer, credentials: ${JSON.stringify(o.token)} }\n` : ''}`;
}

/** The scrape job of the chain: every hop replica (labels service, pod, node, namespace) and each node's dcgm-exporter, through the chain control API's HTTP SD endpoint /targets. */
export function chainScrapeJob(controlUrl: string, o: { name?: string; refresh?: string } = {}): string {
  return `  - job_name: ${o.name ?? 'hopscope-chain'}
    http_sd_configs:
      - url: ${controlUrl.replace(/\/+$/, '')}/targets
        refresh_interval: ${o.refresh ?? '5s'}
`;
}

/** Prometheus' command line: its config, its TSDB, loopback on `port`, warnings only; the demo's and the tests' alike. */
export function prometheusArgs(o: {
  config: string;
  data: string;
  port: number | string;
  retention?: string;
}): string[] {
  return [
    `--config.file=${o.config}`,
    `--storage.tsdb.path=${o.data}`,
    `--web.listen-address=127.0.0.1:${o.port}`,
    ...(o.retention ? [`--storage.tsdb.retention.time=${o.retention}`] : []),
    '--log.level=warn',
  ];
}

/**
 * The demo's scrape interval, every job. The demo's proxy is told the same (HOPSCOPE_SCRAPE_INTERVAL, ./proxy.ts): its
 * rate windows are max(step + scrape, 4 × scrape), so a wrong value gives windows with too few samples or too coarse.
 */
export const SCRAPE_INTERVAL = '5s';

export function part(ctx: DemoContext): DemoPart {
  const bin = process.env.HOPSCOPE_PROMETHEUS_BIN ?? '/usr/bin/prometheus';
  const port = process.env.HOPSCOPE_PROMETHEUS_PORT ?? '3390';
  const control =
    process.env.HOPSCOPE_CHAIN_CONTROL_URL ?? `http://127.0.0.1:${process.env.HOPSCOPE_CONTROL_PORT ?? '3319'}`;
  const exporter = `127.0.0.1:${process.env.HOPSCOPE_BPF_PORT ?? '3302'}`;
  const proxy = `127.0.0.1:${process.env.HOPSCOPE_PROXY_PORT ?? '3301'}`;
  const dir = join(ctx.dataDir, 'prometheus');
  const config = join(dir, 'prometheus.yml');
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(
    config,
    `# Written by scripts/demo-parts/prometheus.ts for the Hopscope demo.
global:
  scrape_interval: ${SCRAPE_INTERVAL}
  scrape_timeout: 4s
  evaluation_interval: ${SCRAPE_INTERVAL}
scrape_configs:
${chainScrapeJob(control)}  - job_name: bpf-exporter
    static_configs:
      - targets: ['${exporter}']
        labels: { node: demo-node }
  - job_name: hopscope-proxy
    static_configs:
      - targets: ['${proxy}']
${runsScrapeJob(`http://${proxy}`, { token: process.env.HOPSCOPE_PROXY_TOKEN || undefined })}  - job_name: prometheus
    static_configs:
      - targets: ['127.0.0.1:${port}']
`
  );
  return {
    name: 'prometheus',
    order: 10,
    command: bin,
    args: [
      ...prometheusArgs({ config, data: join(dir, 'data'), port, retention: '1d' }),
      // The chain's latency histograms carry exemplars (trace ids): kept, so a latency point links to its trace.
      '--enable-feature=exemplar-storage',
    ],
    readyUrl: `http://127.0.0.1:${port}/-/ready`,
    ports: [{ port: Number(port), env: 'HOPSCOPE_PROMETHEUS_PORT' }],
    async available() {
      return existsSync(bin)
        ? true
        : `${bin} is missing: install the Debian package (apt-get install prometheus) or set HOPSCOPE_PROMETHEUS_BIN`;
    },
  };
}
