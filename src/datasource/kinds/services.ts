/**
 * `services`: every traced service of the window (GET /services) as a table; `kernel: true` adds the kernel signals of
 * each service's pods (one pods call per service, in parallel; a service whose call failed reads "unavailable").
 */
import type { ServicesAnswer } from '../../../contract';
import { api, type ApiResult } from '../../api/client';
import { figureNotices, kernelByService, servicesFrame } from '../frames/services';
import { answerFrames, defineKind, shared } from '../kind';

export interface ServicesQuery {
  kernel?: boolean;
}

type WithKernel = ServicesAnswer & { kernel?: Record<string, Record<string, number>> };

/** One call for the panels of a refresh that need the services of the same window (the heatmap's links too). */
export const fetchServices = (w: { from: number; to: number }) =>
  shared(`services:${w.from}:${w.to}`, () => api.services(w));

async function servicesWithKernel(w: { from: number; to: number }, kernel: boolean): Promise<ApiResult<WithKernel>> {
  const res = await fetchServices(w);
  if (!res.ok || !kernel) {
    return res;
  }
  const pods = await Promise.all(res.data.services.map((s) => api.pods(s.service, w)));
  return { ok: true, data: { ...res.data, kernel: kernelByService(pods.flatMap((p) => (p.ok ? [p.data] : []))) } };
}

export const services = defineKind<ServicesQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      servicesWithKernel({ from: ctx.from, to: ctx.to }, Boolean(q.kernel)),
      (a) => [servicesFrame(a, a.kernel)],
      (a) => figureNotices(a, a.services)
    ),
});
