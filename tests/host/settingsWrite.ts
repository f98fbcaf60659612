/**
 * Who may write the plugin settings (`POST /api/plugins/<id>/settings`), as Grafana decides it: only an org Admin, and
 * only from the host's own pages. The settings carry `jsonData.proxyUrl`, where every proxied call goes WITH the
 * proxy token, so a write from another origin (a page the user visits, a rebound DNS name) would steal the token.
 * Same-origin: an `Origin` header must name this host, a `Sec-Fetch-Site` header must be `same-origin` (or `none`, a
 * typed URL); a client that sends neither is not a browser and cannot be driven by a page. The body must be JSON (a
 * cross-site HTML form cannot send that without a preflight) and a `jsonData.proxyUrl` must be an http(s) URL.
 */
import type { IncomingHttpHeaders } from 'node:http';

import { validateProxyUrl } from '../../src/pages/AppConfig/validateProxyUrl';
import type { OrgRole } from './pluginRoutes';

export interface WriteRefusal {
  status: number;
  code: string;
  message: string;
}

/** Why this request may not write the settings, or undefined when it may. */
export function settingsWriteRefusal(headers: IncomingHttpHeaders, role: OrgRole): WriteRefusal | undefined {
  if (role !== 'Admin') {
    return {
      status: 403,
      code: 'forbidden',
      message: `Only an org Admin may change the plugin settings (the signed-in role is ${role})`,
    };
  }
  const origin = headers.origin;
  const site = headers['sec-fetch-site'];
  const host = (headers.host ?? '').toLowerCase();
  let sameOrigin = site === undefined || site === 'same-origin' || site === 'none';
  if (origin !== undefined) {
    try {
      sameOrigin &&= new URL(origin).host.toLowerCase() === host && /^https?:$/.test(new URL(origin).protocol);
    } catch {
      sameOrigin = false;
    }
  }
  if (!sameOrigin) {
    return {
      status: 403,
      code: 'cross_origin',
      message: `Plugin settings are written only from this host's own pages (Origin ${origin ?? '(none)'}, Sec-Fetch-Site ${site ?? '(none)'})`,
    };
  }
  if (!/^application\/json\b/i.test(headers['content-type'] ?? '')) {
    return { status: 415, code: 'unsupported_media_type', message: 'Send the settings as application/json' };
  }
  return undefined;
}

/** What is wrong with the settings body's values, or undefined. Only `jsonData.proxyUrl` is checked: where tokens go. */
export function settingsBodyProblem(body: { jsonData?: unknown }): string | undefined {
  const jsonData = body.jsonData;
  if (jsonData === undefined) {
    return undefined;
  }
  if (!jsonData || typeof jsonData !== 'object' || Array.isArray(jsonData)) {
    return 'jsonData must be an object';
  }
  const proxyUrl = (jsonData as Record<string, unknown>).proxyUrl;
  if (proxyUrl === undefined) {
    return undefined;
  }
  if (typeof proxyUrl !== 'string') {
    return 'jsonData.proxyUrl must be a string';
  }
  const problem = validateProxyUrl(proxyUrl);
  return problem ? `jsonData.proxyUrl: ${problem}` : undefined;
}
