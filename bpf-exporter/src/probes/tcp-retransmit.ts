/**
 * tcp_retransmit: every retransmitted TCP segment (SYN and data). The tracepoint fires in softirq/timer context, so
 * the CPU's pid is meaningless; ownership comes from the socket: its cgroup id and netns, plus the pid that last
 * connected or sent on it (tracked in a map, cleaned up when the socket closes). Retransmits are counted in the kernel
 * per [owner pid, socket cgroup, segment] (hopscope_tcp_retransmits_total stays exact at any rate); per-event records
 * go out within the per-event budget.
 * Kernel needs: sock:sock_send_length (Linux 6.3) only to learn the pid of sockets that were accepted, not connected;
 * without it those are attributed by their cgroup alone. The address family is read from the socket, not from the
 * tracepoint (whose `family` field came only in 5.12), so 4.16's tcp_retransmit_skb with `state` is enough.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, type Registry } from 'prom-client';
import type { Kit } from '../core/kit';
import { tracefsEvents } from '../core/preflight';
import { json, labelCache, TCP_STATES, big, num, str, type ProbeModule } from '../core/probe';

const FMT = `{\\"t\\":%llu,\\"pid\\":%d,\\"cg\\":%llu,\\"net\\":%u,\\"st\\":%d,\\"sa\\":\\"%s\\",\\"sp\\":%d,\\"da\\":\\"%s\\",\\"dp\\":%d}\\n`;

const record = (kit: Kit, v6: boolean): string =>
  kit.event({
    type: 'tcp_retransmit',
    pid: '$pid',
    cg: '$cg',
    comm: '@comm[$sk]',
    tally: { name: 'rt', dims: ['$seg'] },
    printf: {
      fmt: FMT,
      args: [
        'nsecs',
        '$pid',
        '$cg',
        '$sk->__sk_common.skc_net.net->ns.inum',
        'args->state',
        v6 ? 'ntop(args->saddr_v6)' : 'ntop(args->saddr)',
        'args->sport',
        v6 ? 'ntop(args->daddr_v6)' : 'ntop(args->daddr)',
        'args->dport',
      ],
    },
  });

/** Whether this kernel has the tracepoint (checked when the program is built, so an older kernel runs the rest). */
const hasTracepoint = (category: string, name: string): boolean => {
  const events = tracefsEvents();
  return events !== undefined && existsSync(join(events, category, name));
};

const program = (kit: Kit, sendLength: boolean): string => `
tracepoint:sock:inet_sock_set_state /args->protocol == 6/
{
  $sk = (struct sock *)args->skaddr;
  if (args->newstate == 2) { @pid[$sk] = pid; @comm[$sk] = comm; }
  if (args->newstate == 7) { delete(@pid[$sk]); delete(@comm[$sk]); }
}
${
  sendLength
    ? `tracepoint:sock:sock_send_length /args->protocol == 6/
{
  $sk = (struct sock *)args->sk;
  if (@pid[$sk] == 0) { @pid[$sk] = pid; @comm[$sk] = comm; }
}`
    : ''
}
tracepoint:tcp:tcp_retransmit_skb
{
  $sk = (struct sock *)args->skaddr;
  $pid = @pid[$sk];
  $cg = $sk->sk_cgrp_data.cgroup->kn->id;
  $seg = args->state == 2 ? 1 : 0;
  if ($sk->__sk_common.skc_family == 10) {
  ${record(kit, true)}
  } else {
  ${record(kit, false)}
  }
}
${kit.footer(['@pid', '@comm'])}`;

export const tcpRetransmitProbe: ProbeModule = {
  name: 'tcp_retransmit',
  description: 'TCP segment retransmits (SYN and data), attributed through the socket, not the softirq',
  requirements: () => [
    { kind: 'tracepoint', category: 'tcp', name: 'tcp_retransmit_skb' },
    { kind: 'tracepoint', category: 'sock', name: 'inet_sock_set_state' },
  ],
  tallies: [{ name: 'rt', type: 'tcp_retransmit', dims: ['syn'] }],
  program: (_o, _targets, kit) => program(kit, hasTracepoint('sock', 'sock_send_length')),
  // One entry per open socket being tracked; bpftrace's default (4096) silently stops taking keys on a busy node.
  env: { BPFTRACE_MAP_KEYS_MAX: '16384' },
  parse(line) {
    const p = json(line);
    const state = num(p.st);
    return {
      type: 'tcp_retransmit',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      detail: {
        saddr: str(p.sa),
        sport: num(p.sp),
        daddr: str(p.da),
        dport: num(p.dp),
        netns: num(p.net),
        state: TCP_STATES[state] ?? String(state),
        segment: state === 2 ? 'syn' : 'data',
        // pid 0 = a socket that neither connected nor sent since the probe started: attributed by cgroup only.
        owner: num(p.pid) > 0 ? 'socket_pid' : 'socket_cgroup',
      },
      tally: { name: 'rt', dims: [state === 2 ? 1 : 0] },
    };
  },
  metrics(registry: Registry, pod) {
    const total = new Counter({
      name: 'hopscope_tcp_retransmits_total',
      help: 'TCP segments retransmitted, by the owning pod of the socket',
      labelNames: [...pod.names, 'segment'],
      registers: [registry],
    });
    const child = labelCache(total);
    return {
      add(_tally, [syn], count, _sum, labels) {
        child({ ...labels, segment: syn ? 'syn' : 'data' }).inc(count);
      },
    };
  },
};
