/**
 * How deeply a JSON text nests, read from its bytes before it is parsed: JSON.parse copes with any depth, but the
 * code that walks the result recursively (OTLP normalisation, validation, JSON.stringify) overflows the stack on a
 * 10,000-deep body. One linear pass, no allocation; strings (and escapes in them) are skipped.
 */
import { DomainError } from './errors';

/**
 * Deepest nesting the proxy reads. OTLP JSON needs 10 levels to reach a span attribute's value and 4 more per nested
 * kvlist; a rule set or a run report needs fewer than 10.
 */
export const MAX_JSON_DEPTH = 128;

/** The first depth past `max` reached by `buf` (a JSON text), or 0 when it never goes deeper than `max`. */
export function jsonDepthPast(buf: Uint8Array, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return 0;
}

/** Throws an invalid input (400 `too_deep`) naming the limit when `buf` nests deeper than `max`. */
export function assertJsonDepth(buf: Uint8Array, what: string, max = MAX_JSON_DEPTH): void {
  if (jsonDepthPast(buf, max))
    throw new DomainError(
      'invalid',
      `${what} nests deeper than ${max} levels of arrays and objects; nothing was read`,
      {
        code: 'too_deep',
      }
    );
}
