/**
 * Starts a real Prometheus or Alertmanager (Debian binaries) on a free loopback port with a temp dir, ready when it
 * says so (/-/ready); stopped with SIGTERM (SIGKILL after 5 s), its temp dir removed. Prometheus' command line is the
 * demo's (scripts/demo-parts/prometheus.ts prometheusArgs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prometheusArgs } from '../../scripts/demo-parts/prometheus';

/** Binds port 0 to learn a free port (Prometheus itself cannot listen on 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RealServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  dir: string;
  child: ChildProcess;
}

async function waitReady(url: string, child: ChildProcess, what: string, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  while (Date.now() - t0 < timeoutMs) {
    if (exited) throw new Error(`${what} exited before it was ready`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

function stopper(child: ChildProcess, dir: string): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
      setTimeout(() => {
        if (child.exitCode === null) child.kill('SIGKILL');
      }, 5000).unref();
    });
}

/** `targets`: host:port strings, or with the target labels a service discovery would give (`pod`, `service`). */
export function startPrometheus(
  targets: Array<string | { target: string; labels: Record<string, string> }>,
  scrapeInterval = '1s'
): Promise<RealServer> {
  return startPrometheusWith(staticConfig(targets, scrapeInterval));
}

/** A prometheus.yml scraping `targets` (job `chain`) every `scrapeInterval`. */
export function staticConfig(
  targets: Array<string | { target: string; labels: Record<string, string> }>,
  scrapeInterval: string
): string {
  const plain = targets.filter((t): t is string => typeof t === 'string');
  const labelled = targets.filter(
    (t): t is { target: string; labels: Record<string, string> } => typeof t !== 'string'
  );
  const statics = [
    ...(plain.length || !labelled.length ? [`      - targets: [${plain.map((t) => `'${t}'`).join(', ')}]\n`] : []),
    ...labelled.map(
      (t) =>
        `      - targets: ['${t.target}']\n        labels: {${Object.entries(t.labels)
          .map(([k, v]) => `${k}: '${v}'`)
          .join(', ')}}\n`
    ),
  ];
  return `global:\n  scrape_interval: ${scrapeInterval}\n  evaluation_interval: ${scrapeInterval}\nscrape_configs:\n  - job_name: chain\n    static_configs:\n${statics.join('')}`;
}

/**
 * A real Prometheus on `config` (a prometheus.yml text: its global settings and scrape jobs), on `port` when the
 * caller had to know it before (a proxy told its URL), else on a free one.
 */
export async function startPrometheusWith(config: string, knownPort?: number): Promise<RealServer> {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-prom-'));
  const port = knownPort ?? (await freePort());
  writeFileSync(join(dir, 'prometheus.yml'), config);
  return startReady(
    'prometheus',
    '/usr/bin/prometheus',
    prometheusArgs({ config: join(dir, 'prometheus.yml'), data: join(dir, 'data'), port, retention: '1h' }),
    dir,
    port
  );
}

/** `bin args` on `port`, ready once its /-/ready answers (its stderr in the error when it never does). */
async function startReady(what: string, bin: string, args: string[], dir: string, port: number): Promise<RealServer> {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${url}/-/ready`, child, what);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}: ${stderr}`);
  }
  return { url, port, dir, child, stop: stopper(child, dir) };
}

export async function startAlertmanager(): Promise<RealServer> {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-am-'));
  const port = await freePort();
  const clusterPort = await freePort();
  writeFileSync(join(dir, 'am.yml'), 'route:\n  receiver: none\n  group_wait: 1s\nreceivers:\n  - name: none\n');
  return startReady(
    'alertmanager',
    '/usr/bin/prometheus-alertmanager',
    [
      `--config.file=${join(dir, 'am.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--cluster.listen-address=127.0.0.1:${clusterPort}`,
      '--cluster.advertise-address=127.0.0.1:' + clusterPort,
      '--log.level=warn',
    ],
    dir,
    port
  );
}
