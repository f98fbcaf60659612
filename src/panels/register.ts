/**
 * The app's own visualisations, which no core panel draws, registered as runtime panel plugins: they get the same
 * panel chrome (menu, Inspect, notices) as Grafana's panels. Registered once, by the chunk of the pages that use them.
 */
import { sceneUtils } from '@grafana/scenes';

import { KERNEL_LANES_PANEL, kernelLanesPlugin } from './kernelLanes';
import { TRACE_ICICLE_PANEL, traceIciclePlugin } from './traceIcicle';

let registered = false;

export function registerHopscopePanels(): void {
  if (registered) {
    return;
  }
  sceneUtils.registerRuntimePanelPlugin({ pluginId: KERNEL_LANES_PANEL, plugin: kernelLanesPlugin() });
  sceneUtils.registerRuntimePanelPlugin({ pluginId: TRACE_ICICLE_PANEL, plugin: traceIciclePlugin() });
  registered = true;
}
