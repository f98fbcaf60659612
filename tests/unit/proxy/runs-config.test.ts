/** The proxy's database and run settings: defaults, overrides, and a clear error naming the variable for bad values. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ConfigError, configFromEnv } from '../../../backend-proxy/src/config';

test('defaults: no database URL, no data dir (in memory), 30 s heartbeat timeout and connect timeout', () => {
  const c = configFromEnv({});
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.dataDir, undefined);
  assert.equal(c.runHeartbeatTimeoutMs, 30_000);
  assert.equal(c.databaseConnectTimeoutMs, 30_000);
});

test('overrides: a PostgreSQL URL, a data dir made absolute, the timeouts', () => {
  const c = configFromEnv({
    HOPSCOPE_DATABASE_URL: 'postgresql://hopscope:pw@db:5432/hopscope',
    HOPSCOPE_DATA_DIR: 'var/hopscope',
    HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '5000',
    HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS: '0',
  });
  assert.equal(c.databaseUrl, 'postgresql://hopscope:pw@db:5432/hopscope');
  assert.equal(c.dataDir, resolve('var/hopscope'));
  assert.equal(c.runHeartbeatTimeoutMs, 5000);
  assert.equal(c.databaseConnectTimeoutMs, 0);
  assert.equal(
    configFromEnv({ HOPSCOPE_DATABASE_URL: ' ', HOPSCOPE_DATA_DIR: '' }).databaseUrl,
    undefined,
    'empty = unset'
  );
});

test('bad values name their variable, and never repeat a password', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [
      { HOPSCOPE_DATABASE_URL: 'mysql://u:secret@db/x' },
      /^HOPSCOPE_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:/,
    ],
    [{ HOPSCOPE_DATABASE_URL: '//hopscope:secret@db' }, /^HOPSCOPE_DATABASE_URL: not a URL/],
    [{ HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '10' }, /^HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: 10 is out of range/],
    [{ HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: '5s' }, /^HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: "5s" is not a whole number/],
    [{ HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS: '-1' }, /^HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS/],
  ];
  for (const [env, re] of cases) {
    assert.throws(
      () => configFromEnv(env),
      (e: Error) => e instanceof ConfigError && re.test(e.message) && !e.message.includes('secret'),
      JSON.stringify(env)
    );
  }
});
