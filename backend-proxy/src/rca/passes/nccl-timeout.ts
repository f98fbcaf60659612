/**
 * NCCL timeout: an inference server span that failed because its tensor-parallel group's collective timed out (the
 * NCCL watchdog; the chain's spans say so in `hopscope.nccl.*`: the collective, the rank that never completed it,
 * the watchdog's timeout) is booked on its hop (the group: its leader pod) with the group, the stalled rank and the
 * collective named. The exporter's evidence decides which rank when it has any: slow collective calls
 * (`nccl_slow_collective`, a uprobe/uretprobe pair on ncclAllReduce) on the group's rank pods (LeaderWorkerSet names:
 * the leader `<group>`, rank r `<group>-<r>`) inside the span's window are joined to the hop, and the rank whose pod
 * shows the longest call is the stalled one the kernel saw. Runs after the kernel pass (which joins only the span's own
 * pod: the leader's); a failure's weight is already the origins pass's.
 */
import { podOrServiceOfSpan, type KernelEvent, type Span } from '../../../../contract';
import { type TraceAccount, hopOfSpan } from '../account';
import { fmtDur } from '../format';
import { eventsInWindow } from '../kernel';

/** The ranks a group can have (HOPSCOPE_TP ≤ 8; vLLM's tensor-parallel sizes within a node). */
const MAX_RANKS = 8;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

interface SpanNccl {
  group: string;
  size?: number;
  rank?: number;
  rankPod?: string;
  collective?: string;
  timeoutMs?: number;
  ranMs?: number;
  error?: string;
}

/** What the span says about its group and, when it timed out, the collective (undefined: not a TP group's span). */
function ncclOfSpan(s: Span): SpanNccl | undefined {
  const at = s.attributes;
  const collective = text(at['hopscope.nccl.collective']);
  const group = text(at['hopscope.llm.tp_group']);
  if (!collective && !group) return undefined;
  return {
    group: group ?? podOrServiceOfSpan(s),
    size: num(at['hopscope.llm.tp_size']),
    rank: num(at['hopscope.nccl.rank']),
    rankPod: text(at['hopscope.nccl.rank_pod']),
    collective,
    timeoutMs: num(at['hopscope.nccl.timeout_ms']),
    ranMs: num(at['hopscope.nccl.ran_ms']),
    error: text(at['hopscope.nccl.error']),
  };
}

const rankPodOf = (group: string, r: number): string => (r === 0 ? group : `${group}-${r}`);

export function ncclTimeout(a: TraceAccount): void {
  const { spans, kernel: k, config: c } = a;
  const buf: number[] = [];
  for (let i = 0; i < spans.length; i++) {
    const s = spans[i];
    if (s.kind !== 'server' && s.kind !== 'internal') continue;
    const n = ncclOfSpan(s);
    if (!n) continue;
    const h = hopOfSpan(a, i);
    // The group's rank pods' slow collectives in the span's window (the kernel pass joined the leader's only).
    let worst: { e: KernelEvent; rank: number } | undefined;
    let seen = 0;
    if (k?.events.length) {
      const size = Math.min(MAX_RANKS, Math.max(n.size ?? 0, (n.rank ?? 0) + 1, 2));
      for (let r = 0; r < size; r++) {
        buf.length = 0;
        eventsInWindow(k, rankPodOf(n.group, r), undefined, s.startMs, s.endMs, c.kernelSlackMs, buf);
        for (const j of buf) {
          const e = k.events[j];
          if (e.type !== 'nccl_slow_collective') continue;
          seen++;
          if (!h.kernel.has(j)) h.kernel.set(j, 'window');
          if (!worst || (e.durationMs ?? 0) > (worst.e.durationMs ?? 0)) worst = { e, rank: r };
        }
      }
    }
    if (!n.collective && !worst) continue; // a healthy group's span
    const spanRank = n.rank;
    const rank = worst?.rank ?? spanRank;
    const collective = text(worst?.e.detail.function) ?? n.collective ?? 'ncclAllReduce';
    const rankPod =
      rank === undefined ? undefined : n.rankPod && rank === spanRank ? n.rankPod : rankPodOf(n.group, rank);
    const who = rank === undefined ? 'a rank' : `rank ${rank} (pod ${rankPod})`;
    const size = n.size ? ` (${n.size} ranks)` : '';
    let summary: string;
    if (n.collective) {
      const wait = n.timeoutMs !== undefined ? ` until the NCCL watchdog timeout (${fmtDur(n.timeoutMs)})` : '';
      summary = `tensor-parallel group ${n.group}${size}: ${who} stalled in ${collective}; the request hung ${fmtDur(s.endMs - s.startMs)}${wait}, then failed with the group`;
    } else {
      summary = `tensor-parallel group ${n.group}${size}: ${who} was slow in ${collective}`;
    }
    if (worst) {
      const res = text(worst.e.detail.resultName);
      summary += `; eBPF saw ${collective} take ${fmtDur(worst.e.durationMs ?? 0)} on ${worst.e.pod ?? rankPod} (pid ${worst.e.pid}${res ? `, ${res}` : ''}${seen > 1 ? `; ${seen} slow collectives on the group` : ''})`;
      if (spanRank !== undefined && spanRank !== worst.rank)
        summary += `; the span named rank ${spanRank}, the kernel rank ${worst.rank}`;
    } else if (k) {
      summary +=
        '; no slow collective from the exporter on the rank pods (the nccl_collective probe is off or saw none)';
    }
    h.evidence.push({
      kind: 'nccl_timeout',
      summary,
      spanId: s.spanId,
      group: n.group,
      collective,
      ...(rank !== undefined ? { rank, rankPod } : {}),
      ...(n.size !== undefined ? { groupSize: n.size } : {}),
      ...(n.timeoutMs !== undefined ? { timeoutMs: n.timeoutMs } : {}),
      timedOut: Boolean(n.collective),
      source: worst ? (n.collective ? 'spans+ebpf' : 'ebpf') : 'spans',
      ...(worst ? { kernelDurationMs: worst.e.durationMs, kernelPid: worst.e.pid, slowCollectives: seen } : {}),
      ...(n.error ? { error: n.error } : {}),
    });
  }
}
