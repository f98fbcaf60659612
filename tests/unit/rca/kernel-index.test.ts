import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KernelEvent } from '../../../contract';
import { eventsInWindow, indexKernelEvents, linkEventsTo } from '../../../backend-proxy/src/rca/kernel';
import { rng } from '../../support/rca/synthetic';

test('window joins find exactly the overlapping events, whatever order the windows are asked in (the search hint is only a hint)', () => {
  const r = rng(5);
  const events: KernelEvent[] = Array.from({ length: 3000 }, (_, i) => {
    const type = r() < 0.5 ? 'tcp_retransmit' : 'tls_handshake';
    const e: KernelEvent = {
      ts: Math.floor(r() * 10_000),
      type,
      pid: 100 + (i % 3),
      comm: 'x',
      detail: { daddr: '10.0.0.1', dport: 443 + (i % 2) },
      mode: 'replay',
    };
    if (r() < 0.8) e.pod = `p-${i % 4}`;
    if (type === 'tls_handshake') e.durationMs = r() * 50;
    return e;
  });
  const k = indexKernelEvents(events);
  const overlaps = (e: KernelEvent, from: number, to: number): boolean =>
    e.ts >= from && e.ts - (e.durationMs ?? 0) <= to;
  for (let q = 0; q < 2000; q++) {
    const from = r() * 11_000 - 500;
    const to = from + r() * (q % 10 === 0 ? 5000 : 40);
    const pod = `p-${Math.floor(r() * 5)}`;
    const pid = r() < 0.5 ? 100 + Math.floor(r() * 3) : undefined;
    const got: number[] = [];
    eventsInWindow(k, pod, pid, from, to, 5, got);
    // The index widens the search by the longest duration, so an event that began before the window still joins.
    const want = events
      .map((e, i) => i)
      .filter((i) => {
        const e = events[i];
        const mine = e.pod ? e.pod === pod : pid !== undefined && e.pid === pid;
        return mine && overlaps(e, from - 5, to + 5);
      });
    assert.deepEqual(
      [...got].sort((a, b) => a - b),
      want,
      `window ${q}: ${pod}/${pid} [${from}, ${to}]`
    );
    const links: number[] = [];
    linkEventsTo(k, '10.0.0.1:443', from, to, links);
    const wantLinks = events
      .map((e, i) => i)
      .filter(
        (i) => events[i].type === 'tcp_retransmit' && events[i].detail.dport === 443 && overlaps(events[i], from, to)
      );
    assert.deepEqual(
      [...links].sort((a, b) => a - b),
      wantLinks,
      `link window ${q}`
    );
  }
});
