/**
 * tcp_connect: active TCP connects, SYN_SENT → ESTABLISHED latency (hopscope_tcp_connect_seconds) and connects that
 * never got there (hopscope_tcp_connect_failures_total). The SYN_SENT transition runs in the connecting process, so
 * pid/comm/cgroup are captured there and carried to the softirq-context ESTABLISHED/CLOSE transition. Both are counted
 * in the kernel (latency bucketed there with the histogram's own bounds, plus the sum), so the metrics stay exact at
 * any rate; per-event records go out within the per-event budget.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { secondsToNs, type Kit } from '../core/kit';
import { json, labelCache, big, num, observeMany, str, type ProbeModule } from '../core/probe';

const FIELDS = `\\"t\\":%llu,\\"pid\\":%d,\\"d\\":%llu,\\"cg\\":%llu,\\"net\\":%u,\\"syn_rt\\":%d,\\"sp\\":%d,\\"dp\\":%d`;

/** Connect latency buckets (s), shared by the kernel's bucketing and the histogram. */
export const CONNECT_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8];

/** A connect this slow (or one whose SYN was resent) is notable: its record has its own budget (core/kit.ts). The
 *  proxy's root-cause engine calls a connect slow from 100 ms too (slowConnectMs). */
export const SLOW_CONNECT_NS = 100_000_000;

const record = (kit: Kit, ok: boolean): string =>
  kit.event({
    type: ok ? 'tcp_connect' : 'tcp_connect_fail',
    pid: '$pid',
    cg: '$cg',
    comm: '@comm[$sk]',
    notableWhen: ok ? `$d >= ${SLOW_CONNECT_NS} || @synrt[$sk] > 0` : undefined,
    tally: ok ? { name: 'conn', dims: [], valueNs: '$d' } : { name: 'fail', dims: [] },
    printf: {
      fmt: `{\\"ok\\":${ok ? 1 : 0},${FIELDS},\\"sa\\":\\"%s\\",\\"da\\":\\"%s\\"}\\n`,
      args: [
        'nsecs',
        '$pid',
        '$d',
        '$cg',
        '$sk->__sk_common.skc_net.net->ns.inum',
        '@synrt[$sk]',
        'args->sport',
        'args->dport',
        '$sa',
        '$da',
      ],
    },
  });

const program = (kit: Kit): string => `
tracepoint:sock:inet_sock_set_state /args->protocol == 6/
{
  $sk = (struct sock *)args->skaddr;
  if (args->newstate == 2) {
    @start[$sk] = nsecs; @pid[$sk] = pid; @comm[$sk] = comm;
    @cg[$sk] = $sk->sk_cgrp_data.cgroup->kn->id;
  } else if (args->oldstate == 2) {
    $t = @start[$sk];
    if ($t) {
      $d = nsecs - $t; $pid = @pid[$sk]; $cg = @cg[$sk];
      if (args->family == 10) { $sa = ntop(args->saddr_v6); $da = ntop(args->daddr_v6); }
      else { $sa = ntop(args->saddr); $da = ntop(args->daddr); }
      if (args->newstate == 1) {
  ${record(kit, true)}
      } else {
  ${record(kit, false)}
      }
    }
    delete(@start[$sk]); delete(@pid[$sk]); delete(@comm[$sk]); delete(@cg[$sk]); delete(@synrt[$sk]);
  }
}
tracepoint:tcp:tcp_retransmit_skb /args->state == 2/
{
  @synrt[(struct sock *)args->skaddr]++;
}
${kit.footer(['@start', '@pid', '@comm', '@cg', '@synrt'])}`;

export const tcpConnectProbe: ProbeModule = {
  name: 'tcp_connect',
  description: 'TCP connect latency (SYN_SENT → ESTABLISHED) and failed connects, per connecting process',
  requirements: () => [
    { kind: 'tracepoint', category: 'sock', name: 'inet_sock_set_state' },
    { kind: 'tracepoint', category: 'tcp', name: 'tcp_retransmit_skb' },
  ],
  tallies: [
    { name: 'conn', type: 'tcp_connect', dims: [], bucketsNs: secondsToNs(CONNECT_BUCKETS) },
    { name: 'fail', type: 'tcp_connect_fail', dims: [] },
  ],
  program: (_o, _targets, kit) => program(kit),
  // One entry per open socket being tracked; bpftrace's default (4096) silently stops taking keys on a busy node.
  env: { BPFTRACE_MAP_KEYS_MAX: '16384' },
  parse(line) {
    const p = json(line);
    const ok = num(p.ok) === 1;
    const durationMs = num(p.d) / 1e6;
    return {
      type: ok ? 'tcp_connect' : 'tcp_connect_fail',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      durationMs,
      detail: {
        saddr: str(p.sa),
        sport: num(p.sp),
        daddr: str(p.da),
        dport: num(p.dp),
        netns: num(p.net),
        synRetransmits: num(p.syn_rt),
        result: ok ? 'established' : 'failed',
      },
      tally: ok ? { name: 'conn', dims: [], valueNs: num(p.d) } : { name: 'fail', dims: [] },
    };
  },
  metrics(registry: Registry, pod) {
    const seconds = new Histogram({
      name: 'hopscope_tcp_connect_seconds',
      help: 'TCP connect latency, SYN_SENT to ESTABLISHED, by connecting pod',
      labelNames: [...pod.names],
      buckets: CONNECT_BUCKETS,
      registers: [registry],
    });
    const failures = new Counter({
      name: 'hopscope_tcp_connect_failures_total',
      help: 'TCP connects that closed before reaching ESTABLISHED (refused, reset, timed out)',
      labelNames: [...pod.names],
      registers: [registry],
    });
    const sec = labelCache(seconds);
    const fail = labelCache(failures);
    return {
      add(tally, dims, count, sumNs, labels) {
        if (tally === 'conn') observeMany(sec(labels), count, sumNs, CONNECT_BUCKETS, dims[dims.length - 1]);
        else if (tally === 'fail') fail(labels).inc(count);
      },
    };
  },
};
