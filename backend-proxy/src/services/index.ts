/**
 * The service layer: what the proxy does, between the routes (parse and validate a request, call one service,
 * answer) and the sources (one adapter per data source, ../sources). Built once per proxy instance, here.
 *
 * | service    | file                          | what it owns                                                      |
 * |------------|-------------------------------|-------------------------------------------------------------------|
 * | health     | health.ts                     | the health answer over every source                                 |
 * | ingest     | ingest.ts                     | OTLP/HTTP into the embedded store (parse all, enrich, store)        |
 * | golden     | golden.ts, promql.ts          | the golden metrics; promql.ts is the catalogue of every PromQL query |
 * | heatmap    | heatmap.ts                    | the GPU heatmap (DCGM field fallback, blank sentinels)              |
 * | drilldown  | drilldown.ts                  | services → pods → a pod's kernel events                            |
 * | faults     | faults.ts                     | injected chain faults as annotations of a range                     |
 * | traces     | traces.ts                     | trace search and one trace by id (400/404/502 in one place)         |
 * | rca        | rca.ts, baseline-cache.ts     | root-cause orchestration (trace + baseline + kernel events fetched together), the baseline cache |
 * | compare    | compare.ts                    | A/B statistics and jitter hot zones                                 |
 * | alerts     | alerts.ts                     | the AlertManager's construction (../alerts), rules and alerts       |
 * | exports    | export.ts, postmortem-md.ts   | the postmortem: gathering, Markdown rendering, PNG                  |
 *
 * Lifecycle: server.ts starts the sources, then `services.start()` (background work: the alert loop); on close,
 * `services.stop()` (last started, first stopped) is awaited before the sources stop.
 *
 * Adding a service: a file here with a class that takes only what it uses (sources, config fields, other services),
 * built in `buildServices`, a field of `Services`, and its routes in ../routes (a factory taking that service). If it
 * runs in the background, it has `start()`/`stop()` and joins `background` below.
 */
import type pino from 'pino';
import type { ProxyConfig } from '../config';
import type { Sources } from '../sources';
import { AlertService } from './alerts';
import { CompareService } from './compare';
import { DrilldownService } from './drilldown';
import { ExportService } from './export';
import { FaultService } from './faults';
import { GoldenService } from './golden';
import { HealthService } from './health';
import { HeatmapService } from './heatmap';
import { IngestService } from './ingest';
import { RcaService } from './rca';
import { TraceService } from './traces';

interface ServiceDeps {
  config: ProxyConfig;
  sources: Sources;
  log: pino.Logger;
  // The proxy's state (DESIGN "State": runs, alert rules/state/history, kept kernel evidence, saved root-cause
  // answers) will live in the database of ../db. Its handle joins here as `db?: <the db module's type>`, optional so
  // tests can build services without one; the services that keep state (a runs service, the alert state, kept
  // kernel evidence) take it from here in `buildServices`, and its close runs after `Services.stop()`.
}

export interface Services {
  health: HealthService;
  ingest: IngestService;
  golden: GoldenService;
  heatmap: HeatmapService;
  drilldown: DrilldownService;
  faults: FaultService;
  traces: TraceService;
  rca: RcaService;
  compare: CompareService;
  alerts: AlertService;
  exports: ExportService;
  /** Starts the services' background work; call after the sources have started. */
  start(): void;
  /** Stops it, in reverse order; await before stopping the sources. */
  stop(): Promise<void>;
}

interface Background { start(): void; stop(): Promise<void> | void }

export function buildServices({ config, sources, log }: ServiceDeps): Services {
  const traces = new TraceService(sources.traces);
  const rca = new RcaService(traces, sources.exporters);
  const faults = new FaultService(sources.chain);
  const alerts = new AlertService(config, sources, log);
  const background: Background[] = [alerts];
  return {
    health: new HealthService(sources),
    ingest: new IngestService(sources.store),
    golden: new GoldenService(sources.prometheus, sources.traces),
    heatmap: new HeatmapService(sources.prometheus),
    drilldown: new DrilldownService(sources.traces, sources.exporters),
    faults,
    traces,
    rca,
    compare: new CompareService(sources.traces),
    alerts,
    exports: new ExportService(config, { rca, alerts, faults, exporters: sources.exporters }),
    start() {
      for (const b of background) b.start();
    },
    async stop() {
      for (const b of [...background].reverse()) await b.stop();
    },
  };
}
