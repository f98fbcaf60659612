/**
 * Credentials for the HTTP sources (Prometheus/Mimir/Thanos, Tempo, Alertmanager), one scheme for all three:
 * `HOPSCOPE_<SOURCE>_BASIC_AUTH=user:password` or `HOPSCOPE_<SOURCE>_BEARER_TOKEN=<token>` (one of them), and
 * `HOPSCOPE_<SOURCE>_ORG_ID=<tenant>` sent as `X-Scope-OrgID` (Mimir, Tempo and Cortex multi-tenancy; `a|b` asks
 * several tenants where Mimir allows it). Credentials in the URL itself are refused, so a URL can be logged safely.
 * The secrets go into request headers only: never into a log line, an error message or a span attribute.
 */
export interface SourceAuth {
  basic?: { user: string; password: string };
  bearerToken?: string;
  orgId?: string;
}

export const AUTH_SOURCES = { prometheus: 'PROMETHEUS', tempo: 'TEMPO', alertmanager: 'ALERTMANAGER' } as const;
export type AuthSource = keyof typeof AUTH_SOURCES;

const ORG_ID = /^[A-Za-z0-9!_.*'()|-]{1,150}$/;

/** Parses one source's variables; throws Error with a message naming the variable (never its value). */
export function parseSourceAuth(prefix: string, env: NodeJS.ProcessEnv): SourceAuth | undefined {
  const get = (suffix: string): string | undefined => {
    const v = env[`${prefix}_${suffix}`];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const out: SourceAuth = {};
  const basic = get('BASIC_AUTH');
  const bearer = get('BEARER_TOKEN');
  if (basic !== undefined && bearer !== undefined)
    throw new Error(`${prefix}_BASIC_AUTH and ${prefix}_BEARER_TOKEN are both set: a source takes one of them`);
  if (basic !== undefined) {
    const i = basic.indexOf(':');
    if (i <= 0) throw new Error(`${prefix}_BASIC_AUTH: expected user:password (the value is not shown)`);
    out.basic = { user: basic.slice(0, i), password: basic.slice(i + 1) };
  }
  if (bearer !== undefined) {
    if (/\s/.test(bearer))
      throw new Error(`${prefix}_BEARER_TOKEN: must not contain whitespace (the value is not shown)`);
    out.bearerToken = bearer;
  }
  const org = get('ORG_ID');
  if (org !== undefined) {
    if (!ORG_ID.test(org))
      throw new Error(
        `${prefix}_ORG_ID: "${org.slice(0, 40)}" is not a tenant id (letters, digits, !_.*'()- and | between tenants, at most 150)`
      );
    out.orgId = org;
  }
  return Object.keys(out).length ? out : undefined;
}

/** The headers that carry a source's credentials. */
export function authHeaders(a: SourceAuth | undefined): Record<string, string> {
  if (!a) return {};
  const h: Record<string, string> = {};
  if (a.basic) h.authorization = `Basic ${Buffer.from(`${a.basic.user}:${a.basic.password}`).toString('base64')}`;
  else if (a.bearerToken) h.authorization = `Bearer ${a.bearerToken}`;
  if (a.orgId) h['x-scope-orgid'] = a.orgId;
  return h;
}

/** What a log line or the health answer may say about a source's credentials: their kind, never their value. */
export function describeAuth(a: SourceAuth | undefined): string {
  if (!a) return 'none';
  return (
    [
      a.basic ? `basic (user ${a.basic.user})` : a.bearerToken ? 'bearer token' : '',
      a.orgId ? `X-Scope-OrgID ${a.orgId}` : '',
    ]
      .filter(Boolean)
      .join(', ') || 'none'
  );
}
