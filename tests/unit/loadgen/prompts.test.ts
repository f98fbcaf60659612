import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { synthPrompt } from '../../../loadgen/src/load/prompts';

describe('seeded prompt synthesiser', () => {
  it('is deterministic per (seed, index) and differs across indexes', () => {
    assert.deepEqual(synthPrompt(3, 17), synthPrompt(3, 17));
    assert.notDeepEqual(synthPrompt(3, 17), synthPrompt(3, 18));
    assert.notDeepEqual(synthPrompt(3, 17), synthPrompt(4, 17));
  });

  it('produces every perturbation kind and multi-turn dialogues ending on a user question', () => {
    const kinds = new Set<string>();
    let multi = 0;
    for (let i = 0; i < 400; i++) {
      const p = synthPrompt(1, i);
      p.perturbations.forEach((k) => kinds.add(k));
      assert.equal(p.messages[p.messages.length - 1].role, 'user');
      if (p.turns > 1) {
        multi++;
        assert.equal(p.messages.length, 2 * (p.turns - 1) + 1);
      }
    }
    for (const k of ['synonym_swap', 'logic_inversion', 'multi_hop_nesting', 'long_tail_length', 'multi_turn'])
      assert.ok(kinds.has(k), `missing ${k}`);
    assert.ok(multi > 60 && multi < 200, `${multi} multi-turn of 400`);
  });

  it('has a long-tailed length distribution', () => {
    const lens = Array.from({ length: 1000 }, (_, i) => synthPrompt(9, i).approxTokens).sort((a, b) => a - b);
    const p50 = lens[500],
      p99 = lens[990];
    assert.ok(p99 > 5 * p50, `p50 ${p50} p99 ${p99}`);
  });
});
