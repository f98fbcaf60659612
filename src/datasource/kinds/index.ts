/**
 * Every query kind of Hopscope's data source, once: adding a kind is one file in this folder and one line here
 * (docs/DEVELOPING.md, "A new data source query kind"). The query types follow from this object (query.ts).
 */
import { alerts } from './alerts';
import { annotations } from './annotations';
import { compare } from './compare';
import { golden } from './golden';
import { heatmap } from './heatmap';
import { kernelEvents } from './kernelEvents';
import { pods } from './pods';
import { rca } from './rca';
import { run } from './run';
import { runCompare } from './runCompare';
import { runs } from './runs';
import { runTtft } from './runTtft';
import { services } from './services';
import { trace } from './trace';
import { traceKernelEvents } from './traceKernelEvents';
import { traces } from './traces';

export const QUERY_KINDS = {
  golden,
  heatmap,
  annotations,
  services,
  pods,
  kernelEvents,
  traces,
  trace,
  rca,
  traceKernelEvents,
  compare,
  alerts,
  runs,
  run,
  runCompare,
  runTtft,
};
