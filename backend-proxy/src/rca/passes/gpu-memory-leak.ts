/**
 * GPU memory leak: the bpf-exporter's `gpu_memory_held` records (one each time a process's CUDA memory moved by a
 * step) carry how much it grew since it last fell and over how long. For each pod a span of the trace ran on (the
 * critical path, and the error and degradation origins), the latest record of that pod up to the span's end and at
 * most `gpuLeakLookbackMs` before its start: when its growth is at least `gpuLeakMinBytes`, over at least two
 * allocations, the pod is leaking GPU memory — named before the first out-of-memory, which it then explains.
 * Worth LEAK_SCORE on the hop (a cause the spans cannot show by themselves: below a failure or a fallback, above a
 * KV-cache drop). Without the exporter's records (no bpftrace, no root, no libcuda mapped) nothing is said here.
 */
import { type Evidence, podOrServiceOfSpan, pidOfSpan } from '../../../../contract';
import { type HopAccount, type TraceAccount, hopOfSpan } from '../account';
import { fmtDur } from '../format';
import { eventsInWindow } from '../kernel';

const LEAK_SCORE = 0.25;

/** Bytes as a person reads them: 6.1 GiB, 512 MiB. */
export const fmtBytes = (b: number): string =>
  Math.abs(b) >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(1)} GiB` : `${Math.round(b / 2 ** 20)} MiB`;

const numOf = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function gpuMemoryLeak(a: TraceAccount): void {
  const k = a.kernel;
  if (!k || !k.events.length) return;
  const { spans, config: c } = a;
  const seen = new Set<HopAccount>();
  const buf: number[] = [];
  const spansToCheck = [...a.path, ...a.origins.map((o) => o.index)];
  for (const i of spansToCheck) {
    const s = spans[i];
    if (s.kind === 'client') continue; // the callee's own server span says where it ran
    const h = hopOfSpan(a, i);
    if (seen.has(h)) continue;
    buf.length = 0;
    eventsInWindow(
      k,
      podOrServiceOfSpan(s),
      pidOfSpan(s),
      s.startMs - c.gpuLeakLookbackMs,
      s.endMs,
      c.kernelSlackMs,
      buf
    );
    let latest = -1;
    for (const e of buf) {
      const ev = k.events[e];
      if (ev.type === 'gpu_memory_held' && (latest < 0 || ev.ts > k.events[latest].ts)) latest = e;
    }
    if (latest < 0) continue;
    const ev = k.events[latest];
    const grew = numOf(ev.detail.grewBytes);
    const allocs = numOf(ev.detail.allocs) ?? 0;
    if (grew === undefined || grew < c.gpuLeakMinBytes || allocs < 2) continue;
    seen.add(h);
    const held = numOf(ev.detail.heldBytes);
    const overMs = numOf(ev.detail.overMs) ?? 0;
    const frees = numOf(ev.detail.frees) ?? 0;
    const pod = ev.pod ?? h.pod;
    const calls = frees === 0 ? 'no frees' : `${allocs} allocations and ${frees} frees meanwhile`;
    const evidence: Evidence = {
      kind: 'gpu_memory_leak',
      summary: `GPU memory held by ${pod} grew ${fmtBytes(grew)} in ${fmtDur(overMs)}, ${calls}${held !== undefined ? ` (${fmtBytes(held)} held)` : ''}: a leak that shrinks what the engine can use until allocations fail (eBPF on the CUDA driver, pid ${ev.pid})`,
      spanId: s.spanId,
      pod,
      pid: ev.pid,
      grewBytes: grew,
      overMs,
      allocs,
      frees,
      atMs: ev.ts,
      ...(held !== undefined ? { heldBytes: held } : {}),
    };
    h.evidence.push(evidence);
    h.degradation = Math.max(h.degradation, LEAK_SCORE);
    h.spanId ??= s.spanId;
    h.operation ??= s.name;
  }
}
