/**
 * dist/module.js is what Grafana loads: an AMD module whose dependencies are exactly Grafana's shared modules
 * (plus `module` for the public path), with nothing of React or @grafana/data|ui|runtime bundled — in module.js nor
 * in any lazy chunk — and exporting an AppPlugin as `plugin`.
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
    deps = (args.find(Array.isArray) as string[] | undefined) ?? [];
  };
  (define as unknown as { amd: object }).amd = {};
  vm.runInNewContext(code, { define, self: {}, window: {} }, { timeout: 5000 });
  return { deps, calls };
}

/** Text that only appears when the library itself is bundled (not when it is imported as an external). */
const BUNDLED_MARKERS: Array<[string, RegExp]> = [
  ['react', /__SECRET_INTERNALS_DO_NOT_USE_OR_YOU_WILL_BE_FIRED|react\.(production|development)\.min|Minified React error #/],
  ['react-dom', /ReactDOMSharedInternals|react-dom\.(production|development)/],
  ['@grafana/data', /Field type was not specified|class FieldCache|standardTransformersRegistry\s*=\s*new/],
  ['@grafana/ui', /grafana-ui|data-testid Panel header|getThemeById/],
  ['@grafana/runtime', /window\.grafanaBootData was not set/],
];

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
    assert.deepEqual(deps.filter((d) => !allowed.has(d)), [], 'every dependency is shared by Grafana');
    for (const needed of ['react', '@grafana/data', '@grafana/ui', '@grafana/runtime', 'module']) {
      assert.ok(deps.includes(needed), `module.js imports ${needed} from Grafana`);
    }
  });

  it('the AMD check can fail: a plain script is not accepted', () => {
    assert.equal(amdDependencies('var x = 1;').calls, 0);
  });

  for (const [lib, marker] of BUNDLED_MARKERS) {
    it(`bundles nothing of ${lib}`, () => {
      for (const [file, code] of chunks) {
        assert.equal(marker.test(code), false, `${file} contains code of ${lib} (${marker})`);
      }
    });
  }

  it('the bundled-code check can fail: React itself matches the React marker', () => {
    const react = readFileSync(join(import.meta.dirname, '..', '..', '..', 'node_modules', 'react', 'cjs', 'react.production.min.js'), 'utf8');
    assert.equal(BUNDLED_MARKERS[0][1].test(react), true);
  });

  it('evaluates to an AppPlugin exported as `plugin`', async () => {
    const captured: { deps: string[]; factory?: (...a: unknown[]) => unknown } = { deps: [] };
    const define = (deps: string[], factory: (...a: unknown[]) => unknown) => {
      captured.deps = deps;
      captured.factory = factory;
    };
    vm.runInNewContext(moduleJs, { define });
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
    }
    const stub = new Proxy({}, { get: (_t, key) => (key === '__esModule' ? false : key === 'AppPlugin' ? AppPlugin : () => null) });
    const i18next = { default: { options: {}, use() { return this; }, init: async () => undefined, getFixedT: () => (k: string) => k, t: (k: string) => k, resolvedLanguage: 'en-US' } };
    const modules: Record<string, unknown> = { module: { uri: '/public/plugins/hopscope-rca-app/module.js' }, '@grafana/data': { AppPlugin }, i18next };
    const exported = (await captured.factory!(...captured.deps.map((d) => modules[d] ?? stub))) as { plugin?: AppPlugin };
    assert.ok(exported.plugin instanceof AppPlugin, 'exports.plugin is an AppPlugin');
    assert.ok(exported.plugin.root, 'has a root page');
    assert.deepEqual(exported.plugin.configPages.map((p) => p.id), ['configuration']);
  });
});
