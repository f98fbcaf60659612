/**
 * Starts the Overview's first requests from module.js, before the page's code has loaded (see api/prefetch.ts for
 * how the page takes them, and queries.ts for how they match what the page asks).
 */
import { dateMath } from '@grafana/data';

import { rawFetch } from '../../api/http';
import { addPrefetched } from '../../api/prefetch';
import { overviewEarlyRequests } from './queries';

const parseRelative = (value: string, roundUp: boolean): number | undefined => {
  const t = dateMath.parse(value, roundUp);
  return t && t.isValid() ? t.valueOf() : undefined;
};

/** When the location is the Overview, starts its four requests now; returns whether it did. */
export function prefetchOverview(location: { pathname: string; search: string }): boolean {
  const requests = overviewEarlyRequests(location, parseRelative);
  for (const r of requests ?? []) {
    addPrefetched(r, rawFetch(r.path, { params: r.params }));
  }
  return requests !== undefined;
}
