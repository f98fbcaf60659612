/**
 * One load-test run, start to end: fetch the baseline (before anything, so a wrong one costs nothing), start the
 * client metrics, register the run with the proxy, apply the fault schedule while the driver sends, then remove
 * leftover faults, let the final metrics reach Prometheus, judge thresholds and regressions, post the finish (or
 * spool it) and print the table and the JSON summary. Exit codes: 0 pass, 1 threshold or regression failed,
 * 2 usage (bad baseline, run id reused, metrics port in use), 130 interrupted.
 */
import { writeFileSync } from 'node:fs';
import {
  ClientSummary,
  type AppliedFault,
  type RegressionVerdict,
  type RunFinish,
  type RunRegistration,
  type ThresholdVerdict,
} from '../../../contract/runs';
import type { Scenario, ScenarioFault } from '../../../contract/scenario';
import { prepareChaosMesh } from '../chaos-mesh/cli-actions';
import { startClientMetrics, type MetricsMode } from '../metrics/readers';
import { loadBaseline, type Baseline } from '../report/baseline';
import { ProxyClient } from '../report/proxy-client';
import { RunReporter } from '../report/run-reporter';
import { describeCapacity, proxyCapacity } from '../report/capacity';
import { formatTable } from '../report/table';
import { analyseCapacity } from '../../../contract/capacity-analysis';
import { fallbackSentence } from '../../../contract/fallback';
import { runLoad, type LoadOptions, type Summary } from './driver';
import { UsageError } from './errors';
import { FaultSchedule } from './fault-schedule';
import { judgeRegressions, type RegressionRule } from './regression';
import { checkThreshold, thresholdValue, type Threshold } from './thresholds';

export const EXIT = { pass: 0, failed: 1, usage: 2, interrupted: 130 } as const;

export interface SessionPlan {
  load: Omit<LoadOptions, 'onProgress' | 'onResult' | 'onStart' | 'signal'>;
  scenario: { name: string; file?: string; resolved: Scenario };
  thresholds: Threshold[];
  faults: ScenarioFault[];
  control: string;
  report: {
    url: string;
    token?: string;
    join: boolean;
    spoolDir: string;
    retryForMs: number;
    heartbeatMs?: number;
  } | null;
  workerId: string;
  metrics: { mode: MetricsMode; host: string; port: number; waitMaxMs: number; portGiven: boolean };
  /** The regression gate: its rules, and the baseline run they compare with (absent: within-run rules only). */
  baseline?: { ref?: string; rules: RegressionRule[] };
  jsonOut: string;
  quiet: boolean;
}

export interface SessionIo {
  out: (s: string) => void;
  err: (s: string) => void;
  signal?: AbortSignal;
  /** Whether stderr is a terminal (the progress line rewrites itself). */
  tty?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The finish payload's summary: the contract's fields only. */
function clientSummary(sum: Summary): ClientSummary {
  return ClientSummary.parse(sum);
}

export async function runSession(plan: SessionPlan, io: SessionIo): Promise<number> {
  const warn = (m: string): void => io.err(`hopscope-load: warning: ${m}\n`);
  const client = plan.report ? new ProxyClient(plan.report.url, plan.report.token) : undefined;
  const jsonToStdout = plan.jsonOut === '-';
  // When the JSON goes to stdout, everything for people goes to stderr.
  const say = jsonToStdout ? io.err : io.out;

  let baseline: Baseline | undefined;
  try {
    if (plan.baseline?.ref !== undefined) {
      baseline = await loadBaseline(plan.baseline.ref, client);
      for (const w of baseline.warnings) warn(w);
      if (baseline.scenario && baseline.scenario !== plan.scenario.name)
        warn(`the baseline ran scenario ${baseline.scenario}, this run ${plan.scenario.name}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`hopscope-load: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }

  // Chaos Mesh faults: the cluster reached and dead runs' leftovers removed before anything is sent.
  let chaosMesh;
  try {
    chaosMesh = await prepareChaosMesh(plan.scenario.resolved, plan.load.runId, warn);
  } catch (e) {
    io.err(`hopscope-load: the scenario's Chaos Mesh faults cannot be applied: ${(e as Error).message}\n`);
    return EXIT.usage;
  }

  // The reporter is made once the metrics URL is known; the metrics ask it later whether the run got registered.
  const known: { reporter?: RunReporter } = {};
  let metrics;
  try {
    metrics = await startClientMetrics({
      mode: plan.metrics.mode,
      runId: plan.load.runId,
      scenario: plan.scenario.name,
      workerId: plan.workerId,
      host: plan.metrics.host,
      port: plan.metrics.port,
      waitMaxMs: plan.metrics.waitMaxMs,
      expectScrape: () => Boolean(known.reporter?.registered) || plan.metrics.portGiven,
      env: io.env,
      warn,
    });
  } catch (e) {
    io.err(`hopscope-load: ${(e as Error).message}\n`);
    return EXIT.usage;
  }

  const schedule = new FaultSchedule(plan.faults, plan.control, warn, undefined, chaosMesh);
  const registration: RunRegistration = {
    runId: plan.load.runId,
    scenario: plan.scenario.name,
    workerId: plan.workerId,
    ...(plan.report?.join ? { join: true } : {}),
    startMs: Date.now(),
    target: new URL(plan.load.path, plan.load.target).toString(),
    options: {
      scenario: plan.scenario.resolved,
      ...(plan.scenario.file ? { scenarioFile: plan.scenario.file } : {}),
      metrics: plan.metrics.mode,
    },
    thresholds: plan.thresholds.map((t) => t.text),
    faults: schedule.planned(),
    ...(metrics.url ? { metricsUrl: metrics.url } : {}),
    ...(baseline?.runId ? { baselineRunId: baseline.runId } : {}),
  };
  const reporter = (known.reporter =
    client && plan.report
      ? new RunReporter({
          client,
          registration,
          warn,
          spoolDir: plan.report.spoolDir,
          retryForMs: plan.report.retryForMs,
          heartbeatMs: plan.report.heartbeatMs,
        })
      : undefined);
  try {
    await reporter?.register();
  } catch (e) {
    await metrics.close();
    if (e instanceof UsageError) {
      io.err(`hopscope-load: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }

  let sum: Summary;
  let faultsDone: Promise<AppliedFault[]> | undefined;
  try {
    sum = await runLoad({
      ...plan.load,
      signal: io.signal,
      onStart: (live) => {
        metrics.instruments?.attach(live);
        schedule.start();
        reporter?.startHeartbeats(() => {
          const l = live();
          return { sent: l.sent, completed: l.completed, errors: l.errors, inFlight: l.inFlight };
        });
      },
      onResult: metrics.instruments ? (r) => metrics.instruments!.record(r) : undefined,
      onProgress: plan.quiet
        ? undefined
        : (p) => {
            const line = `[${p.elapsedS.toFixed(0).padStart(4)} s] sent ${p.sent} rps ${p.rps} p99 ${Number.isFinite(p.p99Ms) ? p.p99Ms.toFixed(0) : '-'} ms errors ${p.errors} degraded ${p.degraded} timeouts ${p.timeouts} in-flight ${p.inFlight}`;
            io.err(io.tty ? `\r${line.padEnd(110)}` : `${line}\n`);
          },
    });
  } finally {
    // Whatever happened, the chain is left without our faults.
    faultsDone = schedule.stop();
    await faultsDone;
  }
  if (io.tty && !plan.quiet) io.err('\n');
  const interrupted = Boolean(io.signal?.aborted);
  const faults = await faultsDone;

  // The client's own capacity of a sweep/ramp (no saturation signals); the proxy's replaces it once delivered.
  if (sum.steps?.length) sum.capacity = analyseCapacity(sum.steps);

  const metricsNote = await metrics.finish();
  if (metricsNote) sum.notes.push(metricsNote);
  if (metrics.url) sum.notes.push(`client metrics were served at ${metrics.url}`);

  const thresholds: ThresholdVerdict[] = plan.thresholds.map((t) => {
    const actual = thresholdValue(sum, t.metric);
    return { threshold: t.text, metric: t.metric, actual, pass: checkThreshold(t, actual) };
  });
  const regressions: RegressionVerdict[] = plan.baseline
    ? judgeRegressions(plan.baseline.rules, baseline?.summary, clientSummary(sum))
    : [];
  const failed = thresholds.some((t) => !t.pass) || regressions.some((r) => !r.pass);
  const status: RunFinish['status'] = interrupted ? 'aborted' : failed ? 'failed' : 'passed';

  let reportLine: Record<string, unknown> = { delivered: false, to: null };
  if (reporter && plan.report) {
    const finish: RunFinish = {
      workerId: plan.workerId,
      endMs: Date.now(),
      status,
      summary: clientSummary(sum),
      thresholds,
      regressions,
      faults,
      slowest: sum.slowest.slice(0, 100),
      failed: sum.failed.slice(0, 100),
    };
    // Interrupted: someone is waiting at the terminal; retry briefly, then spool.
    const r = await reporter.finish(finish, interrupted ? Math.min(plan.report.retryForMs, 10_000) : undefined);
    reportLine = { delivered: r.delivered, to: plan.report.url, ...(r.spoolFile ? { spoolFile: r.spoolFile } : {}) };
    if (r.delivered && sum.capacity && client) sum.capacity = (await proxyCapacity(client, sum.runId)) ?? sum.capacity;
    if (!r.delivered) {
      warn(`the run record was not delivered to ${plan.report.url}: ${r.message}`);
      if (r.spoolFile)
        warn(
          `it is saved in ${r.spoolFile}; send it later with: hopscope-load --resend ${r.spoolFile} --report ${plan.report.url}`
        );
    }
  }
  await metrics.close();

  say(
    `${formatTable(sum, { thresholds, regressions, baseline: baseline?.runId ?? baseline?.source, faults, scenarioNotes: plan.scenario.resolved.notes })}\n`
  );
  const json = JSON.stringify(
    {
      ...sum,
      status,
      thresholds,
      regressions,
      faults,
      ...(baseline ? { baseline: { runId: baseline.runId ?? null, source: baseline.source } } : {}),
      report: reportLine,
    },
    null,
    2
  );
  if (jsonToStdout) io.out(`${json}\n`);
  else {
    try {
      writeFileSync(plan.jsonOut, json);
    } catch (e) {
      io.err(`hopscope-load: cannot write the JSON summary to ${plan.jsonOut}: ${(e as Error).message}\n`);
    }
  }
  if (interrupted) return EXIT.interrupted;
  const capacityFailed =
    thresholds.some((t) => t.metric === 'capacity_rps' && !t.pass) ||
    regressions.some((r) => r.metric === 'capacity_rps' && !r.pass);
  if (capacityFailed)
    io.err(
      `hopscope-load: capacity gate failed: ${sum.capacity ? describeCapacity(sum.capacity, registration.startMs) : 'no capacity figure (not a sweep, ramp or step run)'}\n`
    );
  if (regressions.some((r) => r.metric === 'fallback_completion' && !r.pass))
    io.err(`hopscope-load: fall-back gate failed: ${fallbackSentence(sum.fallback) ?? 'nothing fell back'}\n`);
  const regressed = regressions.filter((r) => !r.pass && r.versus !== 'primary_path');
  if (regressed.length) {
    io.err(
      `hopscope-load: regressed against baseline ${baseline?.runId ?? baseline?.source}: ${regressed
        .map((r) => r.metric)
        .join(', ')}\n`
    );
  }
  return failed ? EXIT.failed : EXIT.pass;
}
