/**
 * A behaviour that sets a performance mark once every panel of a scene shows its answer: each VizPanel has its panel
 * plugin and its data settled (done or failed), then two animation frames for the plugins to draw (uPlot draws in
 * its layout effect). Once per page load: the benchmark reads the mark (bench/app-render.bench.ts) and checks what is
 * on screen at that instant itself.
 */
import { LoadingState } from '@grafana/data';
import { VizPanel, sceneGraph, type SceneObject } from '@grafana/scenes';

export function markWhenDrawn(markName: string, onDrawn?: () => void): (scene: SceneObject) => () => void {
  return (scene) => {
    if (performance.getEntriesByName(markName).length) {
      return () => undefined;
    }
    let done = false;
    let frame = 0;
    const panels = sceneGraph.findAllObjects(scene, (o) => o instanceof VizPanel) as VizPanel[];
    const settled = () =>
      panels.every((p) => {
        const state = sceneGraph.getData(p).state.data?.state;
        return p.getPlugin() !== undefined && (state === LoadingState.Done || state === LoadingState.Error);
      });
    const check = () => {
      if (done || !settled()) {
        return;
      }
      done = true;
      frame = requestAnimationFrame(() => {
        frame = requestAnimationFrame(() => {
          if (!performance.getEntriesByName(markName).length) {
            performance.mark(markName);
            onDrawn?.();
          }
        });
      });
    };
    // Plugins load and data arrives as state changes of the panels and their data providers.
    const subs = panels.flatMap((p) => [p.subscribeToState(check), sceneGraph.getData(p).subscribeToState(check)]);
    check();
    return () => {
      subs.forEach((s) => s.unsubscribe());
      cancelAnimationFrame(frame);
    };
  };
}
