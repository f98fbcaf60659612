/**
 * Live while running: a behaviour that re-runs a page's queries every few seconds while the answer says something is
 * still running (a run's workers send a heartbeat every 5 s, so nothing new arrives faster), and stops once nothing
 * runs. A relative time range (`… to now`) is re-evaluated, so a running run's window grows with it.
 */
import { LoadingState, type PanelData } from '@grafana/data';
import { sceneGraph, type SceneObject, type SceneQueryRunner } from '@grafana/scenes';

/** The load generator's heartbeat period. */
export const LIVE_REFRESH_MS = 5000;

export function liveWhileRunning(
  runner: SceneQueryRunner,
  isRunning: (data: PanelData) => boolean,
  everyMs = LIVE_REFRESH_MS
): (scene: SceneObject) => () => void {
  return (scene) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = () => {
      timer = undefined;
      const range = sceneGraph.getTimeRange(scene);
      if (String(range.state.to).includes('now')) {
        range.onRefresh();
      } else {
        runner.runQueries();
      }
    };
    const sub = runner.subscribeToState(({ data }) => {
      if (!data || data.state !== LoadingState.Done || timer) {
        return;
      }
      if (isRunning(data)) {
        timer = setTimeout(refresh, everyMs);
      }
    });
    return () => {
      sub.unsubscribe();
      if (timer) {
        clearTimeout(timer);
      }
    };
  };
}
