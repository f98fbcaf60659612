/** PromQL building blocks: label values escaped as PromQL string literals (and names whitelisted upstream). */

/** A PromQL double-quoted string literal; backslash, quote and newline escaped so a value cannot close the selector. */
export function promString(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** `{a="x",b="y"}` from defined entries only; `''` when none. */
export function matchers(labels: Record<string, string | undefined>): string {
  const parts = Object.entries(labels).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k)) throw new Error(`invalid label name ${k}`);
    return `${k}=${promString(v as string)}`;
  });
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Adds matchers to a selector that may already have some: `m{a="b"}` + `{c="d"}` → `m{a="b",c="d"}`. */
export function withMatchers(metric: string, extra: string, base = ''): string {
  const inner = [base, extra.replace(/^\{|\}$/g, '')].filter(Boolean).join(',');
  return inner ? `${metric}{${inner}}` : metric;
}
