/**
 * Per-step counts of a sweep (a ramp's or step profile's windows), exact: each request counted in the step it was
 * scheduled in (sent, served, good, failed, late, its e2e time), each answer in the step it ended in (achieved and good
 * throughput over the step's settled second half), and the driver's own CPU over each step.
 */
import type { CapacityStep } from '../../../contract/capacity';
import { SLO_ATTAINMENT } from '../../../contract/capacity-analysis';
import { rateAt, stepWindows, type Profile } from './profiles';
import { Samples } from './stats';

interface Step {
  startS: number;
  endS: number;
  offeredRps: number;
  sent: number;
  served: number;
  good: number;
  failed: number;
  lateOver: number;
  settledServed: number;
  settledGood: number;
  e2e: Samples;
  cpuUs: number;
}

export class StepTally {
  private readonly steps: Step[];
  private readonly width: number;
  private lastCpu = process.cpuUsage();
  private cpuStep = 0;

  constructor(profile: Profile) {
    this.steps = stepWindows(profile).map((w) => {
      let mean = 0;
      for (let i = 0; i < 100; i++) mean += rateAt(profile, w.startS + ((i + 0.5) * (w.endS - w.startS)) / 100) / 100;
      return {
        ...w,
        offeredRps: Number(mean.toFixed(3)),
        sent: 0,
        served: 0,
        good: 0,
        failed: 0,
        lateOver: 0,
        settledServed: 0,
        settledGood: 0,
        e2e: new Samples(),
        cpuUs: 0,
      };
    });
    this.width = this.steps.length ? this.steps[0].endS - this.steps[0].startS : 1;
  }

  get size(): number {
    return this.steps.length;
  }

  /** The step holding instant `tS` (windows are equal, the last one possibly cut short). */
  private at(tS: number): Step | undefined {
    if (tS < 0 || !this.steps.length) return undefined;
    const i = Math.floor(tS / this.width);
    return this.steps[Math.min(i, this.steps.length - 1)];
  }

  /** A request scheduled at `tS` s into the run left `lateMs` late. */
  onSend(tS: number, lateMs: number): void {
    const s = this.at(tS);
    if (!s) return;
    s.sent++;
    if (lateMs > 10) s.lateOver++;
  }

  /** A request sent at `sentS` ended at `endS` (s into the run). */
  onDone(sentS: number, endS: number, served: boolean, good: boolean, e2eMs: number): void {
    const s = this.at(sentS);
    if (s) {
      if (served) {
        s.served++;
        s.e2e.add(e2eMs);
      } else s.failed++;
      if (good) s.good++;
    }
    const e = this.at(endS);
    if (e && endS >= (e.startS + e.endS) / 2 && endS < e.endS) {
      if (served) e.settledServed++;
      if (good) e.settledGood++;
    }
  }

  /** Charges the driver's CPU since the last call to the step at `tS` (called about once a second). */
  sampleCpu(tS: number): void {
    const c = process.cpuUsage(this.lastCpu);
    this.lastCpu = process.cpuUsage();
    const s = this.at(tS) ?? this.steps[this.cpuStep];
    if (s) s.cpuUs += c.user + c.system;
    this.cpuStep = Math.max(0, this.steps.indexOf(s!));
  }

  /**
   * The most steps in a row, after the first (a cold start decides nothing), over whose end the schedule has passed
   * and whose known bad answers already break the SLOs.
   */
  broken(nowS: number): number {
    let run = 0,
      most = 0;
    for (let i = 1; i < this.steps.length; i++) {
      const s = this.steps[i];
      if (s.endS > nowS) break;
      run = s.sent > 0 && s.served + s.failed - s.good > (1 - SLO_ATTAINMENT) * s.sent ? run + 1 : 0;
      most = Math.max(most, run);
    }
    return most;
  }

  /** The steps the schedule went through whole (a sweep stopped early, or interrupted, leaves the rest out). */
  result(startEpochMs: number, endS: number): CapacityStep[] {
    return this.steps
      .filter((s) => s.endS <= endS + 0.05)
      .map((s, index) => {
        const len = s.endS - s.startS;
        const half = len / 2;
        const p99 = s.e2e.pct(99);
        return {
          index,
          startMs: Math.round(startEpochMs + s.startS * 1000),
          endMs: Math.round(startEpochMs + s.endS * 1000),
          offeredRps: s.offeredRps,
          sent: s.sent,
          served: s.served,
          good: s.good,
          failed: s.failed,
          achievedRps: Number((s.settledServed / half).toFixed(3)),
          goodRps: Number((s.settledGood / half).toFixed(3)),
          sloHeld: s.sent > 0 && s.good >= SLO_ATTAINMENT * s.sent,
          e2eP99Ms: Number.isFinite(p99) ? Number(p99.toFixed(3)) : null,
          lateOver10ms: s.lateOver,
          driverCpu: len > 0 ? Number((s.cpuUs / 1e6 / len).toFixed(3)) : null,
        };
      });
  }
}
