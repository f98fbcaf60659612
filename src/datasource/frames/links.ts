/**
 * Data links into the app's own pages, as Grafana evaluates them: the path comes from a field of the row (a hidden
 * `…Path` field built with contract/app-urls.ts), the query string keeps the time range and variables of the page the
 * link is clicked on (`${__url.params:include:…}`), so a click in a table or a heatmap cell drills down like any link.
 */
import type { DataLink } from '@grafana/data';

import { APP_URL_KEYS } from '../../../contract/app-urls';

/** The query string of the page the link is clicked on, reduced to the keys every app link carries. */
const CARRIED = `\${__url.params:include:${APP_URL_KEYS.join(',')}}`;

/** A link to a fixed app path (built with appPaths). */
export function appLink(title: string, path: string): DataLink {
  return { title, url: `${path}${CARRIED}` };
}

/** A link to the app path held by `pathField` of the same row (a per-row drill-down). */
export function appPathLink(title: string, pathField: string): DataLink {
  return { title, url: `\${__data.fields.${pathField}:raw}${CARRIED}` };
}

/** A hidden field's config: in the frame (links read it, Inspect shows it), not drawn as a column or series. */
export const HIDDEN = { custom: { hidden: true, hideFrom: { viz: true, legend: true, tooltip: true } } };
