/**
 * A run's `metricsUrl` becomes an HTTP SD target Prometheus scrapes (./service.ts scrapeTargets), so it must not steer
 * Prometheus: http(s) only, no credentials, no query (no `__param_*` for Prometheus to send on), no fragment, and the
 * host either the registering worker's own address or one of HOPSCOPE_RUN_METRICS_HOSTS.
 */
import { RunsError } from './errors';

const bare = (h: string): string =>
  h
    .replace(/^\[|\]$/g, '')
    .replace(/^::ffff:/, '')
    .toLowerCase();

/** Throws a 400 naming what is wrong; `remote` is the registering connection's address. */
export function checkMetricsUrl(raw: string | undefined, remote: string | undefined, allowed: readonly string[]): void {
  if (raw === undefined) return;
  const bad = (why: string): RunsError =>
    new RunsError('invalid', `body.metricsUrl: ${why} (it becomes a Prometheus scrape target)`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw bad('not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(`${u.protocol} is not http or https`);
  if (u.username || u.password) throw bad('credentials are not allowed');
  if (u.search || u.hash) throw bad('a query or fragment is not allowed');
  const host = bare(u.hostname);
  const ok = (remote !== undefined && host === bare(remote)) || allowed.some((a) => bare(a) === host);
  if (!ok)
    throw bad(
      `host ${host} is neither the registering worker's own address (${remote ? bare(remote) : 'unknown'}) nor in HOPSCOPE_RUN_METRICS_HOSTS`
    );
}
