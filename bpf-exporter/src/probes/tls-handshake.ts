/**
 * tls_handshake: TLS handshake duration, role and result per process.
 * Attached to the node binaries and libssl.so.3 files the workloads run (found in their processes' maps, a container's
 * through /proc/<pid>/root; one attach per distinct file) plus HOPSCOPE_BPF_NODE_BINARY / HOPSCOPE_BPF_LIBSSL.
 * - Node (statically linked OpenSSL): TLSWrap's info callback, HANDSHAKE_START (0x10) → HANDSHAKE_DONE (0x20) per SSL
 *   pointer; SSL_do_handshake/SSL_connect do not fire for Node (it drives the handshake from SSL_read).
 * - Other OpenSSL 3 users (libssl.so.3): SSL_in_init returning 1 (in handshake) then 0 (done) — an upper bound, the
 *   end is seen at the next SSL call — or SSL_do_handshake returning 1 where the application calls it (curl, Python),
 *   whichever comes first.
 * Role comes from SSL_set_connect_state / SSL_set_accept_state; an SSL freed mid-handshake is result "aborted".
 * Handshakes are counted in the kernel (duration bucketed there with the histogram's bounds, plus the sum), so
 * hopscope_tls_handshake_seconds stays exact at any rate; per-event records go out within the per-event budget.
 */
import { Histogram, type Registry } from 'prom-client';
import { secondsToNs, type Kit } from '../core/kit';
import { bpfPath } from '../core/probe-path';
import { big, json, labelCache, num, observeMany, str, type ProbeModule, type UprobeKind } from '../core/probe';

export const NODE_INFO_CALLBACK = '_ZN4node6crypto7TLSWrap15SSLInfoCallbackEPK6ssl_stii';

/** Handshake duration buckets (s), shared by the kernel's bucketing and the histogram. */
export const TLS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** A handshake this slow (or a failed one) is notable: its record has its own budget (core/kit.ts). The proxy's
 *  root-cause engine calls a handshake slow from 200 ms too (slowTlsMs). */
export const SLOW_TLS_NS = 200_000_000;

/** One handshake: counted in the kernel per [pid, cgroup, role, ok, bucket], its record within the budget. */
const OUT = (kit: Kit, lib: string, d: string, role: string, ok: 0 | 1): string => `$hd = ${d}; $hr = ${role};
  ${kit.event({
    type: 'tls_handshake',
    pid: 'pid',
    cg: 'cgroup',
    comm: 'comm',
    tally: { name: 'hs', dims: ['$hr', String(ok)], valueNs: '$hd' },
    // A failed handshake is notable too: its duration is then how long it ran before the SSL was freed.
    notableWhen: ok ? `$hd >= ${SLOW_TLS_NS}` : '1',
    printf: {
      fmt: `{\\"lib\\":\\"${lib}\\",\\"t\\":%llu,\\"pid\\":%d,\\"cg\\":%llu,\\"d\\":%llu,\\"role\\":%d,\\"ok\\":%d}\\n`,
      args: ['nsecs', 'pid', 'cgroup', '$hd', '$hr', String(ok)],
    },
  })}`;

// @nhs: 0 = not seen, 1 = handshake finished, >1 = start time. TLS 1.3 post-handshake messages (session tickets) raise
// HANDSHAKE_START/DONE again on the same SSL: only the first handshake counts.
// The exporter's own handshakes (its Kubernetes API client) are not a workload's: skipped where they start.
function nodeSection(kit: Kit, path: string, i: number, self: number): string {
  const bin = bpfPath(path);
  return `
uprobe:${bin}:SSL_set_connect_state { @nrole${i}[arg0] = 1; }
uprobe:${bin}:SSL_set_accept_state { @nrole${i}[arg0] = 2; }
uprobe:${bin}:${NODE_INFO_CALLBACK}
/pid != ${self}/
{
  if ((arg1 & 0x10) && @nhs${i}[arg0] == 0) { @nhs${i}[arg0] = nsecs; }
  if ((arg1 & 0x20) && @nhs${i}[arg0] > 1) {
    ${OUT(kit, 'node', `nsecs - @nhs${i}[arg0]`, `@nrole${i}[arg0]`, 1)}
    @nhs${i}[arg0] = 1;
  }
}
uprobe:${bin}:SSL_free
{
  $t = @nhs${i}[arg0];
  if ($t > 1) { ${OUT(kit, 'node', 'nsecs - $t', `@nrole${i}[arg0]`, 0)} }
  delete(@nhs${i}[arg0]); delete(@nrole${i}[arg0]);
}`;
}

// @lhs: 0 = not seen, 1 = handshake finished (do not restart on post-handshake messages), >1 = start time.
function libsslSection(kit: Kit, path: string, i: number): string {
  const lib = bpfPath(path);
  return `
uprobe:${lib}:SSL_set_connect_state { @lrole${i}[arg0] = 1; }
uprobe:${lib}:SSL_set_accept_state { @lrole${i}[arg0] = 2; }
uprobe:${lib}:SSL_in_init { @larg${i}[tid] = arg0; }
uretprobe:${lib}:SSL_in_init
{
  $s = @larg${i}[tid]; delete(@larg${i}[tid]);
  if (retval == 1 && @lhs${i}[$s] == 0) { @lhs${i}[$s] = nsecs; }
  if (retval == 0 && @lhs${i}[$s] > 1) {
    ${OUT(kit, 'libssl', `nsecs - @lhs${i}[$s]`, `@lrole${i}[$s]`, 1)}
    @lhs${i}[$s] = 1;
  }
}
uprobe:${lib}:SSL_do_handshake
{
  @ldh${i}[tid] = arg0;
  if (@lhs${i}[arg0] == 0) { @lhs${i}[arg0] = nsecs; }
}
uretprobe:${lib}:SSL_do_handshake
{
  $s = @ldh${i}[tid]; delete(@ldh${i}[tid]);
  if ((int32)retval == 1 && @lhs${i}[$s] > 1) {
    ${OUT(kit, 'libssl', `nsecs - @lhs${i}[$s]`, `@lrole${i}[$s]`, 1)}
    @lhs${i}[$s] = 1;
  }
}
uprobe:${lib}:SSL_free
{
  $t = @lhs${i}[arg0];
  if ($t > 1) { ${OUT(kit, 'libssl', 'nsecs - $t', `@lrole${i}[arg0]`, 0)} }
  delete(@lhs${i}[arg0]); delete(@lrole${i}[arg0]);
}`;
}

/** The node executable (node, nodejs, node20…); its OpenSSL is linked in statically. */
export const isNodeBinary = (base: string): boolean => /^node(js)?[0-9.]*$/.test(base);
export const isLibssl3 = (base: string): boolean => base === 'libssl.so.3';

const NODE_KIND: UprobeKind = {
  file: 'node',
  matches: isNodeBinary,
  symbols: ['SSL_set_connect_state', 'SSL_set_accept_state', NODE_INFO_CALLBACK, 'SSL_free'],
};
const LIBSSL_KIND: UprobeKind = {
  file: 'libssl',
  matches: isLibssl3,
  symbols: ['SSL_set_connect_state', 'SSL_set_accept_state', 'SSL_in_init', 'SSL_do_handshake', 'SSL_free'],
};

export const tlsHandshakeProbe: ProbeModule = {
  name: 'tls_handshake',
  description:
    'TLS handshake latency, role and result: Node via TLSWrap info callback, other OpenSSL 3 users via SSL_in_init',
  requirements: () => [],
  uprobes: [NODE_KIND, LIBSSL_KIND],
  uprobesRequired: true,
  tallies: [{ name: 'hs', type: 'tls_handshake', dims: ['role', 'ok'], bucketsNs: secondsToNs(TLS_BUCKETS) }],
  program(o, targets, kit) {
    const maps: string[] = [];
    const parts: string[] = [];
    targets
      .filter((t) => t.file === 'node')
      .forEach((t, i) => {
        parts.push(nodeSection(kit, t.path, i, o.selfPid));
        maps.push(`@nrole${i}`, `@nhs${i}`);
      });
    targets
      .filter((t) => t.file === 'libssl')
      .forEach((t, i) => {
        parts.push(libsslSection(kit, t.path, i));
        maps.push(`@lrole${i}`, `@larg${i}`, `@lhs${i}`, `@ldh${i}`);
      });
    return `${parts.join('\n')}\n${kit.footer(maps)}`;
  },
  parse(line) {
    const p = json(line);
    const role = num(p.role);
    const lib = str(p.lib);
    return {
      type: 'tls_handshake',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      durationMs: num(p.d) / 1e6,
      detail: {
        role: role === 1 ? 'client' : role === 2 ? 'server' : 'unknown',
        result: num(p.ok) === 1 ? 'ok' : 'aborted',
        library: lib === 'node' ? 'node' : 'libssl.so.3',
        method: lib === 'node' ? 'tlswrap_info_callback' : 'ssl_in_init_upper_bound',
      },
      tally: { name: 'hs', dims: [role, num(p.ok)], valueNs: num(p.d) },
    };
  },
  metrics(registry: Registry, pod) {
    const seconds = new Histogram({
      name: 'hopscope_tls_handshake_seconds',
      help: 'TLS handshake duration per process, by pod, role (client/server) and result (ok/aborted)',
      labelNames: [...pod.names, 'role', 'result'],
      buckets: TLS_BUCKETS,
      registers: [registry],
    });
    const child = labelCache(seconds);
    return {
      add(_tally, [role, ok, bucket], count, sumNs, labels) {
        const l = {
          ...labels,
          role: role === 1 ? 'client' : role === 2 ? 'server' : 'unknown',
          result: ok === 1 ? 'ok' : 'aborted',
        };
        observeMany(child(l), count, sumNs, TLS_BUCKETS, bucket);
      },
    };
  },
};
