/**
 * Declares pid → pod to the bpf-exporter (POST {exporter}/register) so kernel events of this process are attributed to
 * a simulated pod. Failures are logged once and otherwise ignored: the chain works without an exporter.
 * An exporter bound beyond loopback wants its token: the chain config's `exporterToken` (HOPSCOPE_EXPORTER_TOKEN, the
 * exporter's HOPSCOPE_BPF_TOKEN, the same name the proxy uses for it), sent as `Authorization: Bearer`; never logged.
 */
import type { Logger } from 'pino';

let warned = false;

export async function registerWithExporter(
  exporterUrl: string,
  reg: { pid: number; pod: string; namespace: string; node: string; service: string },
  log: Logger,
  token: string | undefined
): Promise<boolean> {
  try {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(new URL('/register', exporterUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify(reg),
      signal: AbortSignal.timeout(2000),
    });
    if (res.status === 401 || res.status === 403) {
      throw new Error(
        `HTTP ${res.status}: ${token ? 'the exporter refused HOPSCOPE_EXPORTER_TOKEN (it must equal its HOPSCOPE_BPF_TOKEN)' : 'the exporter requires a token: set HOPSCOPE_EXPORTER_TOKEN to its HOPSCOPE_BPF_TOKEN'}`
      );
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    log.info({ exporter: exporterUrl, ...reg }, 'registered pid with the bpf-exporter');
    return true;
  } catch (err) {
    if (!warned)
      log.warn(
        { exporter: exporterUrl, err: (err as Error).message },
        'could not register pid with the bpf-exporter (continuing without)'
      );
    warned = true;
    return false;
  }
}
