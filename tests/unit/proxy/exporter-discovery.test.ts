import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ExporterDiscovery, parseDnsSpec, resolveAddresses } from '../../../backend-proxy/src/sources/discovery';
import { ExporterSource } from '../../../backend-proxy/src/sources/exporters';
import { configFromEnv } from '../../../backend-proxy/src/config';
import { startProxy } from '../../../backend-proxy/src/server';
import { tinyServer } from '../../support/otlp-spans';

const quiet = pino({ level: 'silent' });

test('discovery keeps the exporter list equal to the fixed URLs plus what the name resolves to now', async () => {
  let answer: string[] | Error = ['10.0.0.2', '10.0.0.1'];
  const fixed = [new ExporterSource('http://127.0.0.1:3302', 1000)];
  const list = [...fixed];
  const d = new ExporterDiscovery(
    [parseDnsSpec('dns+http://bpf-exporter.hopscope.svc:3302')],
    fixed,
    list,
    1000,
    quiet,
    async () => {
      if (answer instanceof Error) throw answer;
      return [...answer].sort();
    }
  );
  await d.refresh();
  assert.deepEqual(
    list.map((e) => e.baseUrl),
    ['http://127.0.0.1:3302', 'http://10.0.0.1:3302', 'http://10.0.0.2:3302']
  );
  const kept = list[2];
  // A node joins, one leaves: the source of the node that stayed is the same object.
  answer = ['10.0.0.3', '10.0.0.2'];
  await d.refresh();
  assert.deepEqual(
    list.map((e) => e.baseUrl),
    ['http://127.0.0.1:3302', 'http://10.0.0.2:3302', 'http://10.0.0.3:3302']
  );
  assert.equal(list[1], kept);
  assert.deepEqual(d.statuses(), [{ source: 'bpf-exporter discovery bpf-exporter.hopscope.svc', ok: true }]);
  // DNS down: the last good list stays, and health says so.
  answer = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
  await d.refresh();
  assert.equal(list.length, 3);
  const [st] = d.statuses();
  assert.equal(st.ok, false);
  assert.match(st.error!, /ENOTFOUND.*using the 2 exporter\(s\) of the last good lookup/);
});

test('a real lookup: localhost gives one address (IPv4 chosen over IPv6, no doubled node)', async () => {
  assert.deepEqual(await resolveAddresses('localhost'), ['127.0.0.1']);
  await assert.rejects(resolveAddresses('no-such-host.invalid'), (e: NodeJS.ErrnoException) => e.code === 'ENOTFOUND');
});

test('the proxy started with dns+http://localhost:<port> asks the exporter found there', async () => {
  const exp = await tinyServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(req.url?.startsWith('/health') ? '{"ok":true}' : '{"events":[]}');
  });
  const port = new URL(exp.url).port;
  const proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    chainControlUrl: undefined,
    alertIntervalMs: 0,
    exporterUrls: [`dns+http://localhost:${port}`],
  });
  try {
    const h = (await (await fetch(`${proxy.url}/api/health`)).json()) as {
      sources: Array<{ source: string; ok: boolean }>;
    };
    assert.ok(
      h.sources.some((s) => s.source === `bpf-exporter 127.0.0.1:${port}` && s.ok),
      JSON.stringify(h.sources)
    );
    assert.ok(
      h.sources.some((s) => s.source === 'bpf-exporter discovery localhost' && s.ok),
      JSON.stringify(h.sources)
    );
  } finally {
    await proxy.close();
    await exp.close();
  }
});

test('configuration: dns+ entries are checked up front, with the reason', () => {
  assert.deepEqual(
    configFromEnv({ HOPSCOPE_EXPORTER_URLS: 'http://10.0.0.9:3302, dns+http://bpf-exporter.hopscope.svc:3302' })
      .exporterUrls,
    ['http://10.0.0.9:3302', 'dns+http://bpf-exporter.hopscope.svc:3302']
  );
  assert.throws(() => configFromEnv({ HOPSCOPE_EXPORTER_URLS: 'dns+ftp://x:1' }), /must use http or https/);
  assert.throws(() => configFromEnv({ HOPSCOPE_EXPORTER_URLS: 'dns+http://10.0.0.1:3302' }), /needs a name to resolve/);
  assert.throws(
    () => configFromEnv({ HOPSCOPE_EXPORTER_URLS: 'dns+http://x:3302/events' }),
    /scheme:\/\/name:port only/
  );
  assert.throws(() => configFromEnv({ HOPSCOPE_EXPORTER_DNS_REFRESH_MS: '10' }), /out of range/);
});
