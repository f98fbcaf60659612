/** Starts the proxy as its own process (as in production) on a free port, for benchmarks; resolves with its URL. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export async function startProxyProcess(env: Record<string, string>): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../backend-proxy/src/main.ts')], {
    env: { ...process.env, HOPSCOPE_PROXY_PORT: '0', HOPSCOPE_LOG_LEVEL: 'warn', HOPSCOPE_ALERT_INTERVAL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`proxy exited (${code}) before listening`)));
  });
  return {
    url, pid: child.pid!,
    stop: () => new Promise((r) => { if (child.exitCode !== null) return r(); child.once('exit', () => r()); child.kill('SIGTERM'); }),
  };
}
