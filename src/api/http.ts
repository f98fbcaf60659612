/**
 * The smallest part of the API client: proxy URLs and one raw call through Grafana's backendSrv. No schemas (zod)
 * here, so module.js can import it to start the first data requests early (features/overview/prefetch.ts).
 */
import { getBackendSrv } from '@grafana/runtime';
import { lastValueFrom } from 'rxjs';

import { PROXY_BASE_URL } from '../constants';
import type { RawOutcome } from './prefetch';

export { cleanParams, type QueryParams } from './params';

/** Builds the data-proxy URL of a proxy API path (`/traces` → `/api/plugin-proxy/hopscope-rca-app/api/traces`). */
export function proxyUrl(path: string): string {
  return `${PROXY_BASE_URL}/${path.replace(/^\/+/, '')}`;
}

/** One call through Grafana's backendSrv (data proxy), never throwing. */
export async function rawFetch(
  path: string,
  options: {
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    params?: Record<string, string>;
    body?: unknown;
    requestId?: string;
  } = {}
): Promise<RawOutcome> {
  try {
    const response = await lastValueFrom(
      getBackendSrv().fetch<unknown>({
        url: proxyUrl(path),
        method: options.method ?? 'GET',
        params: options.params,
        data: options.body,
        requestId: options.requestId,
        showErrorAlert: false,
        showSuccessAlert: false,
      })
    );
    return { ok: true, data: response.data };
  } catch (error) {
    return { ok: false, error };
  }
}
