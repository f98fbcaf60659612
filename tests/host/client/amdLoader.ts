/**
 * Loads the plugin's AMD `module.js` as Grafana's SystemJS + AMD extra does: a `<script>` whose `define(deps,
 * factory)` gets the host's own copies of the shared modules, and `module` → `{ uri }` so the plugin computes its
 * public path for lazy chunks. `define` exists only while module.js is loading, so UMD code elsewhere is unaffected.
 */
type Factory = (...deps: unknown[]) => unknown;
interface AmdDefine {
  (...args: unknown[]): void;
  amd: object;
}

export async function loadAmdModule(url: string, shared: Record<string, unknown>): Promise<Record<string, unknown>> {
  const win = window as unknown as { define?: AmdDefine };
  let captured: { deps: string[]; factory: Factory } | undefined;
  const define = ((...args: unknown[]) => {
    const factory = args[args.length - 1];
    const deps = args.find((a): a is string[] => Array.isArray(a)) ?? [];
    captured = { deps, factory: typeof factory === 'function' ? (factory as Factory) : () => factory };
  }) as AmdDefine;
  define.amd = {};
  win.define = define;
  try {
    await new Promise<void>((resolve, reject) => {
      const script = document.createElement('script');
      script.src = url;
      script.onload = () => resolve();
      script.onerror = () => reject(new Error(`Could not load ${url}`));
      document.head.appendChild(script);
    });
  } finally {
    delete win.define;
  }
  if (!captured) {
    throw new Error(`${url} did not call define(): it is not an AMD module`);
  }
  const missing = captured.deps.filter((d) => d !== 'module' && d !== 'exports' && !(d in shared));
  if (missing.length) {
    throw new Error(`${url} needs modules Grafana does not share: ${missing.join(', ')}`);
  }
  const exportsObj: Record<string, unknown> = {};
  const resolved = captured.deps.map((d) => (d === 'module' ? { uri: url } : d === 'exports' ? exportsObj : shared[d]));
  // Top-level await in module.tsx makes the factory return a Promise: Grafana awaits it too.
  const result = await captured.factory(...resolved);
  return (result ?? exportsObj) as Record<string, unknown>;
}
