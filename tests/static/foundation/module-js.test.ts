/**
 * dist/module.js is what Grafana loads: an AMD module whose dependencies are exactly Grafana's shared modules
 * (plus `module` for the public path), with nothing of React or @grafana/data|ui|runtime bundled — in module.js nor
 * in any lazy chunk — and exporting an AppPlugin as `plugin`. Its lazy chunks (the pages, fetched by module.js's
 * runtime from the plugin's public path) are plain scripts that only register their modules in this plugin's own
 * chunk registry: no AMD define() (Grafana's loader would take them for modules), no shared module of their own
 * (those reach them through module.js), each one named by module.js's chunk map and nothing else left in dist/.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import vm from 'node:vm';

import { SHARED_MODULES } from '../../../webpack.config';
import { ensurePluginBuilt } from '../../support/host';

const dist = join(import.meta.dirname, '..', '..', '..', 'dist');

/** Runs module.js with a recording `define` and returns the dependency list it asked for. */
function amdDependencies(code: string): { deps: string[]; calls: number } {
  let deps: string[] = [];
  let calls = 0;
  const define = (...args: unknown[]) => {
    calls++;
    // Copy into this realm: arrays made inside the vm context fail deepStrictEqual on their prototype.
    deps = Array.from((args.find(Array.isArray) as string[] | undefined) ?? []);
  };
  (define as unknown as { amd: object }).amd = {};
  vm.runInNewContext(code, { define, self: {}, window: {} }, { timeout: 5000 });
  return { deps, calls };
}

/**
 * Text that only appears when the library itself is bundled (not when it is imported as an external), with the
 * library file that contains it — each marker is proven against that file, so the check can fail.
 */
const BUNDLED_MARKERS: Array<{ lib: string; marker: RegExp; file: string }> = [
  {
    lib: 'react',
    marker: /__SECRET_INTERNALS_DO_NOT_USE_OR_YOU_WILL_BE_FIRED/,
    file: 'react/cjs/react.production.min.js',
  },
  {
    lib: 'react-dom',
    marker: /unstable_renderSubtreeIntoContainer/,
    file: 'react-dom/cjs/react-dom.production.min.js',
  },
  {
    lib: '@grafana/data',
    marker: /Window size must/,
    file: '@grafana/data/dist/esm/transformations/transformers/calculateField.mjs',
  },
  {
    lib: '@grafana/ui',
    marker: /Icon component passed an invalid icon name/,
    file: '@grafana/ui/dist/esm/components/Icon/Icon.mjs',
  },
  {
    lib: '@grafana/runtime',
    marker: /window\.grafanaBootData was not set/,
    file: '@grafana/runtime/dist/esm/config.mjs',
  },
];
const nodeModules = join(import.meta.dirname, '..', '..', '..', 'node_modules');
/** webpack's JSONP registry of this plugin (output.uniqueName): a name of its own, so plugins never share one. */
const CHUNK_REGISTRY = 'webpackChunkhopscope_rca_app';

/** Runs a chunk as the browser would (a plain script) and returns what it called define() with / pushed. */
function runChunk(code: string): { defineCalls: number; pushed: unknown[]; globals: string[] } {
  let defineCalls = 0;
  const define = () => {
    defineCalls++;
  };
  (define as unknown as { amd: object }).amd = {};
  const self: Record<string, unknown> = {};
  const sandbox: Record<string, unknown> = { define, self, window: self };
  vm.runInNewContext(code, sandbox, { timeout: 5000 });
  const registry = self[CHUNK_REGISTRY];
  return { defineCalls, pushed: Array.isArray(registry) ? Array.from(registry) : [], globals: Object.keys(self) };
}

describe('dist/module.js', () => {
  let moduleJs: string;
  let chunks: Array<[string, string]>;

  before(() => {
    ensurePluginBuilt();
    moduleJs = readFileSync(join(dist, 'module.js'), 'utf8');
    chunks = readdirSync(dist)
      .filter((f) => f.endsWith('.js'))
      .map((f) => [f, readFileSync(join(dist, f), 'utf8')]);
  });

  it('is one AMD define() whose dependencies are only shared modules (and "module")', () => {
    const { deps, calls } = amdDependencies(moduleJs);
    assert.equal(calls, 1, 'define() called once');
    assert.ok(deps.length > 0, 'define() lists its dependencies');
    const allowed = new Set<string>([...SHARED_MODULES, 'module']);
    assert.deepEqual(
      deps.filter((d) => !allowed.has(d)),
      [],
      'every dependency is shared by Grafana'
    );
    for (const needed of ['react', '@grafana/data', '@grafana/ui', '@grafana/runtime', 'module']) {
      assert.ok(deps.includes(needed), `module.js imports ${needed} from Grafana`);
    }
  });

  it('stays small: at most 200 KB (Grafana fetches it for every app page; the pages are lazy chunks)', () => {
    const bytes = Buffer.byteLength(moduleJs);
    assert.ok(bytes <= 200 * 1024, `module.js is ${(bytes / 1024).toFixed(1)} KiB`);
  });

  it('the AMD check can fail: a plain script is not accepted', () => {
    assert.equal(amdDependencies('var x = 1;').calls, 0);
  });

  for (const { lib, marker, file } of BUNDLED_MARKERS) {
    it(`bundles nothing of ${lib}`, () => {
      assert.equal(
        marker.test(readFileSync(join(nodeModules, file), 'utf8')),
        true,
        `the marker of ${lib} is found in ${file} itself`
      );
      for (const [chunk, code] of chunks) {
        assert.equal(marker.test(code), false, `${chunk} contains code of ${lib} (${marker})`);
      }
    });
  }

  it('lazy chunks are plain scripts registering their modules with this plugin only (no define(), no shared module)', () => {
    const lazy = chunks.filter(([f]) => f !== 'module.js');
    assert.ok(lazy.length > 0, 'the pages are lazy chunks');
    for (const [file, code] of lazy) {
      const { defineCalls, pushed, globals } = runChunk(code);
      assert.equal(defineCalls, 0, `${file} calls define(): Grafana's AMD loader would take it for a module`);
      assert.deepEqual(globals, [CHUNK_REGISTRY], `${file} touches only ${CHUNK_REGISTRY}`);
      assert.equal(pushed.length, 1, `${file} registers itself once`);
      const [ids, modules] = pushed[0] as [number[], Record<string, unknown>];
      assert.ok(Array.from(ids).includes(Number(file.split('.')[0])), `${file} registers its own chunk id`);
      assert.ok(
        Object.values(modules).every((m) => typeof m === 'function'),
        `${file} holds module factories`
      );
      // A shared module compiled into a chunk would be an unresolved external there (it only exists in module.js's define).
      assert.doesNotMatch(code, /__WEBPACK_EXTERNAL_MODULE_/, `${file} refers to a shared module directly`);
    }
  });

  it("module.js's chunk map names every chunk in dist/, and every chunk it names is there", () => {
    // webpack's runtime maps chunk ids to `<id>.<contenthash>.js`, relative to the public path from `module.uri`.
    const map = moduleJs.match(/\{(\d+:"[0-9a-f]{8}"(?:,\d+:"[0-9a-f]{8}")*)\}/);
    assert.ok(map, 'module.js holds the chunk map');
    const named = [...map[1].matchAll(/(\d+):"([0-9a-f]{8})"/g)].map(([, id, hash]) => `${id}.${hash}.js`).sort();
    const present = chunks
      .map(([f]) => f)
      .filter((f) => f !== 'module.js')
      .sort();
    assert.deepEqual(present, named);
  });

  it('evaluates to an AppPlugin exported as `plugin`', async () => {
    const captured: { deps: string[]; factory?: (...a: unknown[]) => unknown } = { deps: [] };
    const define = (deps: string[], factory: (...a: unknown[]) => unknown) => {
      captured.deps = Array.from(deps);
      captured.factory = factory;
    };
    // What a browser page gives every script, as far as the plugin object's construction and its link paths need.
    vm.runInNewContext(moduleJs, { define, self: {}, URLSearchParams });
    // Minimal stand-ins for Grafana's shared modules: enough to construct the plugin object, nothing rendered.
    class AppPlugin {
      root?: unknown;
      configPages: Array<{ id: string; title: string }> = [];
      setRootPage(root: unknown) {
        this.root = root;
        return this;
      }
      addConfigPage(page: { id: string; title: string }) {
        this.configPages.push(page);
        return this;
      }
      addedLinks: Array<{
        title: string;
        targets: string[];
        path?: string;
        configure?: (c: unknown) => { path?: string } | undefined;
      }> = [];
      addLink(link: AppPlugin['addedLinks'][number]) {
        this.addedLinks.push(link);
        return this;
      }
    }
    const stub = new Proxy(
      {},
      { get: (_t, key) => (key === '__esModule' ? false : key === 'AppPlugin' ? AppPlugin : () => null) }
    );
    const i18next = {
      default: {
        options: {},
        use() {
          return this;
        },
        init: async () => undefined,
        getFixedT: () => (k: string) => k,
        t: (k: string) => k,
        resolvedLanguage: 'en-US',
      },
    };
    const modules: Record<string, unknown> = {
      module: { uri: '/public/plugins/hopscope-rca-app/module.js' },
      '@grafana/data': { AppPlugin },
      i18next,
    };
    const exported = (await captured.factory!(...captured.deps.map((d) => modules[d] ?? stub))) as {
      plugin?: AppPlugin;
    };
    assert.ok(exported.plugin instanceof AppPlugin, 'exports.plugin is an AppPlugin');
    assert.ok(exported.plugin.root, 'has a root page');
    assert.deepEqual(
      exported.plugin.configPages.map((p) => p.id),
      ['configuration']
    );
    // The links declared in plugin.json are the ones module.js registers, and their configure runs without the app's
    // chunks (Grafana calls it on its own pages): a trace view context gives the trace's page.
    const declared = JSON.parse(readFileSync(join(dist, 'plugin.json'), 'utf8')).extensions.addedLinks as Array<{
      title: string;
      targets: string[];
    }>;
    // (Arrays made inside the vm context are copied into this realm to compare.)
    assert.deepEqual(
      exported.plugin.addedLinks.map((l) => ({ title: l.title, targets: Array.from(l.targets) })),
      declared.map((l) => ({ title: l.title, targets: l.targets }))
    );
    const trace = {
      traceID: 'ab'.repeat(16),
      startTime: 1_760_000_000_000_000,
      endTime: 1_760_000_001_000_000,
      datasource: { uid: 't', type: 'tempo' },
    };
    assert.match(
      exported.plugin.addedLinks[0].configure!(trace)?.path ?? '',
      /^\/a\/hopscope-rca-app\/traces\/(ab){16}\?from=\d+&to=\d+$/
    );
    assert.equal(exported.plugin.addedLinks[0].configure!({ traceID: 'nope', startTime: 1 }), undefined);
  });
});
