/**
 * Starts the proxy as its own process on a free port, for benchmarks; resolves with its URL.
 * As deployed: the bundle built by backend-proxy/Dockerfile's own esbuild command (read from the Dockerfile, output
 * to a temp dir, built once per bench process), run by plain node with NODE_ENV=production as in the image — not
 * `node --import tsx` on the sources, whose loader and development defaults are not what production runs.
 * HOPSCOPE_BENCH_PROXY=source runs the sources under tsx instead (to compare).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
let bundled: { entry: string; env: Record<string, string> } | undefined;

/**
 * Runs the Dockerfile's `RUN npx esbuild …` (continuations joined; its `&& node … --help` check dropped) into a temp
 * dir, and lays out beside the bundle what the runtime stage copies from the build's node_modules (the packages left
 * out of the bundle, e.g. @electric-sql/pglite): linked from this checkout's node_modules, so the bundle resolves them
 * as in the image.
 */
function deployedBundle(): { entry: string; env: Record<string, string> } {
  if (bundled) return bundled;
  const text = readFileSync(join(root, 'backend-proxy/Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const run = /^RUN\s+(npx esbuild .*)$/m.exec(text)?.[1];
  const env = /^ENV\s+(.*)$/m.exec(text)?.[1];
  if (!run) throw new Error('backend-proxy/Dockerfile: no `RUN npx esbuild` line to bundle the proxy with');
  const out = mkdtempSync(join(tmpdir(), 'hopscope-proxy-bundle-'));
  process.once('exit', () => rmSync(out, { recursive: true, force: true }));
  const cmd = run.split(' && ')[0].replaceAll('/out', out);
  execFileSync('sh', ['-c', cmd], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH}` },
  });
  for (const m of text.matchAll(/^COPY\s+--from=build\s+\/src\/(node_modules\/\S+)\s+\/app\/(\S+)$/gm)) {
    const dest = join(out, m[2]);
    mkdirSync(dirname(dest), { recursive: true });
    symlinkSync(join(root, m[1]), dest, 'dir');
  }
  bundled = {
    entry: join(out, 'main.mjs'),
    env: Object.fromEntries([...(env ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])),
  };
  return bundled;
}

export async function startProxyProcess(
  env: Record<string, string>
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const fromSource = process.env.HOPSCOPE_BENCH_PROXY === 'source';
  const deployed = fromSource ? undefined : deployedBundle();
  const args = deployed ? [deployed.entry] : ['--import', 'tsx', join(root, 'backend-proxy/src/main.ts')];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      ...deployed?.env,
      HOPSCOPE_PROXY_PORT: '0',
      HOPSCOPE_LOG_LEVEL: 'warn',
      HOPSCOPE_ALERT_INTERVAL_MS: '0',
      ...env,
    },
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
    url,
    pid: child.pid!,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}
