/**
 * A run page's scene objects read the run's record when they activate and again whenever the page's time range is
 * re-evaluated (the refresh picker, the live refresh while the run runs); only the latest answer is applied, and none
 * after deactivation. The record is fetched once for all of them (fetchRun shares in-flight requests).
 */
import { sceneGraph, type SceneObject } from '@grafana/scenes';

import type { RunRecord } from '../../../contract';
import type { ApiResult } from '../../api/client';
import { fetchRun } from '../../datasource/kinds/run';

export function followRunRecord(
  scene: SceneObject,
  runId: () => string,
  apply: (res: ApiResult<RunRecord>) => void
): void {
  let generation = 0;
  const load = (): void => {
    const gen = ++generation;
    fetchRun(runId()).then((res) => {
      if (gen === generation && scene.isActive) {
        apply(res);
      }
    });
  };
  scene.addActivationHandler(() => {
    load();
    const sub = sceneGraph.getTimeRange(scene).subscribeToState((next, prev) => {
      if (next.value !== prev.value) {
        load();
      }
    });
    return () => sub.unsubscribe();
  });
}
