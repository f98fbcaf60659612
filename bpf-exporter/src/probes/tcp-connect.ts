/**
 * tcp_connect: active TCP connects, SYN_SENT → ESTABLISHED latency (hopscope_tcp_connect_seconds) and connects that
 * never got there (hopscope_tcp_connect_failures_total). The SYN_SENT transition runs in the connecting process, so
 * pid/comm/cgroup are captured there and carried to the softirq-context ESTABLISHED/CLOSE transition.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { POD_LABELS, json, labelCache, big, num, podLabels, str, type ProbeModule } from '../core/probe';

const FIELDS = `\\"t\\":%llu,\\"pid\\":%d,\\"comm\\":\\"%s\\",\\"d\\":%llu,\\"cg\\":%llu,\\"net\\":%u,\\"syn_rt\\":%d,\\"sp\\":%d,\\"dp\\":%d`;

const program = (): string => `
tracepoint:sock:inet_sock_set_state /args->protocol == 6/
{
  $sk = (struct sock *)args->skaddr;
  if (args->newstate == 2) {
    @start[$sk] = nsecs; @pid[$sk] = pid; @comm[$sk] = comm;
    @cg[$sk] = $sk->sk_cgrp_data.cgroup->kn->id;
  } else if (args->oldstate == 2) {
    $t = @start[$sk];
    if ($t) {
      $ok = args->newstate == 1 ? 1 : 0;
      if (args->family == 10) {
        printf("{\\"ok\\":%d,${FIELDS},\\"sa\\":\\"%s\\",\\"da\\":\\"%s\\"}\\n", $ok, nsecs, @pid[$sk], @comm[$sk], nsecs - $t,
          @cg[$sk], $sk->__sk_common.skc_net.net->ns.inum, @synrt[$sk], args->sport, args->dport, ntop(args->saddr_v6), ntop(args->daddr_v6));
      } else {
        printf("{\\"ok\\":%d,${FIELDS},\\"sa\\":\\"%s\\",\\"da\\":\\"%s\\"}\\n", $ok, nsecs, @pid[$sk], @comm[$sk], nsecs - $t,
          @cg[$sk], $sk->__sk_common.skc_net.net->ns.inum, @synrt[$sk], args->sport, args->dport, ntop(args->saddr), ntop(args->daddr));
      }
    }
    delete(@start[$sk]); delete(@pid[$sk]); delete(@comm[$sk]); delete(@cg[$sk]); delete(@synrt[$sk]);
  }
}
tracepoint:tcp:tcp_retransmit_skb /args->state == 2/
{
  @synrt[(struct sock *)args->skaddr]++;
}
END { clear(@start); clear(@pid); clear(@comm); clear(@cg); clear(@synrt); }
`;

export const tcpConnectProbe: ProbeModule = {
  name: 'tcp_connect',
  description: 'TCP connect latency (SYN_SENT → ESTABLISHED) and failed connects, per connecting process',
  requirements: () => [
    { kind: 'tracepoint', category: 'sock', name: 'inet_sock_set_state' },
    { kind: 'tracepoint', category: 'tcp', name: 'tcp_retransmit_skb' },
  ],
  program,
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
      comm: str(p.comm),
      cgroupId: num(p.cg),
      durationMs,
      detail: {
        saddr: str(p.sa), sport: num(p.sp), daddr: str(p.da), dport: num(p.dp), netns: num(p.net),
        synRetransmits: num(p.syn_rt), result: ok ? 'established' : 'failed',
      },
    };
  },
  metrics(registry: Registry) {
    const seconds = new Histogram({
      name: 'hopscope_tcp_connect_seconds',
      help: 'TCP connect latency, SYN_SENT to ESTABLISHED, by connecting pod',
      labelNames: [...POD_LABELS],
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8],
      registers: [registry],
    });
    const failures = new Counter({
      name: 'hopscope_tcp_connect_failures_total',
      help: 'TCP connects that closed before reaching ESTABLISHED (refused, reset, timed out)',
      labelNames: [...POD_LABELS],
      registers: [registry],
    });
    const sec = labelCache(seconds);
    const fail = labelCache(failures);
    return {
      observe(e) {
        if (e.type === 'tcp_connect') sec(podLabels(e)).observe((e.durationMs ?? 0) / 1000);
        else if (e.type === 'tcp_connect_fail') fail(podLabels(e)).inc();
      },
    };
  },
};
