/**
 * A seeded generator of malformed, oversized and odd requests across every route of the proxy: bad times and
 * numbers in every query parameter, repeated and bracketed parameters, bad path segments, deeply nested and
 * truncated JSON, wrong content types and encodings (gzip garbage, a gzip bomb), OTLP protobuf that is random,
 * truncated, lies about lengths or floods elements, bad methods, malformed request lines and headers, huge headers,
 * lying Content-Length, broken chunking, foreign Host headers. The same seed gives the same requests.
 */
import { gzipSync } from 'node:zlib';
import { encodeOtlpProtobuf } from '../../../support/otlp-encode';
import { chainTrace, hex, otlp } from '../../../support/otlp-spans';
import { requestBytes } from './raw-http';
import { seededRandom } from '../../../../loadgen/src/shared/random';

/** mulberry32 (the chain's seeded randomness), so a seed reproduces a fuzz run. */
export const prng = seededRandom;

export interface FuzzCase {
  /** What the case is, for reports (`GET /api/golden from=9e15`). */
  label: string;
  bytes: Buffer;
}

const NOW = Date.now();

/** Values that have broken parsers before: absurd times, numbers, encodings, markup. */
const NASTY = [
  '',
  ' ',
  '9e15',
  '9000000000000000',
  '-9000000000000000',
  '8640000000000001',
  'now-1000000000w',
  'now+1000000000w',
  'now-99999999999999999999d',
  'now-0s',
  'now-',
  'now--5m',
  'NaN',
  'Infinity',
  '-Infinity',
  '-1',
  '0',
  '1e308',
  '1'.repeat(400),
  '0x10',
  '1_000',
  '2024-13-45T99:99:99Z',
  '99999-01-01',
  '+275760-09-13T00:00:00.001Z',
  '1970-01-01',
  '0000-00-00',
  '%00',
  '%ff%fe',
  '%E0%A4%A',
  '..%2F..%2Fetc%2Fpasswd',
  '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
  '%60md%60%5D(x)',
  'a'.repeat(5000),
  '%F0%9F%92%A5',
  '%E2%80%AE',
  '%0d%0aX-Injected:%201',
  'now-15m',
  'now',
  String(NOW),
  String(NOW - 3600_000),
  String(Math.floor(NOW / 1000)),
  '1.5',
  '-0',
  'true',
  'null',
  '[]',
  '{}',
  'vllm',
  'tgi',
  'backend:vllm',
  'backend:tgi,model:x',
  'service:rag',
  'backend:nope',
  'model:' + 'x'.repeat(300),
  ',,,',
  'a=b=c',
  'md',
  'png',
  '/a/hopscope-rca-app/overview',
  '//evil.example/x',
  '/a/hopscope-rca-app/traces/x?from=1&to=2',
  'tcp_retransmit',
  'recent',
  'duration',
  'error',
  '1s',
  '0s',
  '0.0001s',
  '1w',
];

const PARAMS = [
  'from',
  'to',
  'step',
  'service',
  'backend',
  'model',
  'pod',
  'namespace',
  'type',
  'limit',
  'minDurationMs',
  'maxDurationMs',
  'status',
  'sort',
  'maxTraces',
  'a',
  'b',
  'buckets',
  'format',
  'view',
  'traceId',
  'evaluate',
  'scenario',
  'offset',
];

interface Route {
  method: string;
  path: (r: R) => string;
  params?: string[];
  body?: (r: R) => Body;
}
interface Body {
  type?: string;
  encoding?: string;
  data: Buffer;
}
interface R {
  pick<T>(xs: readonly T[]): T;
  int(n: number): number;
  chance(p: number): boolean;
  traceId(): string;
}

const seg = (r: R): string =>
  r.pick([
    'rag',
    'gateway',
    'llm-vllm',
    'rag-0',
    '..',
    '%2e%2e',
    'a'.repeat(300),
    '%00',
    '%ZZ',
    '💥',
    'a b',
    'x%2Fy',
    '',
    '.',
    '*',
    'ok_name-1.2:3/x',
  ]);

const json = (v: unknown): Body => ({ type: 'application/json', data: Buffer.from(JSON.stringify(v)) });

/** `depth` levels of nesting, built as text (JSON.stringify would itself recurse that deep). */
export function deepJson(depth: number, kind: 'array' | 'object' | 'kvlist'): string {
  if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  // Nested OTLP kvlist values inside a span attribute: the shape a normaliser recurses on.
  const open = '{"kvlistValue":{"values":[{"key":"k","value":'.repeat(depth);
  const close = '}]}}'.repeat(depth);
  return `{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"spans":[{"traceId":"${hex(1, 32)}","spanId":"${hex(1, 16)}","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"deep","value":${open}{"stringValue":"x"}${close}}]}]}]}]}`;
}

function validOtlp(r: R): unknown {
  return otlp(
    Array.from({ length: 1 + r.int(5) }, (_, i) =>
      chainTrace(r.int(1000) + i, NOW - 60_000 + r.int(50_000), 50 + r.int(2000), r.pick([0, 1, 2] as const))
    ).flat()
  );
}

/** A protobuf varint. */
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
const field = (no: number, payload: Buffer): Buffer =>
  Buffer.concat([varint((no << 3) | 2), varint(payload.length), payload]);

/** One ResourceSpans holding `n` empty spans: a few bytes each on the wire, an object each once decoded. */
export function spanFlood(n: number): Buffer {
  const spans = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    spans[2 * i] = 0x12;
    spans[2 * i + 1] = 0;
  } // ScopeSpans.spans (field 2), empty
  return field(1, field(2, spans));
}

/** One span with `n` empty attributes (KeyValue, field 9). */
export function attributeFlood(n: number): Buffer {
  const attrs = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    attrs[2 * i] = 0x4a;
    attrs[2 * i + 1] = 0;
  }
  return field(1, field(2, field(2, attrs)));
}

function otlpBody(r: R): Body {
  const proto = 'application/x-protobuf';
  switch (r.int(16)) {
    case 0:
      return json(validOtlp(r));
    case 1:
      return { type: proto, data: Buffer.from(encodeOtlpProtobuf(validOtlp(r))) };
    case 2:
      return { type: proto, data: Buffer.from(Array.from({ length: 1 + r.int(4000) }, () => r.int(256))) };
    case 3: {
      const b = Buffer.from(encodeOtlpProtobuf(validOtlp(r)));
      return { type: proto, data: b.subarray(0, r.int(b.length)) };
    }
    case 4:
      return { type: proto, data: Buffer.concat([Buffer.from([0x0a]), varint(2 ** 31 - 1), Buffer.alloc(10)]) };
    case 5:
      return { type: proto, data: spanFlood(200_000 + r.int(300_000)) };
    case 6:
      return { type: proto, data: attributeFlood(200_000 + r.int(300_000)) };
    case 7:
      return {
        type: 'application/json',
        data: Buffer.from(deepJson(10_000, r.pick(['array', 'object', 'kvlist'] as const))),
      };
    case 8:
      return { type: 'application/json', data: Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":') };
    case 9:
      return {
        type: r.pick([
          'text/plain',
          '',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/json; charset=utf-16',
        ]),
        data: Buffer.from(JSON.stringify(validOtlp(r))),
      };
    case 10:
      return { type: 'application/json', encoding: 'gzip', data: gzipSync(JSON.stringify(validOtlp(r))) };
    case 11:
      return {
        type: proto,
        encoding: r.pick(['gzip', 'deflate', 'br', 'zstd', 'gzip, gzip', 'identity, x']),
        data: Buffer.from('definitely not compressed'),
      };
    case 12:
      return { type: proto, encoding: 'gzip', data: gzipSync(Buffer.alloc(64 * 1024 * 1024)) };
    case 13:
      return json({
        resourceSpans: [
          {
            resource: {
              attributes: Array.from({ length: 5000 }, (_, i) => ({
                key: `k${i}`,
                value: { stringValue: 'v'.repeat(100) },
              })),
            },
            scopeSpans: [{ spans: [] }],
          },
        ],
      });
    case 14:
      return json(
        r.pick([
          null,
          1,
          'x',
          [],
          {},
          { resourceSpans: 'x' },
          { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'zz' }] }] }] },
          { batches: [[]] },
          { trace: [] },
        ])
      );
    default:
      return { type: 'application/json', data: Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0xfe, 0x7b, 0x7d]) };
  }
}

function rcaBody(r: R): Body {
  switch (r.int(9)) {
    case 0:
      return json({ traces: validOtlp(r) });
    case 1:
      return {
        type: 'application/json',
        data: Buffer.from(`{"traces":${deepJson(10_000, r.pick(['array', 'object', 'kvlist'] as const))}}`),
      };
    case 2:
      return { type: 'application/json', data: Buffer.from(deepJson(10_000, r.pick(['array', 'object'] as const))) };
    case 3:
      return json({
        traces: validOtlp(r),
        baseline: r.pick([null, 1, 'x', [], validOtlp(r)]),
        config: r.pick([undefined, {}, { slo: 'x' }, { lambda: { embedding: -1 } }, []]),
      });
    case 4:
      return json({
        traces: validOtlp(r),
        kernelEvents: r.pick([
          [{}],
          [{ ts: 'x' }],
          'x',
          Array.from({ length: 50 }, (_, i) => ({
            ts: NOW - i,
            type: 'tcp_retransmit',
            pid: i,
            comm: 'x',
            detail: {},
            mode: 'live',
          })),
        ]),
      });
    case 5:
      return json(r.pick([null, 1, 'x', [], {}, { traces: null }, { traces: [] }, { traces: { resourceSpans: [] } }]));
    case 6:
      return {
        type: 'application/json',
        encoding: 'gzip',
        data: gzipSync(Buffer.from(`{"traces":${'['.repeat(50_000)}`)),
      };
    case 7:
      return { type: r.pick(['text/plain', 'application/x-www-form-urlencoded', '']), data: Buffer.from('traces=1') };
    default:
      return { type: 'application/json', data: Buffer.from('{"traces": {"resourceSpans": [ }') };
  }
}

function runBody(r: R): Body {
  return json(
    r.pick([
      {},
      null,
      [],
      { runId: 'x', scenario: 's', workerId: 'w', startMs: r.pick([NOW, 9e15, -1, 'x']), target: 't', options: {} },
      {
        runId: `fuzz-${r.int(1e6)}`,
        scenario: 'fuzz',
        workerId: 'w1',
        startMs: r.pick([NOW, 8.64e15, 9e15, -8.64e15, 1e308]),
        target: 'http://x',
        options: { a: 1 },
      },
      { workerId: 'w1', sent: -1, completed: 'x', errors: 0, inFlight: 0 },
      { workerId: 'w1', sent: 1, completed: 1, errors: 0, inFlight: 0 },
      { workerId: 'w1', endMs: r.pick([NOW, 9e15, -1e20]), status: 'passed', summary: {} },
    ])
  );
}

function alertBody(r: R): Body {
  return r.chance(0.2)
    ? { type: 'application/json', data: Buffer.from(deepJson(10_000, 'object')) }
    : json(
        r.pick([
          {},
          { rules: 'x' },
          { rules: [{}] },
          { rules: [{ id: '<x>', name: 'n', conditions: [] }] },
          { rules: [], expectedVersion: -1 },
        ])
      );
}

const ROUTES: Route[] = [
  { method: 'GET', path: () => '/api/health' },
  { method: 'GET', path: () => '/api/golden', params: ['from', 'to', 'step', 'service', 'backend', 'model'] },
  { method: 'GET', path: () => '/api/gpu/heatmap', params: ['from', 'to', 'step', 'pod', 'namespace'] },
  { method: 'GET', path: () => '/api/services', params: ['from', 'to'] },
  { method: 'GET', path: (r) => `/api/services/${seg(r)}/pods`, params: ['from', 'to'] },
  { method: 'GET', path: (r) => `/api/pods/${seg(r)}/kernel-events`, params: ['from', 'to', 'type', 'limit'] },
  { method: 'GET', path: () => '/api/annotations', params: ['from', 'to'] },
  {
    method: 'GET',
    path: () => '/api/traces',
    params: ['from', 'to', 'service', 'minDurationMs', 'maxDurationMs', 'status', 'limit', 'sort'],
  },
  { method: 'GET', path: (r) => `/api/traces/${r.chance(0.5) ? r.traceId() : seg(r)}` },
  { method: 'GET', path: (r) => `/api/traces/${r.chance(0.5) ? r.traceId() : seg(r)}/rca` },
  { method: 'GET', path: () => '/api/rca', params: ['from', 'to', 'service', 'maxTraces'] },
  { method: 'POST', path: () => '/api/rca', body: rcaBody },
  { method: 'GET', path: () => '/api/compare', params: ['a', 'b', 'from', 'to', 'buckets'] },
  { method: 'GET', path: () => '/api/alerts/rules' },
  { method: 'PUT', path: () => '/api/alerts/rules', body: alertBody },
  { method: 'GET', path: () => '/api/alerts', params: ['from', 'to', 'evaluate'] },
  {
    method: 'GET',
    path: () => '/api/export/postmortem',
    params: ['format', 'from', 'to', 'view', 'traceId', 'service', 'pod'],
  },
  { method: 'GET', path: () => '/api/runs', params: ['from', 'to', 'scenario', 'status', 'limit', 'offset'] },
  { method: 'POST', path: () => '/api/runs', body: runBody },
  {
    method: 'POST',
    path: (r) => `/api/runs/${r.pick(['fuzz-1', 'x', '%00', '..', 'a'.repeat(200)])}/heartbeat`,
    body: runBody,
  },
  { method: 'POST', path: (r) => `/api/runs/${r.pick(['fuzz-1', 'x', '%00'])}/finish`, body: runBody },
  { method: 'GET', path: () => '/api/runs/targets' },
  { method: 'GET', path: (r) => `/api/runs/${r.pick(['fuzz-1', 'x', '%00', seg(r)])}` },
  { method: 'GET', path: (r) => `/api/runs/${r.pick(['fuzz-1', 'x'])}/compare/${r.pick(['fuzz-2', '%zz', '..'])}` },
  { method: 'POST', path: () => '/v1/traces', body: otlpBody },
  { method: 'GET', path: () => '/metrics' },
];

const GOOD: Record<string, () => string> = {
  from: () => 'now-15m',
  to: () => 'now',
  backend: () => 'vllm',
  format: () => 'md',
  a: () => 'backend:vllm',
  b: () => 'backend:tgi',
};

function query(r: R, names: string[]): string {
  const parts: string[] = [];
  for (const n of names) {
    if (r.chance(0.35)) continue;
    const v = r.chance(0.4) && GOOD[n] ? GOOD[n]() : r.pick(NASTY);
    parts.push(`${n}=${v}`);
    if (r.chance(0.05)) parts.push(`${n}=${r.pick(NASTY)}`); // given twice
  }
  if (r.chance(0.05)) parts.push(`${r.pick(PARAMS)}[]=1`, `${r.pick(PARAMS)}[x]=2`);
  if (r.chance(0.03)) parts.push(`x=${'y'.repeat(7000)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Requests no client library sends: bad request lines, headers, framing. */
function rawOddity(r: R, base: string): FuzzCase {
  const host = 'host: 127.0.0.1\r\nconnection: close\r\n';
  const cases: Array<[string, string | Buffer]> = [
    ['bad request line', 'GET\r\n\r\n'],
    ['unknown method', `FOO ${base} HTTP/1.1\r\n${host}\r\n`],
    ['lowercase method', `get ${base} HTTP/1.1\r\n${host}\r\n`],
    ['HTTP/0.9', `GET ${base}\r\n\r\n`],
    ['HTTP/2.0 over 1.1', `GET ${base} HTTP/2.0\r\n${host}\r\n`],
    ['header without colon', `GET ${base} HTTP/1.1\r\n${host}nocolon\r\n\r\n`],
    ['NUL in header', `GET ${base} HTTP/1.1\r\n${host}x-a: b\u0000c\r\n\r\n`],
    ['huge header', `GET ${base} HTTP/1.1\r\n${host}x-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    [
      'many headers',
      `GET ${base} HTTP/1.1\r\n${host}${Array.from({ length: 3000 }, (_, i) => `x-h${i}: v`).join('\r\n')}\r\n\r\n`,
    ],
    ['huge URL', `GET ${base}?q=${'a'.repeat(100_000)} HTTP/1.1\r\n${host}\r\n`],
    [
      'negative Content-Length',
      `POST /api/rca HTTP/1.1\r\n${host}content-type: application/json\r\ncontent-length: -1\r\n\r\n{}`,
    ],
    [
      'non-numeric Content-Length',
      `POST /v1/traces HTTP/1.1\r\n${host}content-type: application/json\r\ncontent-length: abc\r\n\r\n{}`,
    ],
    [
      'Content-Length and chunked',
      `POST /api/rca HTTP/1.1\r\n${host}content-type: application/json\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    ],
    [
      'bad chunk size',
      `POST /v1/traces HTTP/1.1\r\n${host}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
    [
      'short body',
      `POST /api/rca HTTP/1.1\r\n${host}content-type: application/json\r\ncontent-length: 5000\r\n\r\n{"traces":`,
    ],
    [
      'two Content-Length',
      `POST /api/rca HTTP/1.1\r\n${host}content-type: application/json\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}`,
    ],
    ['absolute URI', `GET http://evil.example${base} HTTP/1.1\r\n${host}\r\n`],
    ['asterisk target', `OPTIONS * HTTP/1.1\r\n${host}\r\n`],
    ['CONNECT', `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}\r\n`],
    ['foreign Host', `GET ${base} HTTP/1.1\r\nhost: evil.example\r\nconnection: close\r\n\r\n`],
    ['rebinding Host with port', `GET ${base} HTTP/1.1\r\nhost: attacker.example:3301\r\nconnection: close\r\n\r\n`],
    ['no Host', `GET ${base} HTTP/1.1\r\nconnection: close\r\n\r\n`],
    ['bare LF', `GET ${base} HTTP/1.1\n${host.replace(/\r/g, '')}\n`],
    ['obs-fold', `GET ${base} HTTP/1.1\r\n${host}x-a: b\r\n  folded\r\n\r\n`],
    [
      'expect 100',
      `POST /api/rca HTTP/1.1\r\n${host}content-type: application/json\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n{}`,
    ],
    ['upgrade', `GET ${base} HTTP/1.1\r\n${host}upgrade: websocket\r\nconnection: upgrade\r\n\r\n`],
    ['trace', `TRACE ${base} HTTP/1.1\r\n${host}\r\n`],
    ['garbage', Buffer.from(Array.from({ length: 1 + r.int(2000) }, () => r.int(256)))],
  ];
  const [label, bytes] = r.pick(cases);
  return { label: `raw: ${label} (${base})`, bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1') };
}

/** `n` cases from `seed`; `traceIds` are real ids the store holds, so some requests reach deep code. */
export function fuzzCases(seed: number, n: number, traceIds: string[]): FuzzCase[] {
  const next = prng(seed);
  const r: R = {
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    int: (k: number) => Math.floor(next() * k),
    chance: (p: number) => next() < p,
    traceId: () =>
      traceIds.length && next() < 0.7
        ? traceIds[Math.floor(next() * traceIds.length)]
        : hex(Math.floor(next() * 1e9), 32),
  };
  const out: FuzzCase[] = [];
  // Every route that takes a time, with each absurd bound of the attack run, before the random part.
  const bounds = [
    'from=9000000000000000&to=9000000000000001',
    'from=now-1000000000w&to=now-999999999w',
    'from=9e15',
    'to=now%2B1000000000w',
    `from=${'9'.repeat(400)}&to=now`,
  ];
  for (const route of ROUTES.filter((x) => x.params?.includes('from'))) {
    for (const q of bounds) {
      const path = route.path({ ...r, pick: (xs) => xs[0], traceId: () => hex(1, 32) });
      const extra = path === '/api/compare' ? '&a=backend:vllm&b=backend:tgi' : '';
      out.push({ label: `${route.method} ${path} ${q}`, bytes: requestBytes(route.method, `${path}?${q}${extra}`) });
    }
  }
  for (let i = out.length; i < n; i++) {
    const route = r.pick(ROUTES);
    const path = route.path(r);
    if (r.chance(0.08)) {
      out.push(rawOddity(r, path));
      continue;
    }
    let method = route.method;
    if (r.chance(0.08)) method = r.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);
    if (r.chance(0.03)) {
      out.push({
        label: `unknown path ${method}`,
        bytes: requestBytes(method, `/${r.pick(['api', 'v1', 'x', 'api/x', 'metrics/x'])}/${seg(r)}/${r.int(1e6)}`),
      });
      continue;
    }
    const target = path + (route.params ? query(r, route.params) : '');
    const body =
      route.body && (method === 'POST' || method === 'PUT')
        ? route.body(r)
        : r.chance(0.05)
          ? { type: 'application/json', data: Buffer.from('{"x":') }
          : undefined;
    const headers: Record<string, string> = {};
    if (body?.type) headers['content-type'] = body.type;
    if (body?.encoding) headers['content-encoding'] = body.encoding;
    if (r.chance(0.05)) headers.authorization = r.pick(['Bearer ', 'Bearer x', 'Basic Zm9vOmJhcg==', 'x'.repeat(5000)]);
    if (r.chance(0.05))
      headers.traceparent = r.pick([
        '00-zz-yy-01',
        `00-${hex(1, 32)}-${hex(1, 16)}-01`,
        'x'.repeat(500),
        '00-00000000000000000000000000000000-0000000000000000-01',
      ]);
    if (r.chance(0.03)) headers.origin = r.pick(['http://evil.example', 'null']);
    if (r.chance(0.03)) headers.accept = r.pick(['image/png', '*/*;q=x', '']);
    out.push({
      label: `${method} ${route.path({ ...r, pick: (xs) => xs[0], traceId: () => ':id' })}${body ? ` [${body.type || 'no type'}${body.encoding ? `, ${body.encoding}` : ''}, ${body.data.length} B]` : ''}`,
      bytes: requestBytes(method, target, headers, body?.data),
    });
  }
  return out;
}
