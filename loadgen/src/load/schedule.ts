/**
 * The open-loop schedule: calls `send` at each arrival of the profile, whatever the server does (no coordinated
 * omission), and tells it how late the send left. Resolves when the profile ends or the signal aborts.
 */
import { arrivals, type Profile } from './profiles';

export interface ScheduleOptions {
  profile: Profile;
  seed: number;
  /** performance.now() of the run's start. */
  startedAt: number;
  signal?: AbortSignal;
  /** Ends the schedule early (checked before each batch of arrivals). */
  stopped?: () => boolean;
  /** One arrival, `scheduled` its instant (performance.now() time). */
  send: (scheduled: number) => void;
}

export function runSchedule(s: ScheduleOptions): Promise<void> {
  return new Promise<void>((resolve) => {
    const gen = arrivals(s.profile, s.seed);
    let next = gen.next();
    const tick = (): void => {
      if (s.signal?.aborted || s.stopped?.()) {
        resolve();
        return;
      }
      const now = performance.now();
      while (!next.done && s.startedAt + next.value * 1000 <= now) {
        const scheduled = s.startedAt + next.value * 1000;
        next = gen.next();
        s.send(scheduled);
      }
      if (next.done) {
        resolve();
        return;
      }
      // No busy-spinning: a 1 ms timer granularity is far inside the 10 ms lateness budget, and the CPU stays
      // free for the responses (and, on a small machine, for the server under test).
      const wait = s.startedAt + next.value * 1000 - performance.now();
      setTimeout(tick, Math.max(1, wait));
    };
    s.signal?.addEventListener('abort', () => resolve(), { once: true });
    tick();
  });
}
