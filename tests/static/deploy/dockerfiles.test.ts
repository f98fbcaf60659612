/**
 * The three Dockerfiles, checked without a Docker engine: multi-stage, pinned base images, non-root where possible,
 * the exporter with Debian's bpftrace, every COPY source present and not excluded by .dockerignore — and the build
 * stage's own bundling command run here, outside Docker, with its output started (`--help`), so a broken entry point or
 * an unbundlable dependency fails this test rather than `docker build`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exists, isPinnedImage, packageJson, readText, repo, root } from './support';

interface Instruction { op: string; args: string; stage: number }

/** Instructions of a Dockerfile (continuations joined, comments dropped), each with the index of its stage. */
function parseDockerfile(path: string): { instructions: Instruction[]; stages: Array<{ image: string; name?: string }>; text: string } {
  const text = readText(path);
  const logical = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
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

const FILES = { 'backend-proxy': 'backend-proxy/Dockerfile', 'bpf-exporter': 'bpf-exporter/Dockerfile', loadgen: 'loadgen/Dockerfile' } as const;

/** .dockerignore patterns as the builder reads them (the subset used here: names, dir/ prefixes, `**` prefixes, `*.ext`). */
function ignored(path: string): boolean {
  const patterns = readText('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  return patterns.some((p) => {
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/^\*\*\//, '(.*/)?').replace(/\*/g, '[^/]*')}(/.*)?$`);
    return re.test(path);
  });
}

describe('Dockerfiles', () => {
  for (const [part, file] of Object.entries(FILES)) {
    describe(file, () => {
      const df = parseDockerfile(file);
      const last = df.stages.length - 1;

      it('is multi-stage, every base image pinned by version, the same Node everywhere', () => {
        assert.ok(df.stages.length >= 2, 'a build stage and a runtime stage');
        const names = new Set(df.stages.map((s) => s.name).filter(Boolean));
        for (const s of df.stages) if (!names.has(s.image)) assert.ok(isPinnedImage(s.image), `FROM ${s.image} is pinned`);
        const nodes = df.stages.map((s) => /^node:(\d+)\.\d+\.\d+-bookworm-slim$/.exec(s.image)?.[1]);
        assert.ok(nodes.every((n) => n !== undefined), 'node:<x.y.z>-bookworm-slim');
        assert.ok(Number(nodes[0]) >= Number(/\d+/.exec(packageJson().engines.node)![0]), 'satisfies package.json engines');
      });

      it('copies into the runtime stage only the built output (no sources, no node_modules)', () => {
        const copies = df.instructions.filter((i) => i.op === 'COPY' && i.stage === last);
        assert.ok(copies.length > 0);
        for (const c of copies) assert.match(c.args, /^--from=build\s/, `runtime COPY ${c.args}`);
      });

      it('copies only sources that exist and that .dockerignore lets through', () => {
        assert.ok(ignored('node_modules') && ignored('backend-proxy/node_modules') && ignored('.git') && ignored('dist'));
        for (const c of df.instructions.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
          const srcs = c.args.split(/\s+/).slice(0, -1);
          for (const s of srcs) {
            assert.ok(exists(s), `${s} exists`);
            assert.ok(!ignored(s), `${s} is not excluded by .dockerignore`);
          }
        }
      });

      it(part === 'bpf-exporter' ? 'runs as root on purpose (capabilities are granted to uid 0 only), with bpftrace from Debian' : 'runs as the unprivileged node user', () => {
        const users = df.instructions.filter((i) => i.op === 'USER' && i.stage === last).map((i) => i.args);
        if (part === 'bpf-exporter') {
          assert.deepEqual(users, ['root']);
          assert.match(df.text, /Root on purpose/);
          assert.ok(df.instructions.some((i) => i.op === 'RUN' && i.stage === last && /apt-get install[^&]*\bbpftrace\b/.test(i.args)), 'apt-get install bpftrace');
        } else {
          assert.deepEqual(users, ['node']);
        }
      });

      if (part === 'loadgen') {
        it('installs the openssl CLI the chain uses for its TLS certificate', () => {
          assert.match(readText('loadgen', 'src', 'chain', 'tls.ts'), /execFileSync\('openssl'/);
          assert.ok(df.instructions.some((i) => i.op === 'RUN' && i.stage === last && /apt-get install[^&]*\bopenssl\b/.test(i.args)));
        });
      }

      it('its build-stage bundling command works here: the bundle starts and answers --help', () => {
        const run = df.instructions.find((i) => i.op === 'RUN' && i.stage === 0 && i.args.startsWith('npx esbuild'));
        assert.ok(run, 'the build stage bundles with esbuild');
        const entries = [...run.args.matchAll(/(\w[\w-]*\/src\/[\w/.-]+?)(?:\.ts)?['\s;]/g)].map((m) => `${m[1]}.ts`);
        for (const e of entries) assert.ok(exists(e), `entry point ${e} exists`);
        const out = mkdtempSync(join(tmpdir(), 'hopscope-bundle-'));
        const inputs: string[] = [];
        try {
          // The same shell command, with /out moved to a temp dir and a metafile per esbuild call (what it read);
          // npx finds the repository's esbuild.
          let n = 0;
          const cmd = run.args.replaceAll('/out', out).replace(/npx esbuild /g, () => `npx esbuild --metafile=${out}/meta-${n++}.json `);
          execFileSync('sh', ['-c', cmd], { cwd: root, stdio: 'pipe', timeout: 60_000, env: { ...process.env, PATH: `${repo('node_modules', '.bin')}:${process.env.PATH}` } });
          for (let i = 0; i < n; i++) inputs.push(...Object.keys(JSON.parse(readFileSync(join(out, `meta-${i}.json`), 'utf8')).inputs));
        } finally {
          rmSync(out, { recursive: true, force: true });
        }
        // The image's build stage has only what was copied in (and node_modules from npm ci): the bundle must read nothing else.
        const copied = df.instructions.filter((i) => i.op === 'COPY' && i.stage === 0).flatMap((i) => i.args.split(/\s+/).slice(0, -1));
        assert.ok(inputs.length > 10);
        for (const input of inputs) {
          // load-entry.ts is the name given to the loadgen CLI's stdin entry (--sourcefile).
          const inside = input.startsWith('node_modules/') || input === '<stdin>' || input === 'load-entry.ts' || copied.some((c) => input === c || input.startsWith(`${c.replace(/\/$/, '')}/`));
          assert.ok(inside, `the bundle reads ${input}, which the build stage does not copy`);
        }
        const entrypoint = df.instructions.find((i) => i.op === 'ENTRYPOINT' && i.stage === last);
        assert.ok(entrypoint, 'ENTRYPOINT');
        const bundle = (JSON.parse(entrypoint.args) as string[])[1];
        assert.ok(df.instructions.some((i) => i.op === 'COPY' && i.stage === last && i.args.includes(bundle.replace('/app/', ''))), `${bundle} is copied into the image`);
      });
    });
  }
});
