/** Builds every source adapter from the config, once per proxy instance. */
import type pino from 'pino';
import type { ProxyConfig } from '../config';
import type { SourceStatus } from '../../../contract';
import { RequestCounters } from '../store/request-counters';
import { TraceStore } from '../store/trace-store';
import { authHeaders } from './auth';
import { ChainControlSource } from './chain';
import { DNS_PREFIX, ExporterDiscovery, parseDnsSpec, resolveAddresses } from './discovery';
import { ExporterSource } from './exporters';
import { callJson, registerSourceHeaders, settle } from './http';
import { PrometheusSource } from './prometheus';
import { TempoSource } from './tempo';
import { EmbeddedTraceSource, type TraceSource } from './traces';

export interface Sources {
  prometheus?: PrometheusSource;
  /** Always present: receives POST /v1/traces even when Tempo is the trace source. */
  store: TraceStore;
  /** Counters kept at ingest for every span the store receives (service/pod rates, errors, latency). */
  counters: RequestCounters;
  traces: TraceSource;
  /** Fixed and DNS-discovered exporters; discovery updates this array in place. */
  exporters: ExporterSource[];
  chain?: ChainControlSource;
  /** Work before the first request (the first DNS lookup of exporters). */
  init(): Promise<void>;
  health(): Promise<SourceStatus[]>;
  /** Background work of the sources: the store's age sweep, DNS discovery. */
  start(): void;
  stop(): Promise<void>;
}

export function createSources(config: ProxyConfig, log: pino.Logger): Sources {
  const t = config.sourceTimeoutMs;
  const store = new TraceStore({
    maxSpans: config.storeMaxSpans,
    maxBytes: config.storeMaxBytes,
    maxAgeMs: config.storeMaxAgeMs,
  });
  // Counts outlive the spans: the store drops traces when full, the counters keep every span's count for maxAge.
  const counters = new RequestCounters({ maxAgeMs: config.storeMaxAgeMs });
  store.observe(counters);
  // Credentials by base URL: every call under it carries them (../alerts pushes to Alertmanager through callJson too).
  const unregister = [
    config.prometheusUrl
      ? registerSourceHeaders(config.prometheusUrl, authHeaders(config.sourceAuth?.prometheus))
      : undefined,
    config.tempoUrl ? registerSourceHeaders(config.tempoUrl, authHeaders(config.sourceAuth?.tempo)) : undefined,
    config.alertmanagerUrl
      ? registerSourceHeaders(config.alertmanagerUrl, authHeaders(config.sourceAuth?.alertmanager))
      : undefined,
  ];
  const tempo = config.tempoUrl ? new TempoSource(config.tempoUrl, t) : undefined;
  const prometheus = config.prometheusUrl ? new PrometheusSource(config.prometheusUrl, t) : undefined;
  const fixed = config.exporterUrls
    .filter((u) => !u.startsWith(DNS_PREFIX))
    .map((u) => new ExporterSource(u, t, config.exporterToken));
  const exporters = [...fixed];
  const dnsSpecs = config.exporterUrls.filter((u) => u.startsWith(DNS_PREFIX)).map(parseDnsSpec);
  const discovery = dnsSpecs.length
    ? new ExporterDiscovery(dnsSpecs, fixed, exporters, t, log, resolveAddresses, config.exporterToken)
    : undefined;
  const chain = config.chainControlUrl
    ? new ChainControlSource(config.chainControlUrl, t, config.chainControlToken)
    : undefined;
  let sweep: NodeJS.Timeout | undefined;
  const s: Sources = {
    prometheus,
    store,
    counters,
    exporters,
    chain,
    traces: tempo ?? new EmbeddedTraceSource(store),
    async init() {
      await discovery?.refresh();
    },
    async health() {
      const checks: Array<Promise<{ status: SourceStatus }>> = [];
      if (prometheus) checks.push(settle('prometheus', () => prometheus.health()));
      checks.push(settle(s.traces.name, () => s.traces.health()));
      for (const e of exporters) checks.push(settle(e.name, () => e.health()));
      if (chain) checks.push(settle('chain-control', () => chain.health()));
      if (config.alertmanagerUrl) {
        const am = config.alertmanagerUrl;
        checks.push(
          settle('alertmanager', async () => {
            const r = await callJson(`${am}/-/ready`, {
              source: 'alertmanager',
              timeoutMs: Math.ceil(Math.min(t, 2000)),
              retries: 0,
            });
            if (r.status !== 200) throw new Error(`not ready: HTTP ${r.status}`);
          })
        );
      }
      return [...(await Promise.all(checks)).map((c) => c.status), ...(discovery?.statuses() ?? [])];
    },
    start() {
      // Age eviction also runs without ingest, so an idle store still forgets old traces.
      sweep = setInterval(() => store.evict(), Math.min(60_000, Math.max(1000, config.storeMaxAgeMs / 10)));
      sweep.unref();
      discovery?.start(config.exporterDnsRefreshMs);
      log.debug('sources started');
    },
    async stop() {
      if (sweep) clearInterval(sweep);
      discovery?.stop();
      store.close();
      for (const u of unregister) u?.();
    },
  };
  return s;
}
