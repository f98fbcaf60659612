/**
 * Issue 14's open doors, each closed and checked: OTLP protobuf is decoded within element bounds (a 1 MiB flood of
 * empty spans or attributes no longer inflates into hundreds of MB, it is a quick 400 naming the bound); the store
 * counts resource attributes in its byte bound; request bodies in flight are bounded (503 + Retry-After); without a
 * token only loopback Host headers are served (DNS rebinding); PNG renders run at most two at a time with a bounded
 * queue (503 + Retry-After past it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Span } from '../../../contract';
import { BODY_BUDGET_BODIES } from '../../../backend-proxy/src/app';
import { DomainError } from '../../../backend-proxy/src/domain/errors';
import { HttpError, httpErrorOf } from '../../../backend-proxy/src/http/errors';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { ExportService, PNG_RENDERS_AT_ONCE, PNG_RENDERS_WAITING } from '../../../backend-proxy/src/services/export';
import { decodeOtlpProtobuf, OTLP_PROTOBUF_LIMITS } from '../../../backend-proxy/src/store/otlp-protobuf';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { encodeOtlpProtobuf } from '../../support/otlp-encode';
import { attributeFlood, spanFlood } from '../../integration/reliability/support/fuzz';
import { rawRequest, requestBytes } from '../../integration/reliability/support/raw-http';
import { chainTrace, otlp } from '../../support/otlp-spans';

const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined, alertIntervalMs: 0 };
const proto = { 'content-type': 'application/x-protobuf' };

const varint = (n: number): Buffer => {
  const o: number[] = [];
  while (n > 0x7f) {
    o.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  o.push(n);
  return Buffer.from(o);
};
const field = (no: number, payload: Buffer): Buffer =>
  Buffer.concat([varint((no << 3) | 2), varint(payload.length), payload]);

/** A real span (protobuf, written field by field: protobufjs' own encoder stops at 32 levels) whose attribute nests `depth` kvlists. */
function nested(depth: number): Buffer {
  let value = field(1, Buffer.from('leaf')); // AnyValue.string_value
  for (let i = 0; i < depth; i++)
    value = field(6, field(1, Buffer.concat([field(1, Buffer.from(`k${i}`)), field(2, value)]))); // kvlist_value.values[0] = {key, value}
  const span = Buffer.concat([
    field(1, Buffer.from('0123456789abcdef0123456789abcdef', 'hex')),
    field(2, Buffer.from('0123456789abcdef', 'hex')),
    field(5, Buffer.from('op')),
    Buffer.from([0x39]),
    Buffer.from(new BigUint64Array([BigInt(Date.now()) * 1_000_000n]).buffer), // start_time_unix_nano (fixed64)
    field(9, Buffer.concat([field(1, Buffer.from('deep')), field(2, value)])),
  ]);
  return field(1, field(2, field(2, span)));
}

describe('OTLP protobuf is decoded within bounds', () => {
  let proxy: RunningProxy;
  before(async () => {
    proxy = await startProxy({ port: 0, ...none });
  });
  after(() => proxy.close());

  it('a flood of empty spans or attributes is a quick 400 naming the bound, and nothing is stored', async () => {
    // The proxy starts its root-cause worker thread at start, in this process: a first answer from it means its boot
    // (whose CPU process.cpuUsage would count below) is over.
    const warm = await fetch(`${proxy.url}/api/rca`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ traces: { resourceSpans: [] } }),
    });
    await warm.arrayBuffer();
    for (const [what, body] of [
      ['spans', spanFlood(500_000)],
      ['attribute values', attributeFlood(600_000)],
    ] as const) {
      // CPU time of this process (the proxy runs in it), not wall time, which any other process on the machine moves.
      const c0 = process.cpuUsage();
      const r = await fetch(`${proxy.url}/v1/traces`, { method: 'POST', headers: proto, body: new Uint8Array(body) });
      const c1 = process.cpuUsage(c0);
      const ms = (c1.user + c1.system) / 1000;
      const b = await r.json();
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.match(
        b.error.message,
        new RegExp(
          `too many ${what} in one request \\(at most ${what === 'spans' ? OTLP_PROTOBUF_LIMITS.spans : OTLP_PROTOBUF_LIMITS.values}\\)`
        )
      );
      // Stopped at the bound, not after decoding a million objects (which took seconds).
      assert.ok(ms < 1500, `${what}: ${Math.round(ms)} ms of CPU`);
    }
    assert.equal((await (await fetch(`${proxy.url}/api/traces?from=now-1h&to=now`)).json()).traces.length, 0);
  });

  it('attribute values nested past the bound are a 400; within it they are read', async () => {
    const deep = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: proto,
      body: new Uint8Array(nested(OTLP_PROTOBUF_LIMITS.depth + 5)),
    });
    assert.equal(deep.status, 400);
    assert.match((await deep.json()).error.message, /nest deeper than 32 levels/);
    const ok = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: proto,
      body: new Uint8Array(nested(10)),
    });
    assert.equal(ok.status, 200, await ok.text());
  });

  it('the bounded decoder reads what the protobuf schema encodes: every value type, ids as hex, 64-bit ints exact', () => {
    const body = otlp(chainTrace(3, 1_750_000_000_000, 42, 2)) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ attributes: unknown[]; status: unknown }> }> }>;
    };
    const span = body.resourceSpans[0].scopeSpans[0].spans[0];
    span.attributes.push(
      {
        key: 'arr',
        value: {
          arrayValue: { values: [{ stringValue: 'a' }, { intValue: '-5' }, { doubleValue: 1.5 }, { boolValue: true }] },
        },
      },
      { key: 'big', value: { intValue: '9007199254740993' } },
      { key: 'b', value: { bytesValue: Buffer.from('hi').toString('base64') } }
    );
    span.status = { code: 2, message: 'boom' };
    const got = decodeOtlpProtobuf(encodeOtlpProtobuf(body)) as typeof body;
    const g = got.resourceSpans[0].scopeSpans[0].spans[0] as unknown as Record<string, unknown>;
    const want = body.resourceSpans[0].scopeSpans[0].spans[0] as unknown as Record<string, unknown>;
    for (const k of [
      'traceId',
      'spanId',
      'name',
      'kind',
      'startTimeUnixNano',
      'endTimeUnixNano',
      'status',
      'attributes',
    ])
      assert.deepEqual(g[k], want[k], k);
    assert.deepEqual(
      got.resourceSpans.map((r) => (r as unknown as { resource: unknown }).resource),
      body.resourceSpans.map((r) => (r as unknown as { resource: unknown }).resource)
    );
  });

  it('a truncated or lying body is a 400', async () => {
    const good = encodeOtlpProtobuf(otlp(chainTrace(4, Date.now(), 10)));
    for (const body of [
      good.subarray(0, good.length - 3),
      Buffer.concat([Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x07]), Buffer.alloc(8)]),
    ]) {
      const r = await fetch(`${proxy.url}/v1/traces`, { method: 'POST', headers: proto, body: new Uint8Array(body) });
      assert.equal(r.status, 400);
      assert.equal((await r.json()).error.code, 'bad_otlp');
    }
  });
});

describe('the store counts resource attributes in its byte bound', () => {
  it('spans with large resources of their own fill the bound and evict, as their memory does', () => {
    const maxBytes = 2_000_000;
    const store = new TraceStore({ maxSpans: 1e6, maxBytes, maxAgeMs: 3600_000 }, Date.now, {
      enabled: false,
      sliceMs: 1,
      quietMs: 1,
    });
    const now = Date.now();
    let resourceChars = 0;
    for (let i = 0; i < 200; i++) {
      // One request per span, each with its own 10 KB resource (what an exporter per pod sends).
      const resource: Record<string, string> = { 'service.name': 'svc' };
      for (let j = 0; j < 100; j++) resource[`r.attr${j}`] = `${i}`.padEnd(100, 'x');
      resourceChars += 100 * (100 + 7);
      const span: Span = {
        traceId: (i + 1).toString(16).padStart(32, '0'),
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: 'op',
        service: 'svc',
        kind: 'server',
        startMs: now,
        endMs: now + 1,
        status: 'ok',
        attributes: {},
        resource,
      };
      store.add([span]);
    }
    assert.ok(resourceChars > maxBytes, 'the resources alone exceed the bound');
    assert.ok(store.size.bytes <= maxBytes, `${store.size.bytes} bytes held`);
    assert.ok(store.evicted.capacity > 0, 'evicted for capacity');
    // What is held is counted with its resource: at least the resource text of the traces kept.
    assert.ok(
      store.size.bytes >= store.size.traces * 100 * 107,
      `${store.size.bytes} bytes for ${store.size.traces} traces`
    );
  });
});

describe('bodies in flight are bounded: 503 with Retry-After past the budget', () => {
  let proxy: RunningProxy;
  const limit = 64 * 1024;
  before(async () => {
    proxy = await startProxy({ port: 0, ...none, bodyLimitBytes: limit });
  });
  after(() => proxy.close());

  it(`${BODY_BUDGET_BODIES} bodies of the largest size are received at once; one more is told to retry, and admitted once they are done`, async () => {
    const port = Number(new URL(proxy.url).port);
    const { connect } = await import('node:net');
    // Uploads that declare the largest body and send only part of it: they hold the budget.
    const holders = await Promise.all(
      Array.from(
        { length: BODY_BUDGET_BODIES },
        () =>
          new Promise<import('node:net').Socket>((resolve) => {
            const s = connect(port, '127.0.0.1', () => {
              s.write(
                `POST /v1/traces HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${limit}\r\n\r\n{"resourceSpans":`
              );
              setTimeout(() => resolve(s), 100);
            });
            s.on('error', () => {});
          })
      )
    );
    const body = JSON.stringify(otlp(chainTrace(9, Date.now(), 10)));
    for (const path of ['/v1/traces', '/api/rca']) {
      const r = await rawRequest(port, requestBytes('POST', path, { 'content-type': 'application/json' }, body), 5000);
      assert.equal(r.status, 503, `${path}: ${r.status} ${r.body.toString()}`);
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(JSON.parse(r.body.toString()).error.code, 'overloaded');
    }
    // A GET has no body: never refused by the budget.
    assert.equal((await rawRequest(port, requestBytes('GET', '/api/health'), 5000)).status, 200);
    for (const s of holders) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const ok = await rawRequest(
      port,
      requestBytes('POST', '/v1/traces', { 'content-type': 'application/json' }, body),
      5000
    );
    assert.equal(ok.status, 200, ok.body.toString());
  });
});

describe('DNS rebinding: without a token, only loopback Host headers are served', () => {
  let open: RunningProxy;
  let tokened: RunningProxy;
  before(async () => {
    open = await startProxy({ port: 0, ...none });
    tokened = await startProxy({ port: 0, ...none, token: 'sekret' });
  });
  after(async () => {
    await open.close();
    await tokened.close();
  });

  it('a foreign Host is a 403 on every path; loopback names pass', async () => {
    const port = Number(new URL(open.url).port);
    for (const host of [
      'evil.example',
      'attacker.example:3301',
      '127.0.0.1.evil.example',
      '0.0.0.0',
      '10.0.0.1',
      '[::2]',
    ]) {
      for (const path of ['/api/health', '/metrics', '/v1/traces', '/api/nope']) {
        const r = await rawRequest(port, requestBytes('GET', path, { host }), 5000);
        assert.equal(r.status, 403, `${host} ${path}: ${r.status}`);
        assert.equal(JSON.parse(r.body.toString()).error.code, 'forbidden_host');
      }
    }
    for (const host of [
      '127.0.0.1',
      `127.0.0.1:${port}`,
      'localhost',
      `localhost:${port}`,
      'app.localhost',
      '[::1]',
      `[::1]:${port}`,
      '127.1.2.3',
    ]) {
      const r = await rawRequest(port, requestBytes('GET', '/api/health', { host }), 5000);
      assert.equal(r.status, 200, `${host}: ${r.status}`);
    }
  });

  it('with a token, any Host reaches the token check', async () => {
    const port = Number(new URL(tokened.url).port);
    const r = await rawRequest(
      port,
      requestBytes('GET', '/api/health', {
        host: 'hopscope-backend-proxy.hopscope.svc:3301',
        authorization: 'Bearer sekret',
      }),
      5000
    );
    assert.equal(r.status, 200);
    assert.equal(
      (await rawRequest(port, requestBytes('GET', '/api/health', { host: 'evil.example' }), 5000)).status,
      401
    );
  });
});

describe('PNG rendering has a concurrency cap', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'png-cap-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`at most ${PNG_RENDERS_AT_ONCE} Chromiums at once, ${PNG_RENDERS_WAITING} waiting, the rest 503 with Retry-After`, async () => {
    // A stand-in Chromium that notes when it runs and exits without ever serving DevTools (each launch then fails).
    const log = join(dir, 'runs.log');
    const fake = join(dir, 'chromium');
    writeFileSync(
      fake,
      `#!/bin/sh\necho "start $$ $(date +%s%N)" >> ${log}\nsleep 0.7\necho "end $$ $(date +%s%N)" >> ${log}\nexit 1\n`
    );
    chmodSync(fake, 0o755);
    const svc = new ExportService(
      { appUrl: 'http://127.0.0.1:9', chromiumPath: fake },
      { rca: undefined as never, alerts: undefined as never, faults: undefined as never, exporters: [] }
    );
    const n = PNG_RENDERS_AT_ONCE + PNG_RENDERS_WAITING + 3;
    const outcomes = await Promise.all(
      Array.from({ length: n }, () =>
        svc.png('/a/hopscope-rca-app/overview').then(
          () => 'ok',
          // The service's refusal as the HTTP layer answers it.
          (e: unknown) => (e instanceof DomainError ? httpErrorOf(e) : e)
        )
      )
    );
    const refused = outcomes.filter((o) => o instanceof HttpError && o.status === 503);
    assert.equal(
      refused.length,
      3,
      outcomes.map((o) => (o instanceof HttpError ? `${o.status} ${o.message}` : o)).join('\n')
    );
    for (const e of refused as HttpError[]) assert.equal(e.headers?.['Retry-After'], '5');
    const failed = outcomes.filter((o) => o instanceof HttpError && o.status === 502);
    assert.equal(
      failed.length,
      PNG_RENDERS_AT_ONCE + PNG_RENDERS_WAITING,
      'the admitted ones ran (and failed: no real Chromium)'
    );
    // Never more than the cap running at the same time.
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([kind, , t]) => ({ kind, t: BigInt(t) }))
      .sort((a, b) => (a.t < b.t ? -1 : 1));
    let running = 0;
    let peak = 0;
    for (const e of events) {
      running += e.kind === 'start' ? 1 : -1;
      peak = Math.max(peak, running);
    }
    assert.equal(events.filter((e) => e.kind === 'start').length, PNG_RENDERS_AT_ONCE + PNG_RENDERS_WAITING);
    assert.ok(peak <= PNG_RENDERS_AT_ONCE, `${peak} Chromiums at once`);
  });
});
