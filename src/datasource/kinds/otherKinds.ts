/**
 * The query kinds of the pages other than the Overview: in their chunk (components/App/OtherPages.tsx re-exports this
 * object), loaded with them. A new kind gets one line here.
 */
import { alerts } from './alerts';
import { compare } from './compare';
import { kernelEvents } from './kernelEvents';
import { pods } from './pods';
import { rca } from './rca';
import { run } from './run';
import { runCapacity } from './runCapacity';
import { runCompare } from './runCompare';
import { runSaturation } from './runSaturation';
import { runFallback } from './runFallback';
import { runTtft } from './runTtft';
import { runTtftRequests } from './runTtftRequests';
import { trace } from './trace';
import { traceKernelEvents } from './traceKernelEvents';
import { traces } from './traces';
import { windowRca } from './windowRca';

export const OTHER_KINDS = {
  pods,
  kernelEvents,
  traces,
  trace,
  rca,
  traceKernelEvents,
  compare,
  alerts,
  run,
  runCompare,
  runTtft,
  runTtftRequests,
  windowRca,
  runCapacity,
  runSaturation,
  runFallback,
};

export type OtherKinds = typeof OTHER_KINDS;
