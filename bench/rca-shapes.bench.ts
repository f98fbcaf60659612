/**
 * Root cause on any span shape: window RCA AC@1 / AC@3 (service level) with span kinds and without, side by side:
 *  - with kinds: this engine on the kinds the instrumentation gave;
 *  - no kinds, before: every kind `unspecified`, on the engine of HOPSCOPE_BENCH_BASELINE_DIR (a checkout of an
 *    earlier commit, e.g. `git worktree add /tmp/rca-before <commit>` with node_modules linked in; absent: skipped);
 *  - no kinds: the same kind-less spans on this engine (roles inferred from the tree);
 *  - naive z-score: per service, the mean span duration in the window as a z-score against the healthy traffic
 *    (mean, standard deviation), highest first — a trace-only baseline that needs no kinds and no tree.
 * On two benchmarks:
 *  1. Nezha TrainTicket (held out: a different system from the fixtures, ~25 Java services; 45 labelled faults, of
 *     which 21 slow requests down — cpu_contention, network_delay — while `return`/`exception` change answers the CSV
 *     cannot show): read from a snapshot of IntelligentDDS/Nezha (`NEZHA_REPO`, else the mirror beside this
 *     repository; skipped with a message when absent). "With kinds" = the OpenTelemetry Java agent's kinds put back
 *     from its span names (`withJavaAgentKinds`). Baseline: the day's fault-free minute.
 *  2. Nezha Online Boutique (the fixture rca/nezha-ob, 8 cases): "with kinds" = the loader's kinds recovered from the
 *     gRPC method names; "no kinds" drops them and the `peer.service` the loader derived with them. Baseline: the
 *     fault-free minute.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { report, SMOKE } from './lib/ab';
import * as current from '../backend-proxy/src/rca';
import type { Span } from '../contract';
import { fixture } from '../tests/support/fixtures';
import { loadNezhaCases, nezhaFaultFree, nezhaWindow } from '../tests/support/rca/nezha';
import {
  findNezhaRepo,
  isLatencyFault,
  loadTrainTicketCases,
  trainTicketFaultFree,
  trainTicketWindow,
  withJavaAgentKinds,
} from '../tests/support/rca/nezha-tt';

type Engine = Pick<typeof current, 'buildBaseline' | 'rankWindow'>;

interface Case {
  id: string;
  fault: string;
  truth: string;
  latency: boolean;
  traces: Span[][];
  healthy: Span[][];
}
interface Benchmark {
  name: string;
  cases: () => Iterable<Case>;
  withKinds: (tr: Span[]) => Span[];
  withoutKinds: (tr: Span[]) => Span[];
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const uniq = (xs: string[]): string[] => [...new Set(xs)];

/** Service rank of the truth (Infinity when absent) by one engine's window RCA. */
function engineRank(e: Engine, c: Case, shape: (tr: Span[]) => Span[]): number {
  const a = e.rankWindow({ traces: c.traces.map(shape), baseline: e.buildBaseline(c.healthy.map(shape)) });
  return uniq(a.candidates.map((x) => x.service)).indexOf(c.truth) + 1 || Infinity;
}

/** The naive trace-only baseline: per service, (window mean − healthy mean) ÷ healthy standard deviation of span durations. */
function zScoreRank(c: Case): number {
  const stats = (traces: Span[][]): Map<string, { n: number; sum: number; sq: number }> => {
    const m = new Map<string, { n: number; sum: number; sq: number }>();
    for (const tr of traces) {
      for (const s of tr) {
        const d = s.endMs - s.startMs;
        const x = m.get(s.service) ?? { n: 0, sum: 0, sq: 0 };
        x.n++;
        x.sum += d;
        x.sq += d * d;
        m.set(s.service, x);
      }
    }
    return m;
  };
  const h = stats(c.healthy);
  const w = stats(c.traces);
  const z: Array<[string, number]> = [];
  for (const [svc, x] of w) {
    const b = h.get(svc);
    if (!b || b.n < 2) continue;
    const mean = b.sum / b.n;
    const sd = Math.sqrt(Math.max(0, b.sq / b.n - mean * mean)) || 1e-9;
    z.push([svc, (x.sum / x.n - mean) / sd]);
  }
  z.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return z.findIndex(([svc]) => svc === c.truth) + 1 || Infinity;
}

async function loadBefore(): Promise<{ engine?: Engine; why: string }> {
  const dir = process.env.HOPSCOPE_BENCH_BASELINE_DIR;
  if (!dir) return { why: 'set HOPSCOPE_BENCH_BASELINE_DIR to a checkout of the earlier commit' };
  if (!existsSync(join(dir, 'backend-proxy/src/rca/index.ts')) || !existsSync(join(dir, 'node_modules'))) {
    return { why: `${dir} has no backend-proxy/src/rca/index.ts or no node_modules` };
  }
  return {
    engine: (await import(pathToFileURL(join(dir, 'backend-proxy/src/rca/index.ts')).href)) as Engine,
    why: dir,
  };
}

const before = await loadBefore();
console.log(`engine before: ${before.engine ? before.why : `skipped (${before.why})`}`);

const COLUMNS = ['with kinds', 'no kinds, before', 'no kinds', 'naive z-score'] as const;
type Column = (typeof COLUMNS)[number];

function run(b: Benchmark): void {
  const rows: Array<Record<string, string | number>> = [];
  const ranks: Array<{ latency: boolean } & Record<Column, number>> = [];
  const t0 = performance.now();
  let seen = 0;
  for (const c of b.cases()) {
    // A smoke run (bench/lib/ab.ts) ranks the first case of each benchmark: the same path, one case's data read.
    if (SMOKE && seen++ >= 1) break;
    const r = {
      latency: c.latency,
      'with kinds': engineRank(current, c, b.withKinds),
      'no kinds, before': before.engine ? engineRank(before.engine, c, b.withoutKinds) : NaN,
      'no kinds': engineRank(current, c, b.withoutKinds),
      'naive z-score': zScoreRank(c),
    };
    ranks.push(r);
    const show = (x: number): string | number => (Number.isNaN(x) ? 'skipped' : Number.isFinite(x) ? x : '-');
    rows.push({
      case: c.id,
      fault: c.fault,
      truth: c.truth,
      traces: c.traces.length,
      ...Object.fromEntries(COLUMNS.map((k) => [k, show(r[k])])),
    });
  }
  report(`${b.name}: service rank of the faulted service per case (window RCA)`, rows, rows);
  const summary: Array<Record<string, string | number>> = [];
  for (const [subset, pick] of [
    ['latency-visible faults', (x: { latency: boolean }) => x.latency],
    ['all faults', () => true],
  ] as const) {
    const sel = ranks.filter(pick);
    if (!sel.length) continue;
    const row: Record<string, string | number> = { faults: `${subset} (${sel.length})` };
    for (const k of COLUMNS) {
      if (sel.some((x) => Number.isNaN(x[k]))) {
        row[`${k} AC@1`] = 'skipped';
        row[`${k} AC@3`] = 'skipped';
        continue;
      }
      row[`${k} AC@1`] =
        `${pct(sel.filter((x) => x[k] <= 1).length / sel.length)} (${sel.filter((x) => x[k] <= 1).length})`;
      row[`${k} AC@3`] = pct(sel.filter((x) => x[k] <= 3).length / sel.length);
    }
    summary.push(row);
  }
  report(
    `${b.name}: AC@1 / AC@3 with kinds, without (engine before / this one), naive z-score — ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    summary,
    summary
  );
}

// 1. TrainTicket (held out).
const { source, why } = findNezhaRepo();
if (!source) {
  console.log(`\nNezha TrainTicket: skipped (${why})`);
} else {
  const healthyByDay = new Map<string, Span[][]>();
  run({
    name: `Nezha TrainTicket (held out; ${source.name})`,
    cases: function* () {
      for (const c of loadTrainTicketCases(source)) {
        if (!healthyByDay.has(c.day)) healthyByDay.set(c.day, trainTicketFaultFree(source, c.day));
        yield {
          id: c.id.slice(0, 19),
          fault: c.injectType,
          truth: c.rootCauseService,
          latency: isLatencyFault(c),
          traces: trainTicketWindow(source, c),
          healthy: healthyByDay.get(c.day)!,
        };
      }
    },
    withKinds: withJavaAgentKinds,
    withoutKinds: (tr) => tr,
  });
}

// 2. Online Boutique (the fixture).
{
  const dir = process.env.NEZHA_DIR ?? fixture('rca', 'nezha-ob');
  const healthy = nezhaFaultFree(dir);
  const strip = (tr: Span[]): Span[] =>
    tr.map((s) => {
      const { 'peer.service': _peer, ...attributes } = s.attributes;
      return { ...s, kind: 'unspecified', attributes };
    });
  run({
    name: 'Nezha Online Boutique (fixture rca/nezha-ob)',
    cases: function* () {
      for (const c of loadNezhaCases(dir)) {
        yield {
          id: c.id.slice(0, 19),
          fault: c.injectType,
          truth: c.rootCauseService,
          latency: !['return', 'exception'].includes(c.injectType),
          traces: nezhaWindow(dir, c),
          healthy,
        };
      }
    },
    withKinds: (tr) => tr,
    withoutKinds: strip,
  });
}
