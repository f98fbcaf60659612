/**
 * File paths that go into bpftrace programs (`uprobe:"<path>":<symbol>`) and listings (`bpftrace -l`). The paths come
 * from /proc/<pid>/maps of pod processes, so a pod chooses them: a path with `:`, `{`, `"`, a newline or a wildcard
 * could rewrite the probe spec or the program around it. Only paths made of an allow-list of characters are used
 * (`/` first; letters, digits and `. _ / + @ ~ -`; at most 1024 characters), and they go in quoted as well. Anything
 * else is refused where it is found, with the reason in /health.
 */

const SAFE_PATH = /^\/[A-Za-z0-9._/+@~-]{0,1023}$/;

/** Why this path may not go into a bpftrace program, or undefined when it may. */
export function unsafePathReason(path: string): string | undefined {
  if (SAFE_PATH.test(path)) return undefined;
  return path.length > 1024
    ? 'path longer than 1024 characters'
    : 'path has characters other than letters, digits and . _ / + @ ~ - (not put into a bpftrace program)';
}

/** The path, quoted, for a bpftrace attach point; throws on a path that was not checked (a bug, never pod input). */
export function bpfPath(path: string): string {
  const why = unsafePathReason(path);
  if (why) throw new Error(`refusing to put ${JSON.stringify(path.slice(0, 200))} into a bpftrace program: ${why}`);
  return `"${path}"`;
}
