/**
 * The simulated chain's control API: active and past faults, served as annotations for the time series. With a
 * token (HOPSCOPE_CHAIN_CONTROL_TOKEN = the chain's HOPSCOPE_CHAIN_TOKEN) every call carries it as a bearer token.
 */
import { FaultAnnotation } from '../../../contract';
import { callJson, SourceError } from './http';

export class ChainControlSource {
  readonly name = 'chain-control';
  private readonly headers?: Record<string, string>;
  constructor(
    public baseUrl: string,
    private timeoutMs: number,
    private token?: string
  ) {
    if (token) this.headers = { authorization: `Bearer ${token}` };
  }

  async faults(): Promise<{ annotations: FaultAnnotation[]; invalid: number }> {
    const r = await callJson<unknown>(`${this.baseUrl}/faults`, {
      source: this.name,
      timeoutMs: this.timeoutMs,
      retries: 1,
      headers: this.headers,
    });
    if (r.status === 401 || r.status === 403) {
      throw new SourceError(
        this.name,
        this.token
          ? `faults: HTTP ${r.status}: the control API refused the proxy's HOPSCOPE_CHAIN_CONTROL_TOKEN (it must equal the chain's HOPSCOPE_CHAIN_TOKEN)`
          : `faults: HTTP ${r.status}: the control API requires a token: set HOPSCOPE_CHAIN_CONTROL_TOKEN to the chain's HOPSCOPE_CHAIN_TOKEN`,
        r.status
      );
    }
    if (r.status < 200 || r.status >= 300) throw new SourceError(this.name, `faults: HTTP ${r.status}`, r.status);
    const body = r.body as { faults?: unknown[] } | unknown[];
    const list = Array.isArray(body) ? body : Array.isArray(body?.faults) ? body.faults : undefined;
    if (!list) throw new SourceError(this.name, 'faults: expected an array or {faults: [...]}');
    const annotations: FaultAnnotation[] = [];
    let invalid = 0;
    for (const f of list) {
      const a = FaultAnnotation.safeParse(f);
      if (a.success) annotations.push(a.data);
      else invalid++;
    }
    return { annotations, invalid };
  }

  async health(): Promise<void> {
    await this.faults();
  }
}
