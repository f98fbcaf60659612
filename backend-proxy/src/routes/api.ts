/** Everything under /api: thin routes over the sources and the pure functions. */
import { Router } from 'express';
import type pino from 'pino';
import type { ProxyConfig } from '../config';
import type { Sources } from '../sources';
import { traceRoutes } from './traces';
import { goldenRoutes } from './golden';
import { heatmapRoutes } from './heatmap';
import { rcaRoutes } from './rca';
import { drilldownRoutes } from './drilldown';
import { compareRoutes } from './compare';
import { alertRoutes } from './alerts';
import { AlertManager } from '../alerts/manager';
import { exportRoutes } from './export';

export const VERSION = '0.1.0';

export function apiRoutes(config: ProxyConfig, sources: Sources, log: pino.Logger): Router {
  const r = Router();
  r.get('/health', async (_req, res) => {
    const list = await sources.health();
    // The proxy is up as long as it answers; `ok` says whether every configured source is.
    res.json({ ok: list.every((s) => s.ok), version: VERSION, sources: list });
  });
  r.use(rcaRoutes(config, sources));
  r.use(traceRoutes(config, sources));
  r.use(goldenRoutes(config, sources));
  r.use(heatmapRoutes(config, sources));
  r.use(drilldownRoutes(config, sources));
  r.use(compareRoutes(config, sources));
  const alerts = new AlertManager(sources, log, undefined, config.alertRulesFile);
  sources.onStart.push(() => alerts.start(config.alertIntervalMs));
  sources.onStop.push(() => alerts.stop());
  r.use(alertRoutes(config, alerts));
  r.use(exportRoutes(config, sources, alerts));
  return r;
}
