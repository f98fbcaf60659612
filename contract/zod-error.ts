import type { z } from 'zod';

/** `rules[0].conditions[1].type`: where an issue is, as a person reads it; `root` names the value itself. */
function issuePath(path: readonly PropertyKey[], root: string): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : `${out ? '.' : ''}${String(k)}`;
  return out || root;
}

/** One issue as `path: message` (the piece `formatZodError` joins), for callers that put each issue on its own line. */
export function formatZodIssue(
  issue: { readonly path: readonly PropertyKey[]; readonly message: string },
  root = '(top)'
): string {
  return `${issuePath(issue.path, root)}: ${issue.message}`;
}

/**
 * One readable message per issue, `path: message`, joined by `; ` (the first `max`, then how many more), for the
 * `{error: {message}}` of a 400 or a configuration error. Every part formats zod errors with this one function.
 */
export function formatZodError(
  error: Pick<z.ZodError, 'issues'>,
  options: { root?: string; max?: number } = {}
): string {
  const { root = '(top)', max = 5 } = options;
  const lines = error.issues.slice(0, max).map((i) => formatZodIssue(i, root));
  const more = error.issues.length - lines.length;
  return more > 0 ? `${lines.join('; ')}; and ${more} more` : lines.join('; ');
}
