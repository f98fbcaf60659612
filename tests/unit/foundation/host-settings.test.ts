/** The host's plugin settings are write-only for secrets, and its CLI config rejects bad values clearly. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ConfigError, loadConfig } from '../../host/config';
import { PluginSettingsStore } from '../../host/settings';

describe('host plugin settings', () => {
  it('exposes which secrets are set, never their values; an empty value resets', () => {
    const store = new PluginSettingsStore({ jsonData: { proxyUrl: 'http://a' }, secureJsonData: { proxyToken: 't' } });
    assert.deepEqual(store.secureJsonFields, { proxyToken: true });
    store.update({ jsonData: { proxyUrl: 'http://b' } });
    assert.equal(store.jsonData.proxyUrl, 'http://b');
    assert.equal(store.secureJsonData.proxyToken, 't', 'a save without secureJsonData keeps the secret');
    store.update({ secureJsonData: { proxyToken: '' } });
    assert.deepEqual(store.secureJsonFields, {});
  });
});

describe('host config', () => {
  it('defaults to 127.0.0.1:3300 and the proxy on 3301', () => {
    const c = loadConfig([], {});
    assert.equal(c.port, 3300);
    assert.equal(c.bind, '127.0.0.1');
    assert.equal(c.proxyUrl, 'http://127.0.0.1:3301');
    assert.equal(c.dist, 'dist');
  });

  it('flags override the environment, which overrides defaults', () => {
    const env = { HOPSCOPE_HOST_PORT: '4000', HOPSCOPE_HOST_PROXY_URL: 'http://env:1/' };
    assert.equal(loadConfig([], env).port, 4000);
    assert.equal(loadConfig([], env).proxyUrl, 'http://env:1');
    assert.equal(loadConfig(['--port', '0', '--proxy-url', 'https://flag:2'], env).port, 0);
    assert.equal(loadConfig(['--proxy-url', 'https://flag:2'], env).proxyUrl, 'https://flag:2');
  });

  it('every bad value is a clear error', () => {
    assert.throws(
      () => loadConfig(['--port', 'abc'], {}),
      (e: Error) => e instanceof ConfigError && /--port must be a port number/.test(e.message)
    );
    assert.throws(() => loadConfig([], { HOPSCOPE_HOST_PORT: '70000' }), /HOPSCOPE_HOST_PORT must be a port number/);
    assert.throws(() => loadConfig(['--proxy-url', 'localhost:3301'], {}), /--proxy-url must be/);
    assert.throws(() => loadConfig(['--nope'], {}), /Unknown option/);
  });
});
