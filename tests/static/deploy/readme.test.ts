/**
 * README.md for a newcomer: the two command lines first, every variable the parts read documented (and nothing
 * documented that no part reads), the sections the issue asks for, links that resolve, and no invented benchmark figures.
 */
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ENV_HELP as PROXY_ENV_HELP } from '../../../backend-proxy/src/config';
import { envVarsReadBy, exists, readText, repo } from './support';

const readme = readText('README.md');
const lines = readme.split('\n');
const section = (title: string): string => {
  const start = lines.findIndex((l) => new RegExp(`^#{2,3} ${title}`).test(l));
  assert.ok(start >= 0, `section "${title}"`);
  const level = /^#+/.exec(lines[start])![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{2,${level}} `).test(l));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
};

/** Splits a shell command line (plain words and single-quoted strings, as used in the README). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

const PARTS = ['backend-proxy', 'bpf-exporter', 'loadgen', 'scripts', 'tests/host'];

/**
 * The variables the parts read. A name in the source is not always a variable: names built from parts
 * (`${prefix}_BASIC_AUTH` with prefix `HOPSCOPE_PROMETHEUS`) or a family in prose (`HOPSCOPE_OTLP_*`) leave a stem.
 * A stem ends in `_`, or is the start of longer names read and is itself never read (`env.X`, `env['X']`, `$X`).
 */
function variablesRead(): Set<string> {
  const named = new Set(PARTS.flatMap((d) => [...envVarsReadBy(d)]));
  const accessed = new Set(
    PARTS.flatMap((d) => [...envVarsReadBy(d, /(?<=\benv\.|\benv\[['"`]|\$\{?)HOPSCOPE_[A-Z0-9_]+\b/g)])
  );
  const stem = (v: string): boolean =>
    v.endsWith('_') || (!accessed.has(v) && [...named].some((w) => w.startsWith(`${v}_`)));
  return new Set([...named].filter((v) => !stem(v)));
}

/** Not user configuration: set by the test runner, or by the chain for the replica processes it forks. */
const TEST_ONLY = new Set([
  'HOPSCOPE_TEST_STAGE',
  'HOPSCOPE_SPLIT_POD',
  'HOPSCOPE_SPLIT_CONFIG',
  'HOPSCOPE_SPLIT_ENDPOINTS',
]);

describe('README.md', () => {
  it('starts with exactly the two command lines', () => {
    assert.equal(
      lines[0],
      'Run the demo (everything on this machine, no Docker): `npm start` — then open http://127.0.0.1:3300/a/hopscope-rca-app/'
    );
    assert.equal(
      lines[1],
      'Run every test (installs what it needs, builds, ends with `total: N passed, N failed`): `npm test`'
    );
  });

  it('has the sections a newcomer needs', () => {
    for (const s of [
      'What you will see',
      'Screenshots',
      'Docker quick start',
      'Kubernetes',
      'Configuration',
      'Architecture',
      'Point the load generator at your own vLLM or TGI',
      'Troubleshooting',
      'Benchmarks',
    ])
      section(s);
    assert.match(section('Screenshots'), /docs\/screenshots\//);
    const t = section('Troubleshooting');
    for (const topic of [/not root/i, /tracefs/i, /BTF/, /No GPU/i, /No Tempo/i]) assert.match(t, topic);
  });

  it('documents every HOPSCOPE_* variable the parts read, and no variable that nothing reads', () => {
    const read = variablesRead();
    for (const v of TEST_ONLY) read.delete(v);
    // The first cell of each table row names one or more variables.
    const firstCells = [...section('Configuration').matchAll(/^\| ([^|]+) \|/gm)].map((m) => m[1]);
    const documented = new Set(firstCells.flatMap((c) => [...c.matchAll(/`(HOPSCOPE_[A-Z0-9_]+)`/g)].map((m) => m[1])));
    const missing = [...read].filter((v) => !documented.has(v)).sort();
    assert.deepEqual(missing, [], 'read by the code but not in the configuration tables');
    // HOPSCOPE_PROXY_URL is read by Grafana (provisioning), not by our code.
    const stale = [...documented].filter((v) => !read.has(v) && v !== 'HOPSCOPE_PROXY_URL').sort();
    assert.deepEqual(stale, [], 'documented but read by no part');
    assert.match(readText('provisioning', 'plugins', 'hopscope.yaml'), /\$\{HOPSCOPE_PROXY_URL\}/);
  });

  it("gives the proxy's defaults as its config module states them", () => {
    const rows = new Map(
      [...section('Configuration').matchAll(/^\| `(HOPSCOPE_[A-Z0-9_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1], m[2]])
    );
    let compared = 0;
    for (const [name, help] of Object.entries(PROXY_ENV_HELP)) {
      const dflt = /\(default ([^;),:\s]+)/.exec(help)?.[1];
      if (!dflt) continue;
      assert.ok(rows.get(name)?.includes(dflt), `${name}: README default "${rows.get(name)}" shows ${dflt}`);
      compared++;
    }
    assert.ok(compared >= 8, `${compared} defaults compared`);
  });

  it('shows load-generator command lines that its CLI accepts', async () => {
    const { parseCli } = await import('../../../loadgen/src/cli');
    const text = section('Point the load generator at your own vLLM or TGI').replace(/\\\n\s*/g, '');
    const commands = [...text.matchAll(/^npx hopscope-load (.+)$/gm)].map((m) => shellWords(m[1]));
    assert.ok(commands.length >= 2);
    for (const argv of commands) assert.doesNotThrow(() => parseCli(argv, {}), argv.join(' '));
    assert.throws(
      () => parseCli(['--profile', 'spike', '--rps', '5'], {}),
      'a spike without its options is refused, so this check can fail'
    );
  });

  it('links only to files that exist', () => {
    for (const m of readme.matchAll(/\]\(((?!https?:)[^)#]+)\)/g)) assert.ok(exists(m[1]), `${m[1]} exists`);
  });

  it('gives every benchmark figure with the command that measures it, and that benchmark exists', () => {
    const rows = section('Benchmarks')
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| what') && !l.startsWith('|---'));
    assert.ok(rows.length >= 5);
    const benches = readdirSync(repo('bench')).filter((f) => f.endsWith('.bench.ts'));
    for (const r of rows) {
      const [, , command = '', result = ''] = r.split('|').map((c) => c.trim());
      assert.ok(/not measured yet|\d/.test(result), `a result or "not measured yet": ${r}`);
      const m = /`(?:npm run bench -- ([\w-]+)|npx tsx bench\/([\w-]+)\.bench\.ts)`/.exec(command);
      assert.ok(m, `a bench command: ${r}`);
      const word = m[1] ?? m[2];
      assert.ok(
        benches.some((f) => f.includes(word)),
        `bench/*${word}*.bench.ts exists (${r})`
      );
    }
  });

  it('names the images docker-compose really runs', () => {
    const compose = readText('docker-compose.yaml');
    for (const m of readme.matchAll(/\| ((?:grafana|prom|otel)\/[a-z-]+\/?[a-z-]*:[\w.]+) \|/g))
      assert.ok(compose.includes(`image: ${m[1]}`), m[1]);
  });
});
