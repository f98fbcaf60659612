/**
 * Smaller leaks (finding 12 of issue 20, the proxy's parts): the database URL's `?password=` is redacted wherever the
 * URL is shown (503 bodies, /api/health use `redactUrl`), a run target's `user:password@` is never kept or answered,
 * and PGlite's in-memory template lives in a directory private to this user, not under a predictable name in /tmp.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { redactUrl } from '../../../backend-proxy/src/db/postgres';
import { openPglite } from '../../../backend-proxy/src/db/pglite';
import { withoutCredentials } from '../../../backend-proxy/src/db/runs-repo';

it('the database URL: a password in the user part or as a parameter is redacted', () => {
  const r = redactUrl('postgres://hop@db:5432/hopscope?password=s3cret&sslmode=require&sslpassword=k3y');
  assert.ok(!r.includes('s3cret') && !r.includes('k3y'), r);
  assert.match(r, /sslmode=require/);
  assert.ok(!redactUrl('postgres://hop:s3cret@db/hopscope').includes('s3cret'));
});

it("a run target's credentials are stripped", () => {
  assert.equal(withoutCredentials('http://admin:hunter2@gateway:8080/v1/chat'), 'http://gateway:8080/v1/chat');
  assert.equal(withoutCredentials('http://gateway:8080/v1/chat'), 'http://gateway:8080/v1/chat');
  assert.equal(withoutCredentials('ad-hoc'), 'ad-hoc');
});

it("PGlite's in-memory template: in hopscope-<uid>, mode 0700, none in the temp dir itself", async () => {
  const db = await openPglite(undefined, pino({ level: 'silent' }));
  await db.close();
  const dir = join(tmpdir(), `hopscope-${process.getuid!()}`);
  const st = lstatSync(dir);
  assert.ok(st.isDirectory() && !st.isSymbolicLink());
  assert.equal(st.mode & 0o777, 0o700);
  assert.ok(
    readdirSync(dir).some((f) => f.startsWith('hopscope-pglite-template-')),
    readdirSync(dir).join(', ')
  );
});
