/**
 * A run the proxy could not take (down, database down, refused): its registration and finish, written to a file so
 * nothing is lost; `hopscope-load --resend FILE` delivers it later.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { RunFinish, RunRegistration } from '../../../contract/runs';
import { formatZodError } from '../../../contract/zod-error';
import { UsageError } from '../load/errors';

export const SpoolRecord = z.object({
  kind: z.literal('hopscope-load-spool'),
  version: z.literal(1),
  proxyUrl: z.string(),
  registration: RunRegistration,
  finish: RunFinish,
  reason: z.string(),
  writtenMs: z.number(),
});
export type SpoolRecord = z.infer<typeof SpoolRecord>;

/** `$HOPSCOPE_LOAD_SPOOL_DIR`, else ~/.hopscope/spool (the temp folder when there is no home). */
export function defaultSpoolDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOPSCOPE_LOAD_SPOOL_DIR) return env.HOPSCOPE_LOAD_SPOOL_DIR;
  const home = homedir();
  return home ? join(home, '.hopscope', 'spool') : join(tmpdir(), 'hopscope-spool');
}

/** Writes the record; falls back to the temp folder when `dir` cannot be written. Returns the file. */
export function writeSpool(dir: string, rec: Omit<SpoolRecord, 'kind' | 'version' | 'writtenMs'>): string {
  const body = JSON.stringify({ kind: 'hopscope-load-spool', version: 1, writtenMs: Date.now(), ...rec }, null, 2);
  const name = `${rec.registration.runId}.${rec.finish.workerId}.${Date.now()}.json`.replace(/[^A-Za-z0-9_.:-]/g, '_');
  for (const d of [dir, join(tmpdir(), 'hopscope-spool')]) {
    try {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, name), body, { mode: 0o600 });
      return join(d, name);
    } catch {
      /* try the next folder */
    }
  }
  throw new Error(`cannot write the spool file in ${dir} nor in the temp folder`);
}

export function readSpool(file: string): SpoolRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(
      `cannot read spool file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`
    );
  }
  const r = SpoolRecord.safeParse(raw);
  if (!r.success) throw new UsageError(`${file} is not a hopscope-load spool file: ${formatZodError(r.error)}`);
  return r.data;
}
