import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, configFromEnv, loadConfig } from '../../../backend-proxy/src/config';

test('defaults follow DESIGN.md', () => {
  const c = configFromEnv({});
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 3301);
  assert.equal(c.tempoUrl, undefined); // embedded store
  assert.deepEqual(c.exporterUrls, ['http://127.0.0.1:3302']);
  assert.equal(c.chainControlUrl, 'http://127.0.0.1:3319');
  assert.equal(c.token, undefined);
});

test('env overrides are read', () => {
  const c = configFromEnv({
    HOPSCOPE_PROXY_PORT: '4000',
    HOPSCOPE_PROXY_TOKEN: 'abc',
    HOPSCOPE_TEMPO_URL: 'http://tempo:3200/',
    HOPSCOPE_EXPORTER_URLS: 'http://a:1, http://b:2',
    HOPSCOPE_PROMETHEUS_URL: 'none',
    HOPSCOPE_ALERTMANAGER_URL: 'http://am:9093',
  });
  assert.equal(c.port, 4000);
  assert.equal(c.token, 'abc');
  assert.equal(c.tempoUrl, 'http://tempo:3200');
  assert.deepEqual(c.exporterUrls, ['http://a:1', 'http://b:2']);
  assert.equal(c.prometheusUrl, undefined);
  assert.equal(c.alertmanagerUrl, 'http://am:9093');
});

test('every bad value gets an error naming the variable', () => {
  const bad: Record<string, string> = {
    HOPSCOPE_PROXY_PORT: '70000',
    HOPSCOPE_PROMETHEUS_URL: 'not a url',
    HOPSCOPE_TEMPO_URL: 'ftp://x',
    HOPSCOPE_EXPORTER_URLS: 'http://ok:1,nope',
    HOPSCOPE_SOURCE_TIMEOUT_MS: 'fast',
    HOPSCOPE_LOG_LEVEL: 'loud',
    HOPSCOPE_PROXY_HOST: 'a b',
    HOPSCOPE_PROXY_TOKEN: 'has space',
    HOPSCOPE_CHAIN_CONTROL_URL: '://',
    HOPSCOPE_STORE_MAX_SPANS: '-1',
  };
  for (const [k, v] of Object.entries(bad)) {
    assert.throws(
      () => configFromEnv({ [k]: v }),
      (e: Error) => e instanceof ConfigError && e.message.startsWith(k),
      `${k}=${v}`
    );
  }
});

test('a non-loopback bind without a token is refused, with a token it is allowed', () => {
  assert.throws(
    () => loadConfig({}, { HOPSCOPE_PROXY_HOST: '0.0.0.0' }),
    /refusing to bind 0\.0\.0\.0 without a token/
  );
  assert.equal(loadConfig({}, { HOPSCOPE_PROXY_HOST: '0.0.0.0', HOPSCOPE_PROXY_TOKEN: 't' }).host, '0.0.0.0');
  assert.equal(loadConfig({ host: '::1' }, {}).host, '::1');
});
