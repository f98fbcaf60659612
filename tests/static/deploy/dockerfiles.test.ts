/**
 * The three Dockerfiles, checked without a Docker engine: multi-stage, pinned base images of a supported Node LTS line
 * with bundles that target a Node every supported one runs (the development machines' Node 20 included), non-root
 * where possible, the exporter with Debian's bpftrace, every COPY source present and not excluded by .dockerignore,
 * every package the bundle leaves out copied into the image — and the build stage's own bundling command run here,
 * outside Docker, with its output started (`--help`) from the runtime stage's file layout, so a broken entry point, an
 * unbundlable dependency or a package missing from the image fails this test rather than `docker build` or the container.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { exists, isPinnedImage, packageJson, readText, repo, root } from './support';

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Instructions of a Dockerfile (continuations joined, comments dropped), each with the index of its stage. */
function parseDockerfile(path: string): {
  instructions: Instruction[];
  stages: Array<{ image: string; name?: string }>;
  text: string;
} {
  const text = readText(path);
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const instructions: Instruction[] = [];
  const stages: Array<{ image: string; name?: string }> = [];
  for (const line of logical) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    assert.ok(m, `${path}: cannot read "${line}"`);
    if (m[1] === 'FROM') {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(m[2]);
      assert.ok(f, `${path}: FROM ${m[2]}`);
      stages.push({ image: f[1], name: f[2] });
    }
    instructions.push({ op: m[1], args: m[2], stage: stages.length - 1 });
  }
  return { instructions, stages, text };
}

/**
 * Node release lines with active or maintenance LTS support (nodejs.org/en/about/previous-releases): what the images
 * may run. 20 reached its end of life in April 2026; 22 is in maintenance until April 2027, 24 until April 2028.
 */
const SUPPORTED_LTS = [24, 26];
/** The oldest Node the code must keep running on: package.json engines, and what the development machines have. */
const OLDEST_NODE = 20;

/** Packages a bundle leaves out (--external) that the image does not ship, on purpose, with the reason the Dockerfile gives. */
const ABSENT_ON_PURPOSE: Record<string, RegExp> = {
  'playwright-core': /playwright-core: it drives Chromium for the PNG export, which this image does not ship/,
};

/** The build stage's esbuild command line(s). */
const esbuildRun = (df: ReturnType<typeof parseDockerfile>): Instruction | undefined =>
  df.instructions.find((i) => i.op === 'RUN' && i.stage === 0 && i.args.startsWith('npx esbuild'));

/** The build stage's bundling, run here: /out moved to `out`, a metafile per esbuild call; returns what the bundles read. */
function bundle(df: ReturnType<typeof parseDockerfile>, out: string): string[] {
  const run = esbuildRun(df);
  assert.ok(run, 'the build stage bundles with esbuild');
  let n = 0;
  // npx finds the repository's esbuild.
  const cmd = run.args
    .replaceAll('/out', out)
    .replace(/npx esbuild /g, () => `npx esbuild --metafile=${out}/meta-${n++}.json `);
  execFileSync('sh', ['-c', cmd], {
    cwd: root,
    stdio: 'pipe',
    timeout: 60_000,
    env: { ...process.env, PATH: `${repo('node_modules', '.bin')}:${process.env.PATH}` },
  });
  const inputs: string[] = [];
  for (let i = 0; i < n; i++)
    inputs.push(...Object.keys(JSON.parse(readFileSync(join(out, `meta-${i}.json`), 'utf8')).inputs));
  return inputs;
}

/** The runtime stage's files, laid out under `app` as its COPY --from=build lines put them (/out → the bundles here, /src → the repository). */
function layOutRuntime(df: ReturnType<typeof parseDockerfile>, out: string, app: string): void {
  const last = df.stages.length - 1;
  for (const c of df.instructions.filter((i) => i.op === 'COPY' && i.stage === last)) {
    const words = c.args.split(/\s+/).slice(1);
    const dest = words.at(-1)!;
    for (const src of words.slice(0, -1)) {
      const from = src.startsWith('/out/')
        ? join(out, src.slice(5))
        : src.startsWith('/src/')
          ? repo(src.slice(5))
          : undefined;
      assert.ok(from && existsSync(from), `COPY --from=build ${src}: the build stage makes it`);
      const to = dest.endsWith('/')
        ? join(app, dest.replace(/^\/app\/?/, ''), src.split('/').at(-1)!)
        : join(app, dest.replace(/^\/app\/?/, ''));
      mkdirSync(dirname(to), { recursive: true });
      cpSync(from, to, { recursive: true, dereference: true });
    }
  }
}

/** What the build stage made (bundled once per Dockerfile, shared by the tests that start it) and the runtime layout. */
interface Built {
  tmp: string;
  out: string;
  app: string;
  inputs: string[];
}
const builds = new Map<string, Built>();
after(() => {
  for (const b of builds.values()) rmSync(b.tmp, { recursive: true, force: true });
});
/** The build stage's bundling run here and the runtime stage laid out from it, once per Dockerfile. */
function built(file: string, df: ReturnType<typeof parseDockerfile>): Built {
  let b = builds.get(file);
  if (!b) {
    const tmp = mkdtempSync(join(tmpdir(), `hopscope-bundle-${process.pid}-`));
    const out = join(tmp, 'out');
    const app = join(tmp, 'app');
    b = { tmp, out, app, inputs: bundle(df, out) };
    builds.set(file, b);
    layOutRuntime(df, out, app);
  }
  return b;
}

/** Whether a path esbuild read (relative to the repository) is an installed package: node_modules may be a link. */
const installedPackages = (() => {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const modules = real(repo('node_modules'));
  return (input: string): boolean =>
    input.startsWith('node_modules/') || real(resolve(root, input)).startsWith(`${modules}${sep}`);
})();

const FILES = {
  'backend-proxy': 'backend-proxy/Dockerfile',
  'bpf-exporter': 'bpf-exporter/Dockerfile',
  loadgen: 'loadgen/Dockerfile',
} as const;

/** .dockerignore patterns as the builder reads them (the subset used here: names, dir/ prefixes, `**` prefixes, `*.ext`). */
function ignored(path: string): boolean {
  const patterns = readText('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return patterns.some((p) => {
    const re = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/^\*\*\//, '(.*/)?')
        .replace(/\*/g, '[^/]*')}(/.*)?$`
    );
    return re.test(path);
  });
}

/** Starts the proxy bundle on a data dir (port 0), waits until it listens, stops it; the data dir then holds its database. */
async function startsOnDataDir(bundleFile: string, dataDir: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  const child = spawn('node', [bundleFile], {
    cwd: dirname(bundleFile),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOPSCOPE_PROXY_PORT: '0',
      HOPSCOPE_DATA_DIR: dataDir,
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_EXPORTER_URLS: 'none',
      HOPSCOPE_CHAIN_CONTROL_URL: 'none',
      HOPSCOPE_ALERT_INTERVAL_MS: '0',
      HOPSCOPE_LOG_LEVEL: 'warn',
    },
  });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the proxy did not listen within 180 s:\n${output}`)), 180_000);
      const seen = (b: Buffer): void => {
        output += b;
        if (/listening on/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', (b: Buffer) => {
        output += b;
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the proxy exited (${code}):\n${output}`));
      });
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r)).catch(() => {});
  }
  assert.ok(
    existsSync(join(dataDir, 'pgdata', 'PG_VERSION')),
    `the proxy made its database in ${dataDir}/pgdata:\n${output}`
  );
}

describe('Dockerfiles', () => {
  for (const [part, file] of Object.entries(FILES)) {
    describe(file, () => {
      const df = parseDockerfile(file);
      const last = df.stages.length - 1;

      it('is multi-stage, every base image pinned by version, the same Node everywhere, of a supported LTS line', () => {
        assert.ok(df.stages.length >= 2, 'a build stage and a runtime stage');
        const names = new Set(df.stages.map((s) => s.name).filter(Boolean));
        for (const s of df.stages)
          if (!names.has(s.image)) assert.ok(isPinnedImage(s.image), `FROM ${s.image} is pinned`);
        const nodes = df.stages.map((s) => /^node:(\d+)\.\d+\.\d+-bookworm-slim$/.exec(s.image)?.[1]);
        assert.ok(
          nodes.every((n) => n !== undefined),
          'node:<x.y.z>-bookworm-slim'
        );
        assert.equal(new Set(df.stages.map((s) => s.image)).size, 1, 'build and runtime on the same Node');
        assert.ok(
          SUPPORTED_LTS.includes(Number(nodes[0])),
          `node ${nodes[0]} is a supported LTS line (${SUPPORTED_LTS.join(' or ')})`
        );
        assert.ok(
          Number(nodes[0]) >= Number(/\d+/.exec(packageJson().engines.node)![0]),
          'satisfies package.json engines'
        );
      });

      it("bundles for a Node range that holds both the image's Node and the oldest one the code supports", () => {
        const run = esbuildRun(df);
        assert.ok(run);
        const image = Number(/^node:(\d+)/.exec(df.stages[last].image)![1]);
        const targets = [...run.args.matchAll(/--target=(\S+)/g)].map((m) => m[1]);
        assert.equal(
          targets.length,
          (run.args.match(/npx esbuild /g) ?? []).length,
          'every esbuild call names its target'
        );
        for (const t of targets) {
          // esbuild's --target=nodeN emits only syntax Node N supports: the bundle runs on N and every later Node.
          const m = /^node(\d+)$/.exec(t);
          assert.ok(m, `--target=${t} is one Node version`);
          assert.ok(
            Number(m[1]) <= OLDEST_NODE && Number(m[1]) <= image,
            `node${m[1]}+ holds ${OLDEST_NODE} and ${image}`
          );
          assert.ok(
            Number(m[1]) >= Number(/\d+/.exec(packageJson().engines.node)![0]),
            'not older than package.json engines needs'
          );
        }
        assert.equal(
          Number(process.versions.node.split('.')[0]) >= OLDEST_NODE,
          true,
          'this machine runs a Node the bundles target (the bundle test below starts them on it)'
        );
      });

      it('ships every package the bundle leaves out (--external), except the ones absent on purpose', () => {
        const run = esbuildRun(df);
        assert.ok(run);
        const copies = df.instructions.filter((i) => i.op === 'COPY' && i.stage === last).map((i) => i.args);
        for (const ext of new Set([...run.args.matchAll(/--external:(\S+)/g)].map((m) => m[1]))) {
          if (ABSENT_ON_PURPOSE[ext]) {
            assert.match(
              df.text.replace(/\n#\s*/g, ' '),
              ABSENT_ON_PURPOSE[ext],
              `${ext}: the Dockerfile says why it is absent`
            );
            continue;
          }
          assert.ok(
            copies.includes(`--from=build /src/node_modules/${ext} /app/node_modules/${ext}`),
            `${ext} is copied whole into /app/node_modules`
          );
          assert.ok(packageJson().dependencies[ext], `${ext} is a dependency (npm ci installs it in the build stage)`);
        }
      });

      it('copies into the runtime stage only the built output (no sources, no node_modules but the packages left out of the bundle)', () => {
        const copies = df.instructions.filter((i) => i.op === 'COPY' && i.stage === last);
        assert.ok(copies.length > 0);
        for (const c of copies) {
          assert.match(c.args, /^--from=build\s/, `runtime COPY ${c.args}`);
          for (const src of c.args.split(/\s+/).slice(1, -1)) {
            const pkg = /^\/src\/node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(src)?.[1];
            assert.ok(
              src.startsWith('/out/') || (pkg && esbuildRun(df)?.args.includes(`--external:${pkg}`)),
              `runtime COPY ${src}: a bundle, or a package the bundle leaves out`
            );
          }
        }
      });

      it('copies only sources that exist and that .dockerignore lets through', () => {
        assert.ok(
          ignored('node_modules') && ignored('backend-proxy/node_modules') && ignored('.git') && ignored('dist')
        );
        for (const c of df.instructions.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
          const srcs = c.args.split(/\s+/).slice(0, -1);
          for (const s of srcs) {
            assert.ok(exists(s), `${s} exists`);
            assert.ok(!ignored(s), `${s} is not excluded by .dockerignore`);
          }
        }
      });

      it(
        part === 'bpf-exporter'
          ? 'runs as root on purpose (capabilities are granted to uid 0 only), with bpftrace from Debian'
          : 'runs as the unprivileged node user',
        () => {
          const users = df.instructions.filter((i) => i.op === 'USER' && i.stage === last).map((i) => i.args);
          if (part === 'bpf-exporter') {
            assert.deepEqual(users, ['root']);
            assert.match(df.text, /Root on purpose/);
            assert.ok(
              df.instructions.some(
                (i) => i.op === 'RUN' && i.stage === last && /apt-get install[^&]*\bbpftrace\b/.test(i.args)
              ),
              'apt-get install bpftrace'
            );
          } else {
            assert.deepEqual(users, ['node']);
          }
        }
      );

      if (part === 'loadgen') {
        it('installs the openssl CLI the chain uses for its TLS certificate', () => {
          assert.match(readText('loadgen', 'src', 'chain', 'tls.ts'), /execFileSync\(\s*'openssl'/);
          assert.ok(
            df.instructions.some(
              (i) => i.op === 'RUN' && i.stage === last && /apt-get install[^&]*\bopenssl\b/.test(i.args)
            )
          );
        });
      }

      it("its build-stage bundling command works here: the bundle starts from the runtime stage's layout and answers --help", () => {
        const run = esbuildRun(df);
        assert.ok(run, 'the build stage bundles with esbuild');
        const entries = [...run.args.matchAll(/(\w[\w-]*\/src\/[\w/.-]+?)(?:\.ts)?['\s;]/g)].map((m) => `${m[1]}.ts`);
        for (const e of entries) assert.ok(exists(e), `entry point ${e} exists`);
        // Bundled and laid out once for this Dockerfile (the database check below starts the same files).
        const { out, app, inputs } = built(file, df);
        // The image's build stage has only what was copied in (and node_modules from npm ci): the bundle must read nothing else.
        const copied = df.instructions
          .filter((i) => i.op === 'COPY' && i.stage === 0)
          .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
        assert.ok(inputs.length > 10);
        for (const input of inputs) {
          // load-entry.ts is the name given to the loadgen CLI's stdin entry (--sourcefile).
          const inside =
            installedPackages(input) ||
            input === '<stdin>' ||
            input === 'load-entry.ts' ||
            copied.some((c) => input === c || input.startsWith(`${c.replace(/\/$/, '')}/`));
          assert.ok(inside, `the bundle reads ${input}, which the build stage does not copy`);
        }
        const entrypoint = df.instructions.find((i) => i.op === 'ENTRYPOINT' && i.stage === last);
        assert.ok(entrypoint, 'ENTRYPOINT');
        const argv = JSON.parse(entrypoint.args) as string[];
        assert.equal(argv[0], 'node');
        // Started as the image starts it, from what the runtime stage holds (no repository node_modules above it).
        assert.ok(existsSync(out));
        const bundleFile = join(app, argv[1].replace(/^\/app\//, ''));
        assert.ok(existsSync(bundleFile), `${argv[1]} is copied into the image`);
        execFileSync('node', [bundleFile, '--help'], {
          cwd: app,
          stdio: 'pipe',
          timeout: 30_000,
          env: { PATH: process.env.PATH },
        });
      });

      if (part === 'backend-proxy') {
        it("its embedded database (PGlite, with its WebAssembly and data files) opens from the runtime stage's layout", async () => {
          // The files the --help check above started (bundled and laid out once for this Dockerfile).
          const { tmp, app } = built(file, df);
          assert.ok(
            !existsSync(join(tmp, 'node_modules')) && !existsSync(join(app, '..', 'node_modules')),
            'no node_modules above /app'
          );
          // The proxy, started as the image starts it on a data dir (HOPSCOPE_DATA_DIR), makes its database there…
          const dataDir = join(tmp, 'proxy-data');
          await startsOnDataDir(join(app, 'main.mjs'), dataDir);
          // …and what the bundle imports at run time from /app/node_modules opens that cluster on its own and answers.
          const probe = join(app, 'probe-db.mjs');
          writeFileSync(
            probe,
            "import { PGlite } from '@electric-sql/pglite';\nconst db = new PGlite(process.argv[2]);\nconst r = await db.query('select 41 + 1 as n');\nawait db.close();\nprocess.stdout.write(String(r.rows[0].n));\n"
          );
          const got = execFileSync('node', [probe, join(dataDir, 'pgdata')], {
            cwd: app,
            encoding: 'utf8',
            timeout: 60_000,
            env: { PATH: process.env.PATH },
          });
          assert.equal(got, '42');
          assert.ok(readdirSync(join(dataDir, 'pgdata')).includes('PG_VERSION'), 'a PostgreSQL cluster on disk');
        });
      }
    });
  }
});
