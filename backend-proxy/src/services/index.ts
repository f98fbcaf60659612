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
 * | drilldown  | ../drilldown/                 | services → pods → a pod's kernel events; figures from counts (own metrics, span metrics, ingest counters) |
 * | faults     | faults.ts                     | injected chain faults as annotations of a range                     |
 * | traces     | traces.ts                     | trace search and one trace by id (400/404/502 in one place)         |
 * | rca        | rca.ts, baseline-cache.ts     | root-cause orchestration (trace + baseline + kernel events fetched together), the baseline cache |
 * | compare    | compare.ts                    | A/B statistics and jitter hot zones                                 |
 * | alerts     | alerts.ts                     | the AlertManager's construction (../alerts): rules, state and history on the database, evaluation on the `alerts-evaluator` lease holder |
 * | evidence   | ../evidence/                  | notable kernel events kept in the database from the exporters' streams (`kernel-evidence-keeper` lease), read by root cause when the rings no longer reach |
 * | answers    | rca-answers.ts                | saved root-cause answers (a postmortem links them)                  |
 * | exports    | export.ts, postmortem-md.ts   | the postmortem: gathering, Markdown rendering, PNG                  |
 * | runs       | ../runs (on the database)     | load-test runs: register/join, heartbeats (and the sweep that aborts the silent), finish, list, HTTP SD |
 * | runCompare | run-compare.ts                | which hop changed between two runs (their traces by `hopscope.run_id`: ../store/run-index.ts or Tempo) |
 * | runTtft    | run-ttft.ts                   | client vs server TTFT of a run over its window (Prometheus), the gap part by part |
 * | runTtftRequests | run-ttft-requests.ts     | a run's slowest and failed requests' client TTFT split along their traces |
 * | (retention) | retention.ts                | runs, their reports and saved answers past HOPSCOPE_RETENTION_DAYS deleted at start and hourly |
 * | (windows)  | window-budget.ts              | the global budget of window work (range root causes, run compares): 503 + Retry-After past it |
 *
 * Lifecycle: server.ts starts the sources, then `services.start()` (background work: the alert loop); on close,
 * `services.stop()` (last started, first stopped) is awaited before the sources stop.
 *
 * Adding a service: a file here with a class that takes only what it uses (sources, config fields, other services),
 * built in `buildServices`, a field of `Services`, and its routes in ../routes (a factory taking that service). If it
 * runs in the background, it has `start()`/`stop()` and joins `background` below.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pino from 'pino';
import type { HealthAnswer } from '../../../contract';
import type { ProxyConfig } from '../config';
import type { Database } from '../db/database';
import { RunsError, RunsService } from '../runs';
import type { Sources } from '../sources';
import { TempoSource } from '../sources/tempo';
import { RunIndex } from '../store/run-index';
import { AlertService, type AlertsHealth } from './alerts';
import { CompareService } from './compare';
import { DrilldownService } from '../drilldown';
import { EngineStateService } from './engine-state';
import { ExportService } from './export';
import { FaultService } from './faults';
import { GoldenService } from './golden';
import { HealthService } from './health';
import { HeatmapService } from './heatmap';
import { IngestService } from './ingest';
import { KernelEvidenceService, type KernelEvidenceHealth } from '../evidence/service';
import { RcaService } from './rca';
import { RcaAnswerService } from './rca-answers';
import { EmbeddedRunTraces, MAX_TRACES, RunCompareService, TempoRunTraces } from './run-compare';
import { RunTtftService } from './run-ttft';
import { RunTtftRequestsService } from './run-ttft-requests';
import { RunCapacityService } from './run-capacity';
import { RetentionService } from './retention';
import { TraceService } from './traces';
import { WindowBudget } from './window-budget';

interface ServiceDeps {
  config: ProxyConfig;
  sources: Sources;
  log: pino.Logger;
  /**
   * The proxy's state (DESIGN "State": runs, alert rules/state/history, kept kernel evidence, saved root-cause
   * answers) lives in this database (../db), opened (migrations applied) by server.ts before the services are built
   * and closed after `Services.stop()`. The services that keep state take it from here in `buildServices`, and
   * answer 503 while it is unavailable.
   */
  db: Database;
}

/** /api/health with what this proxy holds: the evaluator and evidence leases, the evidence queue and streams. */
export type StateHealthAnswer = HealthAnswer & {
  state: { alerts: AlertsHealth; kernelEvidence: KernelEvidenceHealth };
};

class StateHealthService extends HealthService {
  constructor(
    sources: ConstructorParameters<typeof HealthService>[0],
    private state: { alerts: AlertService; evidence: KernelEvidenceService }
  ) {
    super(sources);
  }

  override async answer(): Promise<StateHealthAnswer> {
    const [base, alerts, kernelEvidence] = await Promise.all([
      super.answer(),
      this.state.alerts.health(),
      this.state.evidence.health(),
    ]);
    return { ...base, state: { alerts, kernelEvidence } };
  }
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
  evidence: KernelEvidenceService;
  answers: RcaAnswerService;
  exports: ExportService;
  /** Absent without a database. */
  runs?: RunsService;
  runCompare?: RunCompareService;
  /** Client vs server TTFT of a run (Prometheus); absent without a database. */
  runTtft?: RunTtftService;
  runTtftRequests?: RunTtftRequestsService;
  runCapacity?: RunCapacityService;
  /** Starts the services' background work; call after the sources have started. */
  start(): void;
  /** Stops it, in reverse order; await before stopping the sources. */
  stop(): Promise<void>;
}

interface Background {
  start(): void;
  stop(): Promise<void> | void;
}

export function buildServices({ config, sources, log, db }: ServiceDeps): Services {
  const traces = new TraceService(sources.traces);
  const tempo = sources.traces instanceof TempoSource;
  // This proxy among the others on the database (lease holder, who saved the rules).
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const evidence = new KernelEvidenceService({
    db,
    log,
    exporters: sources.exporters,
    retentionMs: config.kernelEvidenceRetentionMs,
    leaseTtlMs: config.leaseTtlMs,
    holder,
    token: config.exporterToken,
    timeoutMs: config.sourceTimeoutMs,
  });
  // Root cause links the answers saved of a trace; saving computes root causes: one refers to the other late.
  const saved: { answers?: RcaAnswerService } = {};
  // One budget of window work for range root causes and run compares together (503 + Retry-After past it).
  const windows = new WindowBudget({
    windows: config.windowMaxConcurrent,
    traces: config.windowMaxTraces,
    bytes: config.windowMaxBytes,
  });
  const rca = new RcaService(traces, sources.exporters, {
    windows,
    config: config.rcaConfig,
    evidence,
    saved: { ofTrace: (id) => saved.answers!.ofTrace(id) },
    engineState: new EngineStateService(sources.prometheus, config.scrapeIntervalMs),
  });
  const answers = new RcaAnswerService(db, rca, config.appUrl);
  saved.answers = answers;
  const faults = new FaultService(sources.chain);
  const alerts = new AlertService(config, sources, db, log, holder);
  // Runs, their reports and saved answers past HOPSCOPE_RETENTION_DAYS: deleted at start and every hour.
  const retention = new RetentionService({ db, log, days: config.retentionDays });
  // The engine's worker threads end with the services (first started, last stopped).
  const background: Background[] = [rca, evidence, alerts, retention];
  const runs = new RunsService({
    db,
    log,
    heartbeatTimeoutMs: config.runHeartbeatTimeoutMs,
    metricsHosts: config.runMetricsHosts,
  });
  if (runs) background.push(runs);
  // A run's traces: by the run index over the embedded store, or by TraceQL when Tempo is the trace source.
  const runIndex = new RunIndex();
  sources.store.observe(runIndex);
  const runTraces =
    sources.traces instanceof TempoSource
      ? new TempoRunTraces(sources.traces)
      : new EmbeddedRunTraces(sources.store, runIndex);
  const runLookup = {
    get: (id: string) =>
      runs!.get(id).catch((err: unknown) => {
        if (err instanceof RunsError && err.code === 'not_found') return undefined;
        throw err;
      }),
  };
  // The database is a source like the others in the health answer.
  const health = { health: async () => [...(await sources.health()), await db.health()] };
  return {
    health: new StateHealthService(health, { alerts, evidence }),
    ingest: new IngestService(sources.store, rca.engine),
    golden: new GoldenService(sources.prometheus, sources.traces, config.scrapeIntervalMs),
    heatmap: new HeatmapService(sources.prometheus),
    drilldown: new DrilldownService({
      traces: sources.traces,
      exporters: sources.exporters,
      prometheus: sources.prometheus,
      counters: sources.counters,
      tempo,
      scrapeMs: config.scrapeIntervalMs,
    }),
    faults,
    traces,
    rca,
    compare: new CompareService(sources.traces, tempo),
    alerts,
    evidence,
    answers,
    exports: new ExportService(config, { rca, alerts, faults, exporters: sources.exporters }),
    runs,
    // The run-vs-run root cause ranks with the operator's engine settings (HOPSCOPE_RCA_CONFIG), as per-trace RCA does.
    runCompare: runs ? new RunCompareService(runLookup, runTraces, MAX_TRACES, config.rcaConfig, windows) : undefined,
    runTtft: runs ? new RunTtftService(runLookup, sources.prometheus, config.scrapeIntervalMs) : undefined,
    runTtftRequests: runs ? new RunTtftRequestsService(runLookup, traces) : undefined,
    runCapacity: runs ? new RunCapacityService(sources.prometheus, config.scrapeIntervalMs) : undefined,
    start() {
      for (const b of background) b.start();
    },
    async stop() {
      for (const b of [...background].reverse()) await b.stop();
    },
  };
}
