/**
 * `@grafana/e2e-selectors` as @grafana/scenes sees it in this bundle (webpack.config.ts aliases it for scenes only):
 * the same `selectors`, resolved on use instead of all at once. The package builds its `selectors` object when
 * loaded, by sorting the versions of every one of its ~1,500 selectors with the `semver` library — about 10 ms of
 * the Overview's cold load, plus semver's 27 KiB, for the nine selectors scenes reads. Here each selector is resolved
 * when first read, to its newest version, which is what the package resolves to when no Grafana version is given
 * (`resolveSelectors(…, 'latest')`, as its own `selectors` are built).
 */
import { versionedComponents, versionedPages, type selectors as Selectors } from '@grafana/e2e-selectors';

const VERSION = /^(\d+)\.(\d+)\.(\d+)$/;

const parse = (v: string): number[] => {
  const m = VERSION.exec(v);
  if (!m) {
    throw new Error(`Invalid semver version: '${v}'`);
  }
  return [Number(m[1]), Number(m[2]), Number(m[3])];
};

/** A versioned selector is an object whose first key is a version (the package's own test). */
const isVersioned = (value: object): boolean => VERSION.test(Object.keys(value)[0] ?? '');

const newer = (a: number[], b: number[]): boolean =>
  a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];

function newest(versioned: Record<string, unknown>): unknown {
  let best: number[] | undefined;
  let bestKey = '';
  for (const key of Object.keys(versioned)) {
    const v = parse(key);
    if (!best || newer(v, best)) {
      best = v;
      bestKey = key;
    }
  }
  return versioned[bestKey];
}

function resolvedOnUse<T extends object>(group: T): T {
  const cache = new Map<string, unknown>();
  return new Proxy(group, {
    get(target, key, receiver) {
      if (typeof key !== 'string') {
        return Reflect.get(target, key, receiver);
      }
      if (!cache.has(key)) {
        const value = (target as Record<string, unknown>)[key];
        cache.set(
          key,
          value && typeof value === 'object'
            ? isVersioned(value)
              ? newest(value as Record<string, unknown>)
              : resolvedOnUse(value)
            : value
        );
      }
      return cache.get(key);
    },
  });
}

export const selectors = {
  pages: resolvedOnUse(versionedPages),
  components: resolvedOnUse(versionedComponents),
} as unknown as typeof Selectors;
