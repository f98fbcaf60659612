/**
 * Golden metrics → frames: one frame per series, its refId `<refId>:<metric>` so each panel picks its metric
 * (filterByRefId), named by backend and the labels that tell series apart, in the metric's unit; the PromQL the proxy
 * ran is the frame's `executedQueryString` (Inspect shows it, the panel menu opens it in Explore). A metric a backend
 * does not expose (TGI has no KV-cache hit rate) is an empty frame with the reason as a notice. Each metric also has its
 * series combined into one (part `<metric>:combined`: summed, max or mean per instant) for its stat and the insights.
 */
import type { DataFrame } from '@grafana/data';

import type { GoldenAnswer, GoldenMetric, GoldenSeries } from '../../../contract';
import { combineSeries } from '../../transforms/golden';
import { partRefId } from '../query';
import { field, frame, NUMBER, TIME } from './frame';

export interface GoldenMetricInfo {
  metric: GoldenMetric;
  title: string;
  /** Grafana unit id, so axes and tooltips format like Grafana's own panels. */
  unit: string;
  /** How several series combine into one number (the stat) and into the insights. */
  combine: 'sum' | 'max' | 'mean';
  decimals?: number;
  /** The axis shows at least 0..softMax (a flat zero error rate would otherwise get an arbitrary range). */
  softMax?: number;
}

export const GOLDEN_METRICS: GoldenMetricInfo[] = [
  { metric: 'rps', title: 'Requests / s', unit: 'reqps', combine: 'sum', decimals: 1 },
  { metric: 'output_tokens_per_s', title: 'Output tokens / s', unit: 'short', combine: 'sum', decimals: 0 },
  { metric: 'e2e_p99_s', title: 'End-to-end P99', unit: 's', combine: 'max', decimals: 2 },
  { metric: 'ttft_p99_s', title: 'TTFT P99', unit: 's', combine: 'max', decimals: 2 },
  { metric: 'kv_cache_hit_rate', title: 'KV-cache hit rate', unit: 'percentunit', combine: 'mean', decimals: 1 },
  { metric: 'error_rate', title: 'Error rate', unit: 'percentunit', combine: 'max', decimals: 2, softMax: 0.01 },
];

/** A readable series name: backend plus the labels that distinguish it (model, service…), and its origin if OTel. */
export function seriesName(s: GoldenSeries): string {
  const labels = Object.entries(s.labels)
    .filter(([k]) => k !== 'backend' && k !== '__name__')
    .map(([k, v]) => (k === 'model_name' || k === 'model' || k === 'service' ? v : `${k}=${v}`));
  return [s.backend, ...labels].join(' ') + (s.origin === 'otel' ? ' (client spans)' : '');
}

/** The refId of a metric's combined series (its stat reads it). */
export const combinedRefId = (refId: string, metric: GoldenMetric): string => partRefId(refId, `${metric}:combined`);

export function goldenFrames(answer: GoldenAnswer, refId: string): DataFrame[] {
  const frames: DataFrame[] = [];
  for (const info of GOLDEN_METRICS) {
    const series = answer.series.filter((s) => s.metric === info.metric);
    for (const s of series) {
      const name = seriesName(s);
      frames.push(
        frame(
          [
            field(
              'time',
              TIME,
              s.points.map((p) => p[0])
            ),
            field(
              name,
              NUMBER,
              s.points.map((p) => p[1]),
              {
                unit: info.unit,
                decimals: info.decimals,
                displayNameFromDS: name,
                ...(info.softMax !== undefined ? { custom: { axisSoftMin: 0, axisSoftMax: info.softMax } } : {}),
              },
              { backend: s.backend, ...s.labels }
            ),
          ],
          {
            name,
            refId: partRefId(refId, info.metric),
            meta: {
              ...(s.query ? { executedQueryString: s.query } : {}),
              custom: { metric: info.metric, origin: s.origin },
              ...(s.note ? { notices: [{ severity: 'info' as const, text: s.note }] } : {}),
            },
          }
        )
      );
    }
    if (series.length) {
      const { times, values } = combineSeries(series, info.combine);
      frames.push(
        frame(
          [
            field('time', TIME, times),
            field(info.title, NUMBER, values, {
              unit: info.unit,
              decimals: info.decimals,
              displayNameFromDS: info.title,
            }),
          ],
          {
            name: `${info.title} (${info.combine} of ${series.length} series)`,
            refId: combinedRefId(refId, info.metric),
            meta: {
              custom: {
                metric: info.metric,
                combine: info.combine,
                queries: series.flatMap((s) => (s.query ? [s.query] : [])),
              },
            },
          }
        )
      );
    }
    // A metric without series still has its parts (empty frames), so what is said about it reaches its panels.
    const missing = answer.missing.filter((m) => m.metric === info.metric);
    if (missing.length || !series.length) {
      const notices = missing.map((m) => ({ severity: 'info' as const, text: `${m.backend}: ${m.reason}` }));
      frames.push(frame([], { refId: partRefId(refId, info.metric), meta: notices.length ? { notices } : undefined }));
      if (!series.length) {
        frames.push(
          frame([], { refId: combinedRefId(refId, info.metric), meta: notices.length ? { notices } : undefined })
        );
      }
    }
  }
  return frames;
}
