/** Everything under /api: one router per area, each given only the service it calls. */
import { Router } from 'express';
import type { Services } from '../services';
import { alertRoutes } from './alerts';
import { annotationRoutes } from './annotations';
import { compareRoutes } from './compare';
import { drilldownRoutes } from './drilldown';
import { exportRoutes } from './export';
import { goldenRoutes } from './golden';
import { healthRoutes } from './health';
import { heatmapRoutes } from './heatmap';
import { rcaRoutes } from './rca';
import { rcaAnswerRoutes } from './rca-answers';
import { runRoutes } from './runs';
import { traceRoutes } from './traces';

export function apiRoutes(services: Services): Router {
  const r = Router();
  r.use(healthRoutes(services.health));
  r.use(rcaRoutes(services.rca));
  r.use(rcaAnswerRoutes(services.answers));
  r.use(traceRoutes(services.traces));
  r.use(goldenRoutes(services.golden));
  r.use(heatmapRoutes(services.heatmap));
  r.use(drilldownRoutes(services.drilldown));
  r.use(annotationRoutes(services.faults));
  r.use(compareRoutes(services.compare));
  r.use(alertRoutes(services.alerts));
  r.use(exportRoutes(services.exports));
  r.use(
    runRoutes(services.runs, services.runCompare, services.runTtft, services.runTtftRequests, services.runCapacity)
  );
  return r;
}
