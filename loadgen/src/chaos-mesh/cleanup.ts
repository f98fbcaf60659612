/**
 * Chaos Mesh resources outlive a driver that dies without its `finally` (SIGKILL, a crash, a lost node): they are
 * found again by their labels. On start, a run removes the stale ones in its namespaces (their owner, on this host,
 * is no longer running, or their expiry has passed); `hopscope-load --cleanup RUN_ID` removes one run's, whoever
 * made them.
 */
import type { ChaosMeshTarget } from '../../../contract/faults';
import type { ChaosMeshClient, ListedChaos } from './client';
import { EXPIRES_ANNOTATION, OWNER_ANNOTATION, labelSelector } from './resources';

/** The namespaces a scenario's Chaos Mesh resources live in. */
export function namespacesOf(cm: ChaosMeshTarget): string[] {
  return [...new Set([cm.namespace, ...Object.values(cm.hops).map((h) => h?.namespace ?? cm.namespace)])];
}

export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Why a listed resource is stale, or undefined while its owner may still be running it. */
export function staleReason(
  r: ListedChaos,
  now: number,
  host: string,
  alive: (pid: number) => boolean = processAlive
): string | undefined {
  const expires = Date.parse(r.annotations[EXPIRES_ANNOTATION] ?? '');
  if (Number.isFinite(expires) && expires <= now) return `expired at ${new Date(expires).toISOString()}`;
  const owner = r.annotations[OWNER_ANNOTATION] ?? '';
  const slash = owner.lastIndexOf('/');
  const pid = Number(owner.slice(slash + 1));
  if (slash > 0 && owner.slice(0, slash) === host && Number.isInteger(pid) && pid > 0 && !alive(pid))
    return `its driver (pid ${pid} on ${host}) is gone`;
  return undefined;
}

export interface Removed {
  resource: string;
  why: string;
}

/** Removes what `pick` says is to go among ours in these namespaces; returns what went and why. */
async function removeListed(
  client: ChaosMeshClient,
  namespaces: string[],
  selector: string,
  pick: (r: ListedChaos) => string | undefined
): Promise<Removed[]> {
  const removed: Removed[] = [];
  for (const ns of namespaces)
    for (const r of await client.list(ns, selector)) {
      const why = pick(r);
      if (why === undefined) continue;
      await client.delete(r.kind, r.namespace, r.name);
      removed.push({ resource: `${r.kind} ${r.namespace}/${r.name}`, why });
    }
  return removed;
}

export function sweepStale(
  client: ChaosMeshClient,
  namespaces: string[],
  host: string,
  now = Date.now(),
  alive: (pid: number) => boolean = processAlive
): Promise<Removed[]> {
  return removeListed(client, namespaces, labelSelector(), (r) => staleReason(r, now, host, alive));
}

export function cleanupRun(client: ChaosMeshClient, namespaces: string[], runId: string): Promise<Removed[]> {
  return removeListed(client, namespaces, labelSelector(runId), () => `run ${runId}`);
}
