/**
 * The trace ids a page's panels list (its trace tables: frames with `traceId`, `tracePath` and `duration`), slowest
 * first: the postmortem export names them, so the Markdown carries their ranked causes.
 */
import { sceneGraph, SceneQueryRunner, type SceneObject } from '@grafana/scenes';

export function traceIdsOnPage(scene: SceneObject): string[] {
  const out: Array<{ id: string; ms: number }> = [];
  for (const runner of sceneGraph.findAllObjects(scene, (o) => o instanceof SceneQueryRunner) as SceneQueryRunner[]) {
    for (const f of runner.state.data?.series ?? []) {
      const has = (name: string) => f.fields.find((x) => x.name === name)?.values;
      const ids = has('traceId');
      const ms = has('duration');
      if (ids && ms && has('tracePath') && !has('type')) {
        ids.forEach((id: string, i: number) => out.push({ id, ms: ms[i] }));
      }
    }
  }
  return [...new Set(out.sort((a, b) => b.ms - a.ms).map((x) => x.id))];
}
