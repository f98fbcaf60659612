/**
 * The proxy as `npm start` runs it: its CLI (backend-proxy/src/main.ts) in a child process, so a crash is a crash, its
 * RSS is its own, and SIGKILL is real. Reads the URL from its start line; keeps the tail of its output for messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '..', '..', '..', '..', 'backend-proxy', 'src', 'main.ts');

export interface ProxyProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Resident set size now, bytes (from /proc). */
  rss(): number;
  /** The last lines it printed (stdout and stderr). */
  output(): string;
  /** Whether it has exited, and how. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** SIGTERM and wait (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL and wait. */
  kill9(): Promise<void>;
}

export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Starts the proxy CLI with `env` (on top of a quiet, isolated default) and waits for its start line. */
export async function startProxyProcess(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  timeoutMs = 60_000
): Promise<ProxyProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, MAIN], {
    env: {
      ...process.env,
      HOPSCOPE_PROXY_PORT: '0',
      HOPSCOPE_PROXY_HOST: '127.0.0.1',
      HOPSCOPE_LOG_LEVEL: 'warn',
      HOPSCOPE_CHAIN_CONTROL_URL: 'none',
      HOPSCOPE_ALERT_INTERVAL_MS: '0',
      HOPSCOPE_CHROMIUM: '/nonexistent/chromium',
      HOPSCOPE_TEST_STAGE: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const keep = (d: Buffer): void => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exitedP = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    })
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`proxy did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const look = (): void => {
      const m = /hopscope-proxy listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', look);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`proxy exited (${code ?? signal}) before it listened:\n${out}`));
    });
  });
  const waitExit = async (ms: number): Promise<boolean> => {
    if (exit) return true;
    return Promise.race([
      exitedP.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
    ]);
  };
  return {
    url,
    port: Number(new URL(url).port),
    child,
    rss: () => rssOf(child.pid!),
    output: () => out,
    exited: () => exit,
    async stop() {
      if (exit) return;
      child.kill('SIGTERM');
      if (!(await waitExit(10_000))) {
        child.kill('SIGKILL');
        await exitedP;
      }
    },
    async kill9() {
      if (exit) return;
      child.kill('SIGKILL');
      await exitedP;
    },
  };
}
