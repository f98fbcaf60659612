/**
 * Declares pid → pod to the bpf-exporter (POST {exporter}/register) so kernel events of this process are attributed to
 * a simulated pod. Failures are logged once and otherwise ignored: the chain works without an exporter.
 */
import type { Logger } from 'pino';

let warned = false;

export async function registerWithExporter(exporterUrl: string, reg: { pid: number; pod: string; namespace: string; node: string; service: string }, log: Logger): Promise<boolean> {
  try {
    const res = await fetch(new URL('/register', exporterUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(reg), signal: AbortSignal.timeout(2000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    log.info({ exporter: exporterUrl, ...reg }, 'registered pid with the bpf-exporter');
    return true;
  } catch (err) {
    if (!warned) log.warn({ exporter: exporterUrl, err: (err as Error).message }, 'could not register pid with the bpf-exporter (continuing without)');
    warned = true;
    return false;
  }
}
