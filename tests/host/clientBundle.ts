/**
 * Builds the host's browser bundle (tests/host/client/) with esbuild, once: the output is cached under
 * .cache/host-client/ keyed by a hash of the client sources and the versions of the libraries it bundles, so test
 * files and the demo reuse it. Written to a temp file and renamed, so concurrent builders never see half a file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const clientDir = join(import.meta.dirname, 'client');
const cacheDir = join(root, '.cache', 'host-client');

/** The libraries the client bundles; their versions are part of the cache key. */
const BUNDLED = [
  'react',
  'react-dom',
  'react-router',
  'react-router-dom',
  '@grafana/data',
  '@grafana/ui',
  '@grafana/runtime',
  '@grafana/i18n',
  'rxjs',
  'lodash',
  'moment',
  'jquery',
  'redux',
  'd3',
  'i18next',
  '@emotion/css',
  '@emotion/react',
  'uplot',
  'esbuild',
];

function listFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? listFiles(p) : [p];
    });
}

function cacheKey(): string {
  const hash = createHash('sha256');
  for (const file of [...listFiles(clientDir), import.meta.filename]) {
    hash.update(file).update(readFileSync(file));
  }
  for (const name of BUNDLED) {
    try {
      hash
        .update(name)
        .update(JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version);
    } catch {
      hash.update(`${name}:missing`);
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/** Returns the path of the built client bundle, building it first when the cache has no bundle for these inputs. */
export async function ensureClientBundle(): Promise<string> {
  // HOPSCOPE_HOST_DEV=1: React's development build, unminified (readable errors while working on the host).
  const dev = process.env.HOPSCOPE_HOST_DEV === '1';
  const out = join(
    cacheDir,
    `client-${cacheKey()}${dev ? '-dev' : ''}${process.env.HOPSCOPE_HOST_NOMINIFY === '1' ? '-nomin' : ''}.js`
  );
  if (existsSync(out)) {
    return out;
  }
  mkdirSync(cacheDir, { recursive: true });
  const { build } = await import('esbuild');
  const tmp = `${out}.${process.pid}.tmp`;
  await build({
    entryPoints: [join(clientDir, 'index.tsx')],
    bundle: true,
    outfile: tmp,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: !dev && process.env.HOPSCOPE_HOST_NOMINIFY !== '1',
    jsx: 'automatic',
    legalComments: 'none',
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"', global: 'window' },
    loader: { '.svg': 'text', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.png': 'empty', '.css': 'empty' },
    conditions: ['browser', 'import', 'module', 'default'],
    mainFields: ['browser', 'module', 'main'],
    plugins: [cjsDefaultInterop],
    alias: {
      'grafana-runtime-internal/plugin-page': join(
        root,
        'node_modules/@grafana/runtime/dist/esm/components/PluginPage.mjs'
      ),
      'grafana-i18n-internal': join(root, 'node_modules/@grafana/i18n/dist/esm/i18n.mjs'),
    },
  });
  renameSync(tmp, out);
  pruneOldBundles(out);
  return out;
}

/**
 * @grafana/ui's ESM files (`.mjs`) default-import a few CommonJS packages compiled from ES modules
 * (`exports.default` + `__esModule`). Webpack (Grafana's build) hands them `exports.default`; esbuild, for an `.mjs`
 * importer, follows Node and hands them the whole `exports` object (React then renders an object: CustomScrollbar,
 * under every Table and Drawer). Such imports go through a tiny non-.mjs module that re-exports with the interop.
 */
const CJS_WITH_DEFAULT = /^(react-custom-scrollbars-2|calculate-size|react-highlight-words|slate-plain-serializer)$/;
const cjsDefaultInterop: import('esbuild').Plugin = {
  name: 'cjs-default-interop',
  setup(b) {
    b.onResolve({ filter: CJS_WITH_DEFAULT }, async (args) => {
      if (!args.importer.endsWith('.mjs') || args.pluginData === 'interop') {
        return undefined;
      }
      const resolved = await b.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        pluginData: 'interop',
      });
      return { path: resolved.path, namespace: 'cjs-default-interop' };
    });
    b.onLoad({ filter: /.*/, namespace: 'cjs-default-interop' }, (args) => ({
      contents: `import d from ${JSON.stringify(args.path)}; export default d; export * from ${JSON.stringify(args.path)};`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/** Keeps the cache small: bundles of older inputs go once they are an hour old (a running host may still serve one). */
function pruneOldBundles(keep: string): void {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(cacheDir)) {
    const file = join(cacheDir, name);
    if (file !== keep && /^client-.*\.js$/.test(name) && statSync(file).mtimeMs < hourAgo) {
      rmSync(file, { force: true });
    }
  }
}
