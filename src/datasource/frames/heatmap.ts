/**
 * GPU heatmap → one `heatmap-rows` frame (Grafana's heatmap panel draws it as is): a time field, then one field per
 * GPU or MIG instance, named by host, GPU and pod, values 0..1 of the DCGM field the proxy used (a percent field is
 * brought to 0..1). Each row links to its pod's evidence. No live source gives per-SM figures: the frame says so.
 */
import type { DataFrame, DataFrameType, QueryResultMetaNotice } from '@grafana/data';

import { appPaths } from '../../../contract/app-urls';
import type { HeatmapAnswer, ServicesAnswer } from '../../../contract';
import { field, frame, NUMBER, TIME } from './frame';
import { appLink } from './links';

const HEATMAP_ROWS = 'heatmap-rows' as unknown as DataFrameType;

type Row = HeatmapAnswer['rows'][number];

export function heatmapRowName(r: Row): string {
  return `${r.host ? `${r.host} · ` : ''}GPU ${r.gpu}${r.mig ? ` · MIG ${r.mig}` : ''}`;
}

/** The note every GPU heatmap carries (the design's honest limit), with the field the values come from. */
export function heatmapNote(answer: HeatmapAnswer): QueryResultMetaNotice {
  const what = answer.field ? `${answer.field}` : 'no DCGM field';
  return {
    severity: 'info',
    text: `${answer.note ?? 'Per GPU / MIG instance: no live source gives per-SM figures.'} Values: ${what}.`,
  };
}

/**
 * @param services the services answer of the same window, to link a row's pod to its service's drill-down (the
 *   heatmap rows name the pod only); without it a row links to the Services list.
 */
export function heatmapFrame(answer: HeatmapAnswer, services?: ServicesAnswer): DataFrame {
  const percent = answer.field === 'DCGM_FI_DEV_GPU_UTIL';
  const serviceOf = new Map<string, string>();
  for (const s of services?.services ?? []) {
    for (const pod of s.pods) {
      serviceOf.set(pod, s.service);
    }
  }
  const rows = answer.rows.map((r) => {
    const service = r.pod ? serviceOf.get(r.pod) : undefined;
    const path = r.pod && service ? appPaths.pod(service, r.pod) : appPaths.services();
    const title = r.pod ? `Kernel evidence of ${r.pod}` : 'Services';
    return field(
      heatmapRowName(r),
      NUMBER,
      r.values.map((v) => (v === null || !Number.isFinite(v) ? null : Math.min(1, Math.max(0, percent ? v / 100 : v)))),
      {
        displayNameFromDS: heatmapRowName(r),
        unit: 'percentunit',
        min: 0,
        max: 1,
        links: [appLink(title, path)],
      },
      {
        gpu: r.gpu,
        ...(r.host ? { host: r.host } : {}),
        ...(r.pod ? { pod: r.pod } : {}),
        ...(r.namespace ? { namespace: r.namespace } : {}),
        ...(r.mig ? { mig: r.mig } : {}),
        ...(r.uuid ? { uuid: r.uuid } : {}),
        ...(answer.field ? { field: answer.field } : {}),
      }
    );
  });
  return frame([field('time', TIME, answer.times), ...rows], {
    name: answer.field ?? 'GPU activity',
    meta: {
      type: HEATMAP_ROWS,
      custom: { field: answer.field, granularity: answer.granularity, stepMs: answer.stepMs },
    },
  });
}
