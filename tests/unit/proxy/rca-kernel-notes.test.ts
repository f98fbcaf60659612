/** What the exporters could not hand over shows in a trace's root-cause answer, never silently. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RcaAnswer } from '../../../contract';
import { startProxy } from '../../../backend-proxy/src/server';
import { chainTrace, hex, otlp, tinyServer } from '../../support/otlp-spans';

test('events an exporter counted but did not record (its budget), and a truncated answer, are listed as missing', async () => {
  const exp = await tinyServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      req.url?.startsWith('/health')
        ? '{"ok":true}'
        : JSON.stringify({ events: [], dropped: 0, suppressed: 42, truncated: true, mode: 'live' })
    );
  });
  const proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    chainControlUrl: undefined,
    alertIntervalMs: 0,
    exporterUrls: [exp.url],
  });
  try {
    const t0 = Date.now() - 10_000;
    const r = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlp(chainTrace(0, t0, 400))),
    });
    assert.equal(r.status, 200);
    const a = RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${hex(1, 32)}/rca`)).json());
    assert.ok(
      a.missing.some((m) => /42 event\(s\) of this window were counted but not recorded one by one/.test(m)),
      JSON.stringify(a.missing)
    );
    assert.ok(
      a.missing.some((m) => /used the most recent ones/.test(m)),
      JSON.stringify(a.missing)
    );
  } finally {
    await proxy.close();
    await exp.close();
  }
});
