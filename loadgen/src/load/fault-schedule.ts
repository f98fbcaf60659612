/**
 * The scenario's fault schedule, applied through the chain's fault API (`POST {control}/faults`): each fault at its
 * time into the run, recorded as an AppliedFault (the chain's id, or why it was not applied); faults still active
 * when the run ends or is interrupted are removed (`DELETE /faults/:id`), so a test leaves the chain as it found it.
 * A control API with a token (the chain's HOPSCOPE_CHAIN_TOKEN) gets it as `Authorization: Bearer`: from
 * HOPSCOPE_CHAIN_TOKEN in hopscope-load's environment (the same variable, so one export serves both); never logged.
 * A fault `via: chaos-mesh` goes to the ChaosMeshFaults backend instead (a Chaos Mesh resource created in the
 * cluster, always deleted at the end, even after Chaos Mesh has ended it).
 */
import type { AppliedFault } from '../../../contract/runs';
import type { ScenarioFault } from '../../../contract/scenario';
import type { FaultRequest } from '../../../contract/faults';
import type { ChaosMeshFaults } from '../chaos-mesh/schedule-backend';

const TIMEOUT_MS = 5000;

async function call(
  method: 'POST' | 'DELETE',
  url: string,
  token: string | undefined,
  body?: unknown
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = body ? { 'content-type': 'application/json' } : {};
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, json };
}

const why = (err: unknown): string => {
  const e = err as Error & { cause?: { code?: string } };
  return e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS} ms` : (e.cause?.code ?? e.message);
};

export class FaultSchedule {
  private readonly applied: AppliedFault[];
  private timers: NodeJS.Timeout[] = [];
  private inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly faults: ScenarioFault[],
    private readonly control: string,
    private readonly warn: (m: string) => void,
    private readonly token: string | undefined = process.env.HOPSCOPE_CHAIN_TOKEN?.trim() || undefined,
    private readonly chaosMesh?: ChaosMeshFaults
  ) {
    this.applied = faults.map((f) => ({
      ...(f.via === 'chaos-mesh' ? { via: f.via } : {}),
      atS: f.at,
      target: f.target,
      // The scenario schema refuses the cluster-only kinds via chain.
      kind: f.kind as FaultRequest['kind'],
      ...(f.magnitude !== undefined ? { magnitude: f.magnitude } : {}),
      ...(f.for !== undefined ? { forS: f.for } : {}),
      ...(f.pod ? { pod: f.pod } : {}),
    }));
  }

  /** The schedule as planned (for the run registration). */
  planned(): AppliedFault[] {
    return this.applied.map((f) => ({ ...f }));
  }

  /** Arms a timer per fault, counted from now (the start of the load). */
  start(): void {
    this.faults.forEach((f, i) => {
      this.timers.push(
        setTimeout(() => {
          const p = (
            f.via === 'chaos-mesh' ? this.applyChaosMesh(f, this.applied[i], i) : this.apply(f, this.applied[i])
          ).finally(() => this.inFlight.delete(p));
          this.inFlight.add(p);
        }, f.at * 1000)
      );
    });
  }

  private async apply(f: ScenarioFault, rec: AppliedFault): Promise<void> {
    if (this.stopped) return;
    const body: FaultRequest = {
      target: f.target,
      // The scenario schema refuses the cluster-only kinds via chain.
      kind: f.kind as FaultRequest['kind'],
      ...(f.magnitude !== undefined ? { magnitude: f.magnitude } : {}),
      ...(f.for !== undefined ? { durationS: f.for } : {}),
      ...(f.pod ? { pod: f.pod } : {}),
    };
    rec.startMs = Date.now();
    try {
      const a = await call('POST', `${this.control}/faults`, this.token, body);
      if (a.status >= 200 && a.status < 300 && typeof a.json?.id === 'string') {
        rec.id = a.json.id;
        return;
      }
      rec.error =
        a.status === 401 || a.status === 403
          ? `the fault API answered ${a.status}: ${this.token ? "it refused HOPSCOPE_CHAIN_TOKEN (not the chain's token)" : "it requires a token: set HOPSCOPE_CHAIN_TOKEN to the chain's"}`
          : `the fault API answered ${a.status}: ${a.json?.error?.message ?? 'no fault id'}`;
    } catch (err) {
      rec.error = `the fault API at ${this.control} is unreachable (${why(err)})`;
    }
    delete rec.startMs;
    this.warn(`fault ${f.kind} on ${f.target} at ${f.at} s not applied: ${rec.error}`);
  }

  private async applyChaosMesh(f: ScenarioFault, rec: AppliedFault, index: number): Promise<void> {
    if (this.stopped) return;
    rec.startMs = Date.now();
    try {
      if (!this.chaosMesh) throw new Error('no Kubernetes cluster configured for via: chaos-mesh');
      const r = await this.chaosMesh.apply(index);
      rec.id = r.id;
      rec.resource = r.resource;
      return;
    } catch (err) {
      rec.error = (err as Error).message;
    }
    delete rec.startMs;
    this.warn(`fault ${f.kind} on ${f.target} at ${f.at} s not applied: ${rec.error}`);
  }

  /** Deletes a Chaos Mesh resource at the end, whether or not its experiment has run its course. */
  private async removeChaosMesh(rec: AppliedFault, id: string, startMs: number, now: number): Promise<void> {
    const naturalEnd = rec.forS !== undefined ? startMs + rec.forS * 1000 : undefined;
    try {
      await this.chaosMesh!.remove(id);
      rec.endMs = naturalEnd !== undefined && naturalEnd <= now ? naturalEnd : Date.now();
    } catch (err) {
      rec.error = `could not remove it at the end (${(err as Error).message}): remove it with hopscope-load --cleanup RUN_ID`;
      this.warn(`fault ${rec.id} (${rec.kind} on ${rec.target}) ${rec.error}`);
    }
  }

  /** Cancels what has not started and removes what is still active; returns what happened to each fault. */
  async stop(): Promise<AppliedFault[]> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.inFlight]);
    const now = Date.now();
    await Promise.all(
      this.applied.map(async (rec) => {
        if (!rec.id || rec.startMs === undefined) {
          if (!rec.error && rec.startMs === undefined) rec.error = 'not applied: the run ended before its time';
          return;
        }
        if (rec.via === 'chaos-mesh') return this.removeChaosMesh(rec, rec.id, rec.startMs, now);
        const naturalEnd = rec.forS !== undefined ? rec.startMs + rec.forS * 1000 : undefined;
        if (naturalEnd !== undefined && naturalEnd <= now) {
          rec.endMs = naturalEnd;
          return;
        }
        try {
          const a = await call('DELETE', `${this.control}/faults/${encodeURIComponent(rec.id)}`, this.token);
          rec.endMs = Date.now();
          if (a.status >= 400 && a.status !== 404)
            rec.error = `could not remove it at the end: the fault API answered ${a.status}`;
        } catch (err) {
          rec.error = `could not remove it at the end (${why(err)}): remove it with DELETE ${this.control}/faults/${rec.id}`;
          this.warn(`fault ${rec.id} (${rec.kind} on ${rec.target}) ${rec.error}`);
        }
      })
    );
    return this.planned();
  }
}
