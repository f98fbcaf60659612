/**
 * The bundle gives @grafana/scenes `src/shims/e2eSelectors.ts` instead of @grafana/e2e-selectors' eager `selectors`
 * (webpack.config.ts): every selector must be the very value the package itself resolves to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { selectors as real } from '@grafana/e2e-selectors';

import { selectors as shim } from '../../../src/shims/e2eSelectors';

test('each selector resolved on use is the one @grafana/e2e-selectors resolves (all of them)', () => {
  let leaves = 0;
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (a && typeof a === 'object') {
      for (const key of Object.keys(a)) {
        walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
      }
      return;
    }
    leaves++;
    assert.equal(b, a, path);
  };
  walk(real, shim, 'selectors');
  assert.ok(leaves > 500, `${leaves} selectors compared`);
  // The ones scenes reads.
  assert.equal(
    shim.pages.Dashboard.SubMenu.submenuItemLabels('x'),
    real.pages.Dashboard.SubMenu.submenuItemLabels('x')
  );
  assert.equal(shim.components.LoadingIndicator.icon, real.components.LoadingIndicator.icon);
});
