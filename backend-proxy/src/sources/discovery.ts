/**
 * bpf-exporter discovery by DNS, for a DaemonSet behind a headless Service: `dns+http://name:port` in
 * HOPSCOPE_EXPORTER_URLS stands for every address `name` resolves to (one exporter per node), looked up at start and
 * every refresh period. The same `dns+` prefix as Thanos and Cortex use for their peers.
 * One address per pod: IPv4 when the name has any (a dual-stack pod has both, and asking both would double its
 * events), else IPv6. A failed lookup keeps the last good list and says so in /api/health.
 */
import { lookup } from 'node:dns/promises';
import type pino from 'pino';
import type { SourceStatus } from '../../../contract';
import type { DnsSpec } from './dns-spec';
import { ExporterSource } from './exporters';

export { DNS_PREFIX, parseDnsSpec, type DnsSpec } from './dns-spec';

/** The name's addresses, IPv4 first choice (see above), sorted so the list is stable between lookups. */
export async function resolveAddresses(host: string): Promise<string[]> {
  let v4: string[] = [];
  try {
    v4 = (await lookup(host, { all: true, family: 4 })).map((a) => a.address);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOTFOUND' && (err as NodeJS.ErrnoException).code !== 'ENODATA')
      throw err;
  }
  const list = v4.length ? v4 : (await lookup(host, { all: true, family: 6 })).map((a) => `[${a.address}]`);
  return [...new Set(list)].sort();
}

/**
 * Keeps `list` (the array every route reads as `sources.exporters`) equal to the fixed URLs plus what each DNS name
 * resolves to now. Sources for addresses that stay are kept (not rebuilt) across refreshes.
 */
export class ExporterDiscovery {
  private found = new Map<string, ExporterSource[]>();
  private errors = new Map<string, string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private specs: DnsSpec[],
    private fixed: ExporterSource[],
    private list: ExporterSource[],
    private timeoutMs: number,
    private log: pino.Logger,
    private resolve: (host: string) => Promise<string[]> = resolveAddresses,
    /** Bearer token of every exporter found (HOPSCOPE_EXPORTER_TOKEN). */
    private token?: string
  ) {}

  async refresh(): Promise<void> {
    await Promise.all(
      this.specs.map(async (d) => {
        try {
          const addrs = await this.resolve(d.host);
          if (!addrs.length) throw new Error('no addresses');
          const before = new Map((this.found.get(d.spec) ?? []).map((e) => [e.baseUrl, e]));
          const next = addrs
            .map((a) => `${d.protocol}//${a}:${d.port}`)
            .map((u) => before.get(u) ?? new ExporterSource(u, this.timeoutMs, this.token));
          if (next.length !== before.size || next.some((e) => !before.has(e.baseUrl)))
            this.log.info({ spec: d.spec, exporters: next.map((e) => e.baseUrl) }, 'bpf-exporters discovered');
          this.found.set(d.spec, next);
          this.errors.delete(d.spec);
        } catch (err) {
          const e = err as NodeJS.ErrnoException;
          const kept = this.found.get(d.spec)?.length ?? 0;
          this.errors.set(
            d.spec,
            `lookup of ${d.host} failed (${e.code ?? e.message}); ${kept ? `using the ${kept} exporter(s) of the last good lookup` : 'no exporter known from it yet'}`
          );
          this.log.warn({ spec: d.spec, err: e.message }, 'bpf-exporter discovery failed');
        }
      })
    );
    const all = [...this.fixed, ...this.specs.flatMap((d) => this.found.get(d.spec) ?? [])];
    this.list.splice(0, this.list.length, ...all);
  }

  start(periodMs: number): void {
    if (periodMs <= 0 || !this.specs.length) return;
    this.timer = setInterval(() => {
      void this.refresh();
    }, periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One status per DNS name: how many exporters it gave, or why the last lookup failed. */
  statuses(): SourceStatus[] {
    return this.specs.map((d) => {
      const err = this.errors.get(d.spec);
      return err
        ? { source: `bpf-exporter discovery ${d.host}`, ok: false, error: err }
        : { source: `bpf-exporter discovery ${d.host}`, ok: true };
    });
  }
}
