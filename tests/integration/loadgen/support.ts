/** Helpers for the chain's integration tests: an OTLP/HTTP JSON collector, a real Prometheus, small HTTP calls. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: number;
  startMs: number;
  endMs: number;
}

const b64hex = (v: string): string =>
  /^[0-9a-f]+$/i.test(v) ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex');
function attrs(list: Array<{ key: string; value: Record<string, unknown> }> = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list) {
    const v =
      value.stringValue ??
      value.intValue ??
      value.doubleValue ??
      value.boolValue ??
      (value.arrayValue as { values?: Array<Record<string, unknown>> })?.values?.map(
        (x) => x.stringValue ?? x.intValue
      );
    out[key] = typeof v === 'string' && /^\d+$/.test(v) && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

/** A tiny OTLP/HTTP receiver (JSON, what @opentelemetry/exporter-trace-otlp-http sends). */
export async function otlpCollector(): Promise<{ url: string; spans: CollectedSpan[]; close(): Promise<void> }> {
  const spans: CollectedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        for (const rs of body.resourceSpans ?? []) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: b64hex(s.traceId),
                spanId: b64hex(s.spanId),
                parentSpanId: s.parentSpanId ? b64hex(s.parentSpanId) : undefined,
                name: s.name,
                kind: s.kind,
                service: String(resource['service.name']),
                resource,
                attributes: attrs(s.attributes),
                events: (s.events ?? []).map((e: { name: string; attributes: never }) => ({
                  name: e.name,
                  attributes: attrs(e.attributes),
                })),
                status: s.status?.code ?? 0,
                startMs: Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000,
                endMs: Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      } catch (err) {
        res.writeHead(400);
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export const PROMETHEUS_BIN = '/usr/bin/prometheus';

/**
 * A real Prometheus (Debian package) scraping the chain through its http_sd /targets, every second, storing exemplars
 * (as the deployed one does: docker-compose's --enable-feature=exemplar-storage).
 * `relabelConfigs`: the chain job's relabel_configs (e.g. the deploy config's, to test what it produces).
 * `scrapeConfigs`: further scrape jobs, each a Prometheus scrape_config object (e.g. a deploy job aimed at a test's port).
 */
export async function startPrometheus(
  sdUrl: string,
  opts: { relabelConfigs?: unknown[]; scrapeConfigs?: unknown[] } = {}
): Promise<{ url: string; stop(): Promise<void>; query(q: string): Promise<any[]>; api(path: string): Promise<any> }> {
  const dir = mkdtempSync(join(tmpdir(), 'lg-prom-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 5s }',
      'scrape_configs:',
      '  - job_name: hopscope-chain',
      '    http_sd_configs: [{ url: "' + sdUrl + '", refresh_interval: 1s }]',
      // JSON is YAML flow syntax.
      ...(opts.relabelConfigs ? [`    relabel_configs: ${JSON.stringify(opts.relabelConfigs)}`] : []),
      ...(opts.scrapeConfigs ?? []).map((job) => `  - ${JSON.stringify(job)}`),
    ].join('\n')
  );
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      /* starting */
    }
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`prometheus did not start: ${stderr.slice(-500)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const api = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    api,
    query: async (q: string) => (await api(`/api/v1/query?query=${encodeURIComponent(q)}`)).result,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => {
          child.once('exit', r);
          setTimeout(r, 5000);
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const havePrometheus = (): boolean => existsSync(PROMETHEUS_BIN);

export async function chat(
  gateway: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {}
): Promise<{ status: number; text: string; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${gateway}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model: 'hopscope-llama-8b-v1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'How does the KV cache affect latency?' }],
      ...body,
    }),
  });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - t0 };
}

export { waitFor } from '../../support/wait';

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
