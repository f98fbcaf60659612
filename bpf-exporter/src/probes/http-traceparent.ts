/**
 * http_traceparent (opt-in, sampled): reads the W3C `traceparent` header of HTTP requests from syscall buffers
 * (Beyla-style) so kernel evidence of that process joins the trace: outgoing on write/writev/sendto and Node's
 * SSL_write (HTTPS, before encryption), incoming on read/recvfrom. Only the first 192 bytes of a request are read
 * (bpftrace 0.17: one string that long, next to the record prefix, is what fits the 512-byte BPF stack), so the header
 * must come early — Node and curl put it there. Expensive (one printf per sampled request), hence opt-in; its cost is measured in bench/.
 */
import { Counter, type Registry } from 'prom-client';
import type { Kit } from '../core/kit';
import { bpfPath } from '../core/probe-path';
import { labelCache, type ProbeModule, type ProbeOptions, type UprobeTarget } from '../core/probe';
import { isNodeBinary } from './tls-handshake';

// The first 8 bytes are read once per call ($h) and compared in place: each str() is a helper call, paid on every
// read/write syscall of the node.
const IS_REQUEST =
  '(strncmp($h, "GET ", 4) == 0 || strncmp($h, "POST", 4) == 0 || strncmp($h, "PUT ", 4) == 0 ||' +
  ' strncmp($h, "PATCH ", 6) == 0 || strncmp($h, "DELETE ", 7) == 0)';

// Within the per-event budget like every probe; past it the request is counted as suppressed (not read).
const OUT = (kit: Kit, dir: string, via: string, b: string): string =>
  kit.event({
    type: 'http_traceparent',
    pid: 'pid',
    cg: 'cgroup',
    comm: 'comm',
    printf: { fmt: `${dir}|${via}|%llu|%d|%llu|%s\\n`, args: ['nsecs', 'pid', 'cgroup', `str(${b}, 192)`] },
  });

function program(o: ProbeOptions, targets: UprobeTarget[], kit: Kit): string {
  const sample = o.traceparentSampleEvery > 1 ? ` && rand % ${o.traceparentSampleEvery} == 0` : '';
  const self = `pid != ${o.selfPid}`;
  const check = (b: string, dir: string, via: string, extra = ''): string =>
    `$h = str(${b}, 8); if (${extra}${IS_REQUEST}${sample}) { ${OUT(kit, dir, via, b)} }`;
  return `
tracepoint:syscalls:sys_enter_write /${self}/ { ${check('args->buf', 'out', 'write')} }
tracepoint:syscalls:sys_enter_sendto /${self}/ { ${check('args->buff', 'out', 'sendto')} }
tracepoint:syscalls:sys_enter_writev /${self}/
{
  $b = (uint64)uptr(((struct iovec *)args->vec)->iov_base);
  ${check('$b', 'out', 'writev')}
}
${targets.map((t) => `uprobe:${bpfPath(t.path)}:SSL_write /${self}/ { ${check('arg1', 'out', 'ssl_write')} }`).join('\n')}
tracepoint:syscalls:sys_enter_read /${self}/ { @rb[tid] = args->buf; }
tracepoint:syscalls:sys_exit_read /@rb[tid]/
{
  $b = @rb[tid]; delete(@rb[tid]);
  if (args->ret > 0) { ${check('$b', 'in', 'read')} }
}
tracepoint:syscalls:sys_enter_recvfrom /${self}/ { @rb[tid] = args->ubuf; }
tracepoint:syscalls:sys_exit_recvfrom /@rb[tid]/
{
  $b = @rb[tid]; delete(@rb[tid]);
  if (args->ret > 0) { ${check('$b', 'in', 'recvfrom')} }
}
${kit.footer(['@rb'])}`;
}

const LINE = /^(in|out)\|(\w+)\|(\d+)\|(\d+)\|(\d+)\|([A-Z]+) (\S{0,192})/s;
const TRACEPARENT = /\r\ntraceparent:\s*([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/i;

// Node's SSL_write fired several times for one request during the handshake, and a sampled request may be seen by
// both write and SSL_write: one event per (pid, direction, traceparent) per second.
const DEDUP_MS = 1000;
const DEDUP_MAX = 4096;
const seen = new Map<string, number>();

function duplicate(key: string, now: number): boolean {
  const at = seen.get(key);
  if (at !== undefined && now - at < DEDUP_MS) return true;
  if (seen.size >= DEDUP_MAX) seen.delete(seen.keys().next().value as string);
  seen.delete(key);
  seen.set(key, now);
  return false;
}

export const httpTraceparentProbe: ProbeModule = {
  name: 'http_traceparent',
  description:
    'traceparent of HTTP requests (plaintext syscalls, Node SSL_write), sampled; opt-in because it costs per request',
  optIn: true,
  requirements: () => [{ kind: 'tracepoint', category: 'syscalls', name: 'sys_enter_writev' }],
  // HTTPS requests of Node processes, read before encryption: optional (the syscalls see plaintext HTTP anyway).
  uprobes: [{ file: 'node', matches: isNodeBinary, symbols: ['SSL_write'] }],
  program: (o, targets, kit) => program(o, targets, kit),
  env: { BPFTRACE_STRLEN: '192' },
  parse(line) {
    const m = LINE.exec(line);
    if (!m) return null;
    const tp = TRACEPARENT.exec(line);
    if (!tp || /^0+$/.test(tp[2])) return null; // requests without a (valid) traceparent are not events
    const [, dir, via, t, pid, cg, method, path] = m;
    if (duplicate(`${pid}|${dir}|${tp[2]}|${tp[3]}`, Date.now())) return null;
    return {
      type: 'http_traceparent',
      nsecs: BigInt(t),
      pid: Number(pid),
      cgroupId: Number(cg),
      traceId: tp[2].toLowerCase(),
      detail: {
        direction: dir === 'out' ? 'outgoing' : 'incoming',
        syscall: via,
        method,
        path,
        spanId: tp[3].toLowerCase(),
        sampled: (parseInt(tp[4], 16) & 1) === 1,
      },
    };
  },
  metrics(registry: Registry, pod) {
    const total = new Counter({
      name: 'hopscope_http_traceparent_total',
      help: 'HTTP requests whose traceparent the probe read (sampled, and within the per-event budget: see hopscope_bpf_events_suppressed_total), by pod and direction',
      labelNames: [...pod.names, 'direction'],
      registers: [registry],
    });
    const child = labelCache(total);
    return {
      observe: (e) => {
        if (e.type === 'http_traceparent') child({ ...pod.ofEvent(e), direction: String(e.detail.direction) }).inc();
      },
    };
  },
};
