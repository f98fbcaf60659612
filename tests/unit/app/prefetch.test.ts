/**
 * The Overview's early requests (module.js starts them before the page's code loads): worked out from the URL exactly
 * as the page will ask, taken by the page's own call only when they match, once, while fresh. Plus the bisection that
 * aligns the insights' series, checked against the plain scan it replaced.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';

import { cleanParams } from '../../../src/api/params';
import {
  addPrefetched,
  answers,
  clearPrefetched,
  MAX_AGE_MS,
  takePrefetched,
  type RawOutcome,
} from '../../../src/api/prefetch';
import { goldenStepMs } from '../../../src/api/requests';
import { isOverviewPath, overviewEarlyRequests, overviewQueries } from '../../../src/features/overview/queries';
import { sampleAt } from '../../../src/transforms/golden';

const NOW = 1_800_000_000_000;
/** Stand-in for Grafana's dateMath: `now` and `now-<n><s|m|h>`. */
const parseRelative = (v: string): number | undefined => {
  const m = /^now(?:-(\d+)([smh]))?$/.exec(v);
  return m ? NOW - (m[1] ? Number(m[1]) * { s: 1e3, m: 6e4, h: 36e5 }[m[2] as 's' | 'm' | 'h'] : 0) : undefined;
};
const loc = (search: string, pathname = '/a/hopscope-rca-app/overview') => ({ pathname, search });

describe('overviewEarlyRequests', () => {
  test('an absolute range: the four requests with the parameters the page computes, nothing tolerated', () => {
    const from = NOW - 3_600_000;
    const early = overviewEarlyRequests(
      loc(`?from=${from}&to=${NOW}&var-backend=vllm&var-model=llama`),
      parseRelative
    )!;
    const q = overviewQueries({ from, to: NOW, backend: 'vllm', model: 'llama' });
    assert.deepEqual(
      early.map((r) => r.path),
      ['/golden', '/gpu/heatmap', '/annotations', '/services']
    );
    assert.deepEqual(early[0].params, cleanParams(q.golden));
    assert.deepEqual(early[0].params, {
      from: String(from),
      to: String(NOW),
      step: '15s',
      backend: 'vllm',
      model: 'llama',
    });
    for (const r of early.slice(1)) {
      assert.deepEqual(r.params, cleanParams(q.window));
    }
    assert.deepEqual(early[0].tolerance, {});
    assert.equal(answers(early[0], '/golden', { ...early[0].params, to: String(NOW + 1) }), false);
  });

  test("no range in the URL: the page's default (last hour); a relative range may move by one golden step", () => {
    const [golden] = overviewEarlyRequests(loc(''), parseRelative)!;
    const step = goldenStepMs(NOW - 3_600_000, NOW);
    assert.deepEqual(golden.params, { from: String(NOW - 3_600_000), to: String(NOW), step: '15s' });
    assert.deepEqual(golden.tolerance, { from: step, to: step });
    const later = (ms: number) => ({ ...golden.params, from: String(NOW - 3_600_000 + ms), to: String(NOW + ms) });
    assert.equal(answers(golden, '/golden', later(2500)), true, 'asked 2.5 s later');
    assert.equal(answers(golden, '/golden', later(step + 1)), false, 'more than a step later');
    assert.equal(answers(golden, '/golden', { ...later(0), step: '30s' }), false, 'another step');
    assert.equal(answers(golden, '/golden', { ...later(0), service: 'rag' }), false, 'another filter');
    assert.equal(answers(golden, '/gpu/heatmap', later(0)), false, 'another endpoint');
  });

  test('anything unusual is left to the page', () => {
    const none = (search: string, pathname?: string) =>
      assert.equal(
        overviewEarlyRequests(loc(search, pathname), parseRelative),
        undefined,
        `${pathname ?? ''}${search}`
      );
    none('?from=now/d&to=now/d'); // rounding: time zone dependent
    none('?from=now-1h&from=now-2h');
    none('?var-backend=nope');
    none('?var-model=a&var-model=b');
    none(`?from=${NOW}&to=${NOW - 1}`);
    none('?from=20260101&to=now'); // a YYYYMMDD date, not epoch ms
    none('', '/a/hopscope-rca-app/services');
    none('', '/a/hopscope-rca-app');
    assert.ok(
      overviewEarlyRequests(loc('?var-backend=$__all&var-service=', '/a/hopscope-rca-app/overview/'), parseRelative)
    );
  });

  test('isOverviewPath', () => {
    assert.equal(isOverviewPath('/a/hopscope-rca-app/overview'), true);
    assert.equal(isOverviewPath('/a/hopscope-rca-app/'), true);
    assert.equal(isOverviewPath('/a/hopscope-rca-app/overviewx'), false);
    assert.equal(isOverviewPath('/a/hopscope-rca-app/traces'), false);
  });
});

describe('takePrefetched', () => {
  beforeEach(() => clearPrefetched());
  const ok = (data: unknown): Promise<RawOutcome> => Promise.resolve({ ok: true, data });

  test('the matching call takes the early answer, once', async () => {
    const outcome = ok({ n: 1 });
    addPrefetched({ path: '/services', params: { from: '1', to: '2' }, tolerance: {} }, outcome, NOW);
    assert.equal(takePrefetched('/services', { from: '1', to: '3' }, NOW), undefined);
    assert.equal(takePrefetched('/services', { from: '1', to: '2' }, NOW), outcome);
    assert.equal(takePrefetched('/services', { from: '1', to: '2' }, NOW), undefined, 'taken already');
  });

  test('a stale early answer is dropped', () => {
    addPrefetched({ path: '/services', params: {}, tolerance: {} }, ok(null), NOW);
    assert.equal(takePrefetched('/services', undefined, NOW + MAX_AGE_MS + 1), undefined);
  });
});

test('sampleAt: bisection gives what the scan gave (nearest within tolerance, earliest of ties)', () => {
  const scan = (times: number[], values: Array<number | null>, t: number, tol: number) => {
    let best: number | null = null;
    let bestDt = Infinity;
    times.forEach((x, i) => {
      const dt = Math.abs(x - t);
      if (dt <= tol && dt < bestDt) {
        bestDt = dt;
        best = values[i];
      }
    });
    return best;
  };
  let seed = 7;
  const rnd = (k: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % k;
  for (let trial = 0; trial < 5000; trial++) {
    const times: number[] = [];
    for (let i = 0, x = rnd(5); i < rnd(12); i++, x += rnd(4)) {
      times.push(x);
    }
    if (rnd(5) === 0) {
      times.reverse(); // not ascending: the scan
    }
    const values = times.map((_, i) => (rnd(5) === 0 ? null : i));
    const t = rnd(40) - 2 + (rnd(3) === 0 ? 0.5 : 0);
    const tol = rnd(5);
    assert.equal(
      sampleAt({ times: [...times], values }, t, tol),
      scan(times, values, t, tol),
      JSON.stringify({ times, t, tol })
    );
  }
});
