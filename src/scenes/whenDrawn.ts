/**
 * A behaviour that sets a performance mark once every panel of a scene shows its answer: each VizPanel has its panel
 * plugin and its data settled (done or failed), and Grafana's panel chrome holds each panel's drawn content (a panel
 * measures itself before its plugin draws, a frame or two after the data). Once per page load: the benchmark reads the
 * mark (bench/app-render.bench.ts) and checks what is on screen at that instant itself.
 */
import { LoadingState } from '@grafana/data';
import { VizPanel, sceneGraph, type SceneObject } from '@grafana/scenes';

/** PanelChrome's content container (Grafana's e2e selector `Panels.Panel.content`). */
const PANEL_CONTENT = '[data-testid="data-testid panel content"]';
/** Past this, the page is drawn as far as it will be: mark it rather than never (the bench reports what was missing). */
const GIVE_UP_MS = 15_000;

export function markWhenDrawn(markName: string, onDrawn?: () => void): (scene: SceneObject) => () => void {
  return (scene) => {
    if (performance.getEntriesByName(markName).length) {
      return () => undefined;
    }
    let frame = 0;
    let polling = false;
    const started = performance.now();
    const panels = sceneGraph.findAllObjects(scene, (o) => o instanceof VizPanel) as VizPanel[];
    const settled = () =>
      panels.every((p) => {
        const state = sceneGraph.getData(p).state.data?.state;
        return p.getPlugin() !== undefined && (state === LoadingState.Done || state === LoadingState.Error);
      });
    const drawn = () => {
      const contents = document.querySelectorAll(PANEL_CONTENT);
      return contents.length >= panels.length && [...contents].every((c) => c.childElementCount > 0);
    };
    const mark = () => {
      if (!performance.getEntriesByName(markName).length) {
        performance.mark(markName);
        onDrawn?.();
      }
    };
    const poll = () => {
      if (drawn() || performance.now() - started > GIVE_UP_MS) {
        // One more frame: what was committed is painted.
        frame = requestAnimationFrame(mark);
      } else {
        frame = requestAnimationFrame(poll);
      }
    };
    const check = () => {
      if (!polling && settled()) {
        polling = true;
        frame = requestAnimationFrame(poll);
      }
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
