import { join } from 'node:path';

/** The shared reference data (read-only): `../shared/fixtures` beside the repository, as CI lays it out, unless
 *  HOPSCOPE_FIXTURES points elsewhere. One definition, so no test hard-codes a machine's path. */
export const FIXTURES_DIR =
  process.env.HOPSCOPE_FIXTURES ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');

export const fixture = (...parts: string[]): string => join(FIXTURES_DIR, ...parts);
