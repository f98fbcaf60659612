/** The database's configuration variables: defaults, overrides, and an error naming the variable for every bad value. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../backend-proxy/src/config';
import { dbConfigFromEnv, parseDuration } from '../../../backend-proxy/src/db/config';

test('defaults: in memory, 30 s heartbeat timeout, 7 days of kernel evidence', () => {
  assert.deepEqual(dbConfigFromEnv({}), { runHeartbeatTimeoutMs: 30_000, kernelEvidenceRetentionMs: 7 * 86_400_000 });
});

test('overrides are read', () => {
  const c = dbConfigFromEnv({
    HOPSCOPE_DATA_DIR: '/var/lib/hopscope/',
    HOPSCOPE_DATABASE_URL: 'postgres://hop:pw@db:5432/hopscope',
    HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '10000',
    HOPSCOPE_KERNEL_EVIDENCE_RETENTION: '36h',
  });
  assert.deepEqual(c, {
    dataDir: '/var/lib/hopscope',
    databaseUrl: 'postgres://hop:pw@db:5432/hopscope',
    runHeartbeatTimeoutMs: 10_000,
    kernelEvidenceRetentionMs: 36 * 3600_000,
  });
  assert.equal(parseDuration('X', '90m', 0, 1e12), 5_400_000);
  assert.equal(parseDuration('X', '1.5d', 0, 1e12), 129_600_000);
  assert.equal(parseDuration('X', '2w', 0, 2e12), 1_209_600_000);
});

test('every bad value gets an error naming the variable, and never echoes a password', () => {
  const bad: Record<string, string> = {
    HOPSCOPE_DATA_DIR: 'relative/dir',
    HOPSCOPE_DATABASE_URL: 'mysql://u:hunter2@h/db',
    HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '5s',
    HOPSCOPE_KERNEL_EVIDENCE_RETENTION: '7 days',
  };
  for (const [k, v] of Object.entries(bad)) {
    assert.throws(
      () => dbConfigFromEnv({ [k]: v }),
      (e: Error) => e instanceof ConfigError && e.message.startsWith(k) && !e.message.includes('hunter2'),
      `${k}=${v}`
    );
  }
  assert.throws(
    () => dbConfigFromEnv({ HOPSCOPE_DATABASE_URL: 'not a url at all' }),
    /HOPSCOPE_DATABASE_URL: not a URL/
  );
  assert.throws(() => dbConfigFromEnv({ HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '100' }), /out of range 1000\.\.3600000/);
  assert.throws(() => dbConfigFromEnv({ HOPSCOPE_KERNEL_EVIDENCE_RETENTION: '10s' }), /out of range/);
});
