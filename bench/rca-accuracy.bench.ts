/**
 * Root-cause accuracy: AC@1 / AC@3 on
 *  1. Nezha Online Boutique (rca/nezha-ob, 8 labelled cases, window RCA), side by side with two baselines:
 *     A = the fixture's fault-free minute, B = that minute + the case's own traffic before the injection;
 *  2. our chain (synthetic, seeded): per-trace RCA for each fault kind at each hop, at the default magnitudes and at
 *     a third of them (harder), printing fault × hop → share ranked first;
 *  3. our chain, window RCA: 30 traces per window, 30% of them faulted.
 */
import { report, smoke } from './lib/ab';
import { buildBaseline, rankTrace, rankWindow } from '../backend-proxy/src/rca';
import { loadNezhaCases, nezhaBeforeInjection, nezhaFaultFree, nezhaWindow } from '../tests/support/rca/nezha';
import {
  CHAIN_HOPS as ALL_HOPS,
  FAULT_KINDS as ALL_KINDS,
  syntheticHealthy,
  syntheticTrace,
} from '../tests/support/rca/synthetic';
import type { KernelEvent, Span } from '../contract';
import { fixture } from '../tests/support/fixtures';

const DIR = process.env.NEZHA_DIR ?? fixture('rca', 'nezha-ob');
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const rankOf = (list: string[], want: string): number => list.indexOf(want) + 1 || Infinity;
const uniq = (xs: string[]): string[] => [...new Set(xs)];
// A smoke run (bench/lib/ab.ts) takes every section's path on the smallest inputs: one fault kind at one hop, a
// baseline of 20 healthy traces, windows of 10 traces (3 faulted).
const FAULT_KINDS = smoke(ALL_KINDS, ALL_KINDS.slice(0, 1));
const CHAIN_HOPS = smoke(ALL_HOPS, ALL_HOPS.slice(0, 1));
const HEALTHY = smoke(200, 20);
const WINDOW = smoke(30, 10);

// 1. Nezha.
{
  const faultFree = nezhaFaultFree(DIR);
  const baseA = buildBaseline(faultFree);
  const rows: Array<Record<string, string | number>> = [];
  const acc = { A: { s1: 0, s3: 0, p1: 0, p3: 0 }, B: { s1: 0, s3: 0, p1: 0, p3: 0 } };
  // A smoke run (bench/lib/ab.ts) ranks the first case only: the same path, one case's data read.
  const cases = loadNezhaCases(DIR).slice(0, smoke(Infinity, 1));
  for (const c of cases) {
    const traces = nezhaWindow(DIR, c);
    const row: Record<string, string | number> = {
      case: c.id.slice(0, 19),
      fault: c.injectType,
      truth: c.rootCauseService,
      traces: traces.length,
    };
    for (const [label, baseline] of [
      ['A', baseA],
      ['B', buildBaseline([...faultFree, ...nezhaBeforeInjection(DIR, c)])],
    ] as const) {
      const a = rankWindow({ traces, baseline });
      const rs = rankOf(uniq(a.candidates.map((x) => x.service)), c.rootCauseService);
      const rp = rankOf(
        a.candidates.map((x) => x.pod),
        c.injectPod
      );
      const k = acc[label];
      if (rs <= 1) k.s1++;
      if (rs <= 3) k.s3++;
      if (rp <= 1) k.p1++;
      if (rp <= 3) k.p3++;
      row[`${label} service rank`] = Number.isFinite(rs) ? rs : '-';
      row[`${label} pod rank`] = Number.isFinite(rp) ? rp : '-';
      row[`${label} top`] = `${a.candidates[0]?.service}`;
      row[`${label} ms`] = Math.round(a.tookMs);
    }
    rows.push(row);
  }
  const n = cases.length;
  // Per-trace RCA on the same cases: the 20 slowest traces of each window, each ranked alone against the baseline.
  let t1 = 0;
  let t3 = 0;
  let tn = 0;
  const perCase: string[] = [];
  for (const c of cases) {
    const traces = nezhaWindow(DIR, c);
    const dur = (tr: Span[]): number => Math.max(...tr.map((x) => x.endMs)) - Math.min(...tr.map((x) => x.startMs));
    const slow = [...traces].sort((x, y) => dur(y) - dur(x) || (x[0].traceId < y[0].traceId ? -1 : 1)).slice(0, 20);
    let first = 0;
    for (const tr of slow) {
      const a = rankTrace({ spans: tr, baseline: baseA });
      const r = rankOf(uniq(a.candidates.map((x) => x.service)), c.rootCauseService);
      if (r <= 1) first++;
      if (r <= 3) t3++;
      tn++;
    }
    t1 += first;
    perCase.push(`${c.injectType}/${c.rootCauseService}: ${first}/${slow.length}`);
  }
  console.log(
    `Nezha per-trace RCA (20 slowest traces per case, baseline A): AC@1 ${pct(t1 / tn)} (${t1}/${tn}), AC@3 ${pct(t3 / tn)}\n  ${perCase.join('\n  ')}`
  );
  report('Nezha OB window RCA (A: fault-free minute baseline, B: + pre-injection traffic)', rows, { rows, acc, n });
  for (const label of ['A', 'B'] as const) {
    const k = acc[label];
    console.log(
      `Nezha ${label}: service AC@1 ${pct(k.s1 / n)} (${k.s1}/${n}), AC@3 ${pct(k.s3 / n)} (${k.s3}/${n}); pod AC@1 ${pct(k.p1 / n)}, AC@3 ${pct(k.p3 / n)}`
    );
  }
}

// 2. Our chain, per trace.
const baseline = buildBaseline(syntheticHealthy(42, HEALTHY));
const SEEDS = smoke(20, 1);
for (const [label, scale] of [
  ['default magnitudes', 1],
  ['a third of the magnitudes', 1 / 3],
] as const) {
  const rows: Array<Record<string, string | number>> = [];
  let at1 = 0;
  let at3 = 0;
  let total = 0;
  const defaults: Record<string, number> = {
    latency: 300,
    timeout: 15000,
    cpu_hog: 3,
    tls_slow_handshake: 400,
    kv_cache_thrash: 150,
    tcp_retransmit: 200,
  };
  for (const kind of FAULT_KINDS) {
    const row: Record<string, string | number> = { fault: kind };
    for (const hop of CHAIN_HOPS) {
      let first = 0;
      for (let seed = 1; seed <= SEEDS; seed++) {
        const magnitude =
          defaults[kind] === undefined
            ? undefined
            : kind === 'cpu_hog'
              ? 1 + (defaults[kind] - 1) * scale
              : kind === 'timeout'
                ? defaults[kind]
                : defaults[kind] * scale;
        const tr = syntheticTrace({
          seed: 100_000 + seed * 131 + kind.length * 17 + hop.length,
          fault: { hop, kind, magnitude },
        });
        const a = rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
        const r = rankOf(uniq(a.candidates.map((x) => x.service)), hop);
        if (r <= 1) first++;
        if (r <= 3) at3++;
        total++;
      }
      at1 += first;
      row[hop] = `${first}/${SEEDS}`;
    }
    rows.push(row);
  }
  report(`Our chain, per-trace RCA, ${label}: fault × hop → runs ranked first (of ${SEEDS} seeds)`, rows, {
    rows,
    at1,
    at3,
    total,
  });
  console.log(`Our chain (${label}): AC@1 ${pct(at1 / total)} (${at1}/${total}), AC@3 ${pct(at3 / total)}`);
}

// 3. Our chain, window RCA.
{
  let at1 = 0;
  let at3 = 0;
  let total = 0;
  const misses: string[] = [];
  for (const kind of FAULT_KINDS) {
    for (const hop of CHAIN_HOPS) {
      const traces: Span[][] = [];
      const events: KernelEvent[] = [];
      for (let i = 0; i < WINDOW; i++) {
        const tr = syntheticTrace({
          seed: 300_000 + i * 7 + kind.length * 1000 + hop.length * 50,
          fault: i % 10 < 3 ? { hop, kind } : undefined,
        });
        traces.push(tr.spans);
        events.push(...tr.kernelEvents);
      }
      const a = rankWindow({ traces, baseline, kernelEvents: events });
      const r = rankOf(uniq(a.candidates.map((x) => x.service)), hop);
      if (r <= 1) at1++;
      else misses.push(`${kind}@${hop}→${a.candidates[0]?.service}`);
      if (r <= 3) at3++;
      total++;
    }
  }
  report(
    `Our chain, window RCA (${WINDOW} traces, 30% faulted)`,
    [{ windows: total, 'AC@1': pct(at1 / total), 'AC@3': pct(at3 / total), misses: misses.join(' ') || '-' }],
    { at1, at3, total, misses }
  );
}

// 4. Our chain without span kinds (every kind `unspecified`, as a Zipkin- or Jaeger-converted feed can arrive; roles
// inferred from the tree), side by side with kinds: per-trace RCA at the default magnitudes, and window RCA.
{
  const strip = (tr: Span[]): Span[] => tr.map((s) => ({ ...s, kind: 'unspecified' as const }));
  const healthy = syntheticHealthy(42, HEALTHY);
  const bases = { 'with kinds': buildBaseline(healthy), 'without kinds': buildBaseline(healthy.map(strip)) };
  const shape = { 'with kinds': (tr: Span[]) => tr, 'without kinds': strip };
  const defaults: Record<string, number> = {
    latency: 300,
    timeout: 15000,
    cpu_hog: 3,
    tls_slow_handshake: 400,
    kv_cache_thrash: 150,
    tcp_retransmit: 200,
  };
  const rows: Array<Record<string, string | number>> = [];
  for (const mode of ['with kinds', 'without kinds'] as const) {
    let p1 = 0;
    let pn = 0;
    for (const kind of FAULT_KINDS) {
      for (const hop of CHAIN_HOPS) {
        for (let seed = 1; seed <= SEEDS; seed++) {
          const tr = syntheticTrace({
            seed: 100_000 + seed * 131 + kind.length * 17 + hop.length,
            fault: { hop, kind, magnitude: defaults[kind] },
          });
          const a = rankTrace({ spans: shape[mode](tr.spans), baseline: bases[mode], kernelEvents: tr.kernelEvents });
          if (a.candidates[0]?.service === hop) p1++;
          pn++;
        }
      }
    }
    let w1 = 0;
    let wn = 0;
    for (const kind of FAULT_KINDS) {
      for (const hop of CHAIN_HOPS) {
        const traces: Span[][] = [];
        const events: KernelEvent[] = [];
        for (let i = 0; i < WINDOW; i++) {
          const tr = syntheticTrace({
            seed: 300_000 + i * 7 + kind.length * 1000 + hop.length * 50,
            fault: i % 10 < 3 ? { hop, kind } : undefined,
          });
          traces.push(shape[mode](tr.spans));
          events.push(...tr.kernelEvents);
        }
        const a = rankWindow({ traces, baseline: bases[mode], kernelEvents: events });
        if (uniq(a.candidates.map((x) => x.service))[0] === hop) w1++;
        wn++;
      }
    }
    rows.push({
      spans: mode,
      'per-trace AC@1 (default magnitudes)': `${pct(p1 / pn)} (${p1}/${pn})`,
      'window AC@1': `${pct(w1 / wn)} (${w1}/${wn})`,
    });
  }
  report(
    `Our chain with and without span kinds (per-trace: fault × hop × ${SEEDS} seeds; window: ${WINDOW} traces, 30% faulted)`,
    rows,
    rows
  );
}
