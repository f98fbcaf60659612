/** GET /api/golden?from&to&step[&service][&backend][&model] — the golden metrics for vLLM, TGI and SGLang on one time range. */
import { Router } from 'express';
import { InferenceBackend } from '../../../contract';
import { alignRange, enumParam, nameParam, stepMs, timeRange } from '../http/params';
import type { GoldenService } from '../services/golden';

export function goldenRoutes(golden: GoldenService): Router {
  const r = Router();
  r.get('/golden', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const asked = timeRange(q);
    const step = stepMs(q, asked);
    res.json(
      await golden.query({
        range: alignRange(asked, step),
        stepMs: step,
        backend: enumParam(q, 'backend', InferenceBackend.options),
        model: nameParam(q, 'model'),
        service: nameParam(q, 'service'),
      })
    );
  });
  return r;
}
