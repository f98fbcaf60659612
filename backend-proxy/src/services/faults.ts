/** Faults injected into the simulated chain (its control API), as annotations of a time range. */
import type { AnnotationsAnswer } from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import type { ChainControlSource } from '../sources/chain';
import { settle } from '../sources/http';

export class FaultService {
  constructor(private chain: ChainControlSource | undefined) {}

  get configured(): boolean {
    return this.chain !== undefined;
  }

  /** The faults active at some time of the range; a missing or failing chain control is a not-ok source. */
  async inRange(range: TimeRange): Promise<AnnotationsAnswer> {
    const chain = this.chain;
    if (!chain)
      return {
        annotations: [],
        sources: [
          { source: 'chain-control', ok: false, error: 'chain-control: not configured (HOPSCOPE_CHAIN_CONTROL_URL)' },
        ],
      };
    const got = await settle('chain-control', () => chain.faults());
    const annotations = (got.value?.annotations ?? []).filter(
      (a) => a.startMs <= range.to && (a.endMs ?? Infinity) >= range.from
    );
    return { annotations, sources: [got.status] };
  }
}
