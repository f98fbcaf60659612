import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EvidenceKind } from '../../../contract';
import { buildBaseline, rankTrace } from '../../../backend-proxy/src/rca';
import { CHAIN_HOPS, FAULT_KINDS, syntheticHealthy, syntheticTrace } from '../../support/rca/synthetic';

const SEEDS = [1, 2, 3, 4, 5];

test('fault matrix: for each fault kind at each hop, the faulted hop ranks first (synthetic chain, 5 seeds)', (t) => {
  const baseline = buildBaseline(syntheticHealthy(42, 120));
  const table: string[] = [`${'fault \\ hop'.padEnd(20)}${CHAIN_HOPS.map((h) => h.padStart(13)).join('')}`];
  let first = 0;
  let total = 0;
  const failures: string[] = [];
  for (const kind of FAULT_KINDS) {
    const cells: string[] = [];
    for (const hop of CHAIN_HOPS) {
      const ranks = SEEDS.map((seed) => {
        const tr = syntheticTrace({ seed: seed * 7907 + kind.length * 31 + hop.length, fault: { hop, kind } });
        const a = rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
        const rank = a.candidates.findIndex((c) => c.service === hop) + 1 || 99;
        if (rank !== 1)
          failures.push(
            `${kind}@${hop} seed ${seed}: rank ${rank}; top ${a.candidates
              .slice(0, 2)
              .map((c) => `${c.service}=${c.score}`)
              .join(', ')}`
          );
        // When the hop is named, the faulted replica (pod) is named too, unless no span of it arrived.
        if (rank === 1 && a.candidates[0].pod !== 'unknown')
          assert.equal(a.candidates[0].pod, tr.truth!.pod, `${kind}@${hop}`);
        return rank;
      });
      first += ranks.filter((r) => r === 1).length;
      total += ranks.length;
      cells.push(`${ranks.join(',')}`.padStart(13));
    }
    table.push(`${kind.padEnd(20)}${cells.join('')}`);
  }
  table.push(`ranked first: ${first}/${total} (${((100 * first) / total).toFixed(1)}%)`);
  for (const line of table) t.diagnostic(line);
  assert.ok(first / total >= 0.95, failures.join('\n'));
});

test('fault kinds leave their own evidence at the faulted hop', () => {
  const baseline = buildBaseline(syntheticHealthy(43, 80));
  const expect: Record<string, EvidenceKind> = {
    latency: 'self_time',
    error: 'error',
    timeout: 'timeout',
    cpu_hog: 'self_time',
    tls_slow_handshake: 'kernel:tls_handshake',
    gpu_oom: 'kernel:gpu_alloc_fail',
    kv_cache_thrash: 'self_time',
    tcp_retransmit: 'kernel:tcp_retransmit',
  };
  for (const kind of FAULT_KINDS) {
    const tr = syntheticTrace({ seed: 77, fault: { hop: 'llm-vllm', kind } });
    const a = rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
    const kinds = a.candidates[0].evidence.map((e) => e.kind);
    assert.ok(kinds.includes(expect[kind]), `${kind}: ${kinds.join(',')}`);
    if (kind === 'gpu_oom') assert.ok(kinds.includes('model_fallback'), kinds.join(','));
    if (kind === 'kv_cache_thrash') assert.ok(a.candidates[0].evidence.some((e) => e.lambda === 1.2));
    if (kind === 'tls_slow_handshake' || kind === 'tcp_retransmit')
      assert.ok(kinds.includes('client_server_gap'), kinds.join(','));
  }
});

test('a healthy synthetic trace has no strong candidate', () => {
  const baseline = buildBaseline(syntheticHealthy(44, 80));
  for (const seed of [1, 2, 3]) {
    const tr = syntheticTrace({ seed: 900 + seed, strayRetransmits: 0 });
    const a = rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
    assert.ok(
      a.candidates.every((c) => c.score < 0.1),
      JSON.stringify(a.candidates.map((c) => [c.service, c.score]))
    );
  }
});
