/**
 * The crosshair shared by every panel of a view: the time series (uPlot) and the canvas heatmap publish the hovered
 * instant here and draw the instant others publish. `source` stops a panel from reacting to its own hover.
 */
import { BehaviorSubject } from 'rxjs';

export interface CrosshairState {
  /** Hovered time (epoch ms), or null when the pointer left. */
  t: number | null;
  source: string;
}

export class Crosshair {
  readonly state$ = new BehaviorSubject<CrosshairState>({ t: null, source: '' });

  publish(t: number | null, source: string): void {
    const cur = this.state$.value;
    if (cur.t !== t || cur.source !== source) {
      this.state$.next({ t, source });
    }
  }
}
