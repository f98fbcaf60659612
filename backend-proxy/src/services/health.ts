/** The proxy's health: up as long as it answers; `ok` says whether every configured source is. */
import type { HealthAnswer } from '../../../contract';
import type { Sources } from '../sources';

const VERSION = '0.1.0';

export class HealthService {
  constructor(private sources: Pick<Sources, 'health'>) {}

  async answer(): Promise<HealthAnswer> {
    const list = await this.sources.health();
    return { ok: list.every((s) => s.ok), version: VERSION, sources: list };
  }
}
