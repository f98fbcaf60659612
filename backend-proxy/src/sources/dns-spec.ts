/** `dns+http://name:port` exporter entries (see discovery.ts), parsed without pulling in the sources (config reads this). */
export const DNS_PREFIX = 'dns+';

export interface DnsSpec {
  /** As configured, e.g. `dns+http://bpf-exporter.hopscope.svc:3302`. */
  spec: string;
  protocol: 'http:' | 'https:';
  host: string;
  port: string;
}

/** Parses `dns+http(s)://host:port`; throws a message naming what is wrong. */
export function parseDnsSpec(spec: string): DnsSpec {
  let u: URL;
  try {
    u = new URL(spec.slice(DNS_PREFIX.length));
  } catch {
    throw new Error(`"${spec}" is not dns+<URL> (expected e.g. dns+http://bpf-exporter.hopscope.svc:3302)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`"${spec}" must use http or https after dns+, not ${u.protocol}`);
  if (!u.hostname || /^[\d.]+$/.test(u.hostname) || u.hostname.startsWith('['))
    throw new Error(`"${spec}": dns+ needs a name to resolve, not an address`);
  if (u.pathname !== '/' || u.search) throw new Error(`"${spec}": dns+ takes scheme://name:port only`);
  return { spec, protocol: u.protocol, host: u.hostname, port: u.port || (u.protocol === 'https:' ? '443' : '80') };
}
