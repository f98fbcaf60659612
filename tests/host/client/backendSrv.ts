/**
 * The host's BackendSrv: Grafana's HTTP service, reduced to same-origin fetch. Plugins call it for
 * `/api/plugin-proxy/<id>/...` and `/api/plugins/<id>/settings`, which the host server answers as Grafana does.
 * Semantics kept: JSON in and out, `params` as query string, `requestId` cancels the previous request with the same
 * id, failures reject with a FetchError ({status, statusText, data, config}).
 */
import type { BackendSrv, BackendSrvRequest, FetchError, FetchResponse } from '@grafana/runtime';
import { Observable, lastValueFrom } from 'rxjs';

function buildUrl(options: BackendSrvRequest): string {
  const url = new URL(options.url, window.location.origin);
  for (const [key, value] of Object.entries(options.params ?? {})) {
    if (value === undefined || value === null) {
      continue;
    }
    for (const v of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(key, String(v));
    }
  }
  return url.origin === window.location.origin ? url.pathname + url.search : url.toString();
}

async function readBody(res: Response, responseType: BackendSrvRequest['responseType']): Promise<unknown> {
  if (responseType === 'blob') {
    return res.blob();
  }
  if (responseType === 'arraybuffer') {
    return res.arrayBuffer();
  }
  const text = await res.text();
  if (responseType === 'text') {
    return text;
  }
  if (!text) {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class HostBackendSrv implements BackendSrv {
  private inFlight = new Map<string, AbortController>();

  fetch<T>(options: BackendSrvRequest): Observable<FetchResponse<T>> {
    return new Observable<FetchResponse<T>>((subscriber) => {
      const controller = new AbortController();
      if (options.requestId) {
        this.inFlight.get(options.requestId)?.abort();
        this.inFlight.set(options.requestId, controller);
      }
      const method = (options.method ?? 'GET').toUpperCase();
      const headers = new Headers(options.headers ?? {});
      let body: BodyInit | undefined;
      if (options.data !== undefined && method !== 'GET' && method !== 'HEAD') {
        const isRaw =
          options.data instanceof FormData || options.data instanceof Blob || typeof options.data === 'string';
        body = isRaw ? (options.data as BodyInit) : JSON.stringify(options.data);
        if (!isRaw && !headers.has('content-type')) {
          headers.set('content-type', 'application/json');
        }
      }
      if (!headers.has('accept')) {
        headers.set('accept', 'application/json, text/plain, */*');
      }
      fetch(buildUrl(options), { method, headers, body, signal: controller.signal, credentials: 'same-origin' })
        .then(async (res) => {
          const data = (await readBody(res, options.responseType)) as T;
          const response: FetchResponse<T> = {
            data,
            status: res.status,
            statusText: res.statusText,
            ok: res.ok,
            headers: res.headers,
            redirected: res.redirected,
            type: res.type,
            url: res.url,
            config: options,
          };
          if (res.ok) {
            subscriber.next(response);
            subscriber.complete();
          } else {
            const message =
              typeof (data as { message?: unknown })?.message === 'string'
                ? (data as { message: string }).message
                : res.statusText;
            const error: FetchError = {
              status: res.status,
              statusText: res.statusText,
              data,
              message,
              config: options,
            };
            subscriber.error(error);
          }
        })
        .catch((err: unknown) => {
          const cancelled = controller.signal.aborted;
          const error: FetchError = {
            status: 0,
            statusText: cancelled ? 'Request was aborted' : String((err as Error)?.message ?? err),
            data: { message: cancelled ? 'Request was aborted' : 'Network error' },
            cancelled,
            config: options,
          };
          subscriber.error(error);
        })
        .finally(() => {
          if (options.requestId && this.inFlight.get(options.requestId) === controller) {
            this.inFlight.delete(options.requestId);
          }
        });
      return () => controller.abort();
    });
  }

  chunked(options: BackendSrvRequest): Observable<FetchResponse<Uint8Array | undefined>> {
    return this.fetch<ArrayBuffer>({ ...options, responseType: 'arraybuffer' }).pipe(
      (source) =>
        new Observable((subscriber) =>
          source.subscribe({
            next: (res) => subscriber.next({ ...res, data: res.data ? new Uint8Array(res.data) : undefined }),
            error: (e) => subscriber.error(e),
            complete: () => subscriber.complete(),
          })
        )
    );
  }

  async request<T = unknown>(options: BackendSrvRequest): Promise<T> {
    return (await lastValueFrom(this.fetch<T>(options))).data;
  }

  datasourceRequest<T = unknown>(options: BackendSrvRequest): Promise<FetchResponse<T>> {
    return lastValueFrom(this.fetch<T>(options));
  }

  get<T = unknown>(
    url: string,
    params?: BackendSrvRequest['params'],
    requestId?: string,
    options?: Partial<BackendSrvRequest>
  ): Promise<T> {
    return this.request<T>({ ...options, url, params, requestId, method: 'GET' });
  }

  delete<T = unknown>(url: string, data?: unknown, options?: Partial<BackendSrvRequest>): Promise<T> {
    return this.request<T>({ ...options, url, data, method: 'DELETE' });
  }

  post<T = unknown>(url: string, data?: unknown, options?: Partial<BackendSrvRequest>): Promise<T> {
    return this.request<T>({ ...options, url, data, method: 'POST' });
  }

  patch<T = unknown>(url: string, data?: unknown, options?: Partial<BackendSrvRequest>): Promise<T> {
    return this.request<T>({ ...options, url, data, method: 'PATCH' });
  }

  put<T = unknown>(url: string, data?: unknown, options?: Partial<BackendSrvRequest>): Promise<T> {
    return this.request<T>({ ...options, url, data, method: 'PUT' });
  }
}
