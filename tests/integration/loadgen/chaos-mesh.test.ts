/**
 * hopscope-load drives Chaos Mesh through the Kubernetes API (@kubernetes/client-node, a kubeconfig with the CA and a
 * token), against a stand-in API server over TLS that answers chaos-mesh.org/v1alpha1 requests in the shapes a real
 * API server answered (chaos-mesh-replay.ts names what it replays) and validates each object against Chaos Mesh's
 * CRD schema as the API server would. Each fault's resource is created at its time and deleted at the end; on SIGINT
 * the run is aborted and its resources deleted; after a SIGKILL they stay, and the next run removes them at start
 * (their driver is gone), or `--cleanup RUN_ID` does.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../loadgen/src/cli';
import { waitFor } from '../../support/wait';
import { startChaosMeshReplay, type KubeReplay } from './chaos-mesh-replay';
import { startScriptedLlm, type ScriptedLlm } from './scripted-llm';

const TOKEN = 'replay-token-7f3a';
const NS = 'ai-chain';
const root = join(import.meta.dirname, '..', '..', '..');
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** The replay server's self-signed certificate for 127.0.0.1 (made once, before the tests are declared). */
function certificate(): { key: Buffer; cert: Buffer } | undefined {
  if (!has('openssl')) return undefined;
  const d = mkdtempSync(join(tmpdir(), `lg-chaos-mesh-cert-${process.pid}-`));
  try {
    const key = join(d, 'api.key'),
      crt = join(d, 'api.crt');
    const r = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      crt,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    return r.status === 0 ? { key: readFileSync(key), cert: readFileSync(crt) } : undefined;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}
const tls = certificate();

describe('hopscope-load: Chaos Mesh faults against a replayed Kubernetes API (TLS)', () => {
  let dir = '';
  let api: KubeReplay | undefined;
  let llm: ScriptedLlm;
  let kubeconfig = '';
  const children: ChildProcess[] = [];
  const skip = (): string | undefined => (tls ? undefined : "openssl missing (the replay server's certificate)");

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `lg-chaos-mesh-${process.pid}-`));
    llm = await startScriptedLlm({ ttftMs: 5, gapMs: 2, tokens: 3 });
    if (!tls) return;
    api = await startChaosMeshReplay(tls, TOKEN);
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
current-context: replay
contexts:
- name: replay
  context: { cluster: replay, user: replay }
clusters:
- name: replay
  cluster:
    server: ${api.url}
    certificate-authority-data: ${tls.cert.toString('base64')}
users:
- name: replay
  user: { token: ${TOKEN} }
`
    );
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await api?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A scenario against the scripted LLM with Chaos Mesh faults only. */
  const scenario = (name: string, durationS: number, faults: string): string => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `target: {url: ${llm.url}, backend: none, control: none}
load: {profile: constant, rps: 20, duration: ${durationS}s, arrivals: uniform}
request: {timeout: 5s}
chaosMesh:
  namespace: ${NS}
  hops:
    llm-vllm: {labels: {app.kubernetes.io/name: llm-vllm}}
    embedding: {labels: {app.kubernetes.io/name: embedding}}
faults:
${faults}`
    );
    return file;
  };
  const ARGS = ['--report', 'none', '--metrics', 'none', '--quiet'];
  const ours = (runId: string): string[] =>
    [...api!.objects.values()]
      .filter((o) => o.metadata.labels['hopscope.io/run-id'] === runId)
      .map((o) => `${o.kind} ${o.metadata.name}`);
  /** In-process run with the kubeconfig in the environment the client library reads. */
  const runInProcess = async (argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '',
      err = '';
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = kubeconfig;
    try {
      const code = await main(
        [...argv, ...ARGS],
        (s) => (out += s),
        (s) => (err += s),
        {
          env: { ...process.env },
          signal: new AbortController().signal,
        }
      );
      return { code, out, err };
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  };
  const spawnDriver = (argv: string[]): ChildProcess & { stderr: NodeJS.ReadableStream; output: () => string } => {
    const c = spawn(process.execPath, [join(root, 'loadgen', 'bin', 'hopscope-load.mjs'), ...argv, ...ARGS], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(c);
    let text = '';
    c.stdout!.on('data', (d) => (text += d));
    c.stderr!.on('data', (d) => (text += d));
    return Object.assign(c, { stderr: c.stderr!, output: () => text });
  };
  const exited = (c: ChildProcess): Promise<number | string> =>
    new Promise((r) => (c.exitCode !== null ? r(c.exitCode) : c.once('exit', (code, sig) => r(code ?? sig ?? -1))));

  it(
    'creates each fault at its time and deletes it at the end; the run records the resources as its faults',
    { skip: skip() },
    async () => {
      const file = scenario(
        'end',
        1.5,
        `  - {at: 0.2s, via: chaos-mesh, target: llm-vllm, kind: latency, magnitude: 200}
  - {at: 0.4s, via: chaos-mesh, target: embedding, kind: pod_kill}
`
      );
      const before = api!.requests.length;
      const { code, out, err } = await runInProcess(['--scenario', file, '--run-id', 'cm-end-1', '--json', '-']);
      assert.equal(code, 0, err);
      const seen = api!.requests.slice(before);
      assert.ok(
        seen.every((r) => r.authorization === `Bearer ${TOKEN}`),
        'the kubeconfig token on every request'
      );
      const calls = seen.map(
        (r) =>
          `${r.method} ${r.path.replace(`/apis/chaos-mesh.org/v1alpha1/namespaces/${NS}/`, '')}${r.labelSelector ? `?${r.labelSelector}` : ''}`
      );
      assert.deepEqual(
        calls.slice(0, 4),
        [
          'GET networkchaos?app.kubernetes.io/managed-by=hopscope-load',
          'GET httpchaos?app.kubernetes.io/managed-by=hopscope-load',
          'GET stresschaos?app.kubernetes.io/managed-by=hopscope-load',
          'GET podchaos?app.kubernetes.io/managed-by=hopscope-load',
        ],
        'the sweep of stale resources comes first'
      );
      assert.deepEqual(calls.slice(4, 6), ['POST networkchaos', 'POST podchaos']);
      assert.deepEqual(calls.slice(6).sort(), [
        'DELETE networkchaos/hopscope-cm-end-1-0-latency',
        'DELETE podchaos/hopscope-cm-end-1-1-pod-kill',
      ]);
      assert.deepEqual(ours('cm-end-1'), [], 'nothing left in the cluster');
      const sum = JSON.parse(out);
      assert.deepEqual(
        sum.faults.map((f: any) => [f.via, f.kind, f.resource, f.error]),
        [
          ['chaos-mesh', 'latency', `NetworkChaos ${NS}/hopscope-cm-end-1-0-latency`, undefined],
          ['chaos-mesh', 'pod_kill', `PodChaos ${NS}/hopscope-cm-end-1-1-pod-kill`, undefined],
        ]
      );
      for (const f of sum.faults) assert.ok(f.startMs > 0 && f.endMs >= f.startMs, JSON.stringify(f));
    }
  );

  it('SIGINT and SIGTERM: the run is aborted (130) and its resources deleted', { skip: skip() }, async () => {
    // Both drivers start together (their start-up is most of the time here), then one gets each signal.
    const drivers = (['SIGINT', 'SIGTERM'] as const).map((sig) => {
      const runId = `cm-${sig.toLowerCase()}-1`;
      const c = spawnDriver([
        '--scenario',
        scenario(runId, 60, '  - {at: 0.1s, via: chaos-mesh, target: llm-vllm, kind: tcp_retransmit, magnitude: 10}\n'),
        '--run-id',
        runId,
      ]);
      return { sig, runId, c };
    });
    for (const { sig, runId, c } of drivers) {
      await waitFor(`${runId}'s fault created`, async () => ours(runId).length === 1, 120_000, 100);
      c.kill(sig);
      assert.equal(await exited(c), 130, c.output());
      assert.deepEqual(ours(runId), [], sig);
      assert.ok(
        api!.requests.some(
          (r) => r.method === 'DELETE' && r.path.endsWith(`/networkchaos/hopscope-${runId}-0-tcp-retransmit`)
        ),
        sig
      );
    }
  });

  it(
    'SIGKILL leaves the resource; the next run removes it at start (its driver is gone), --cleanup RUN_ID removes one run',
    { skip: skip() },
    async () => {
      const killed = async (runId: string): Promise<void> => {
        const c = spawnDriver([
          '--scenario',
          scenario(runId, 60, '  - {at: 0.1s, via: chaos-mesh, target: embedding, kind: pod_failure, for: 50s}\n'),
          '--run-id',
          runId,
        ]);
        await waitFor(`${runId}'s fault created`, async () => ours(runId).length === 1, 120_000, 100);
        c.kill('SIGKILL');
        await exited(c);
        assert.equal(ours(runId).length, 1, 'nothing runs on SIGKILL: the resource stays');
      };
      await killed('cm-kill-a');

      // --cleanup removes run a's (whoever made them).
      const cleaned = await runInProcess(['--cleanup', 'cm-kill-a', '--kube-namespace', NS]);
      assert.equal(cleaned.code, 0, cleaned.err);
      assert.match(cleaned.out, /deleted PodChaos ai-chain\/hopscope-cm-kill-a-0-pod-failure/);
      assert.deepEqual(ours('cm-kill-a'), []);
      const again = await runInProcess(['--cleanup', 'cm-kill-a', '--kube-namespace', NS]);
      assert.match(again.out, /0 Chaos Mesh resource\(s\) of run cm-kill-a removed/);

      // The next run sweeps b's (its pid is gone from this host), then does its own.
      await killed('cm-kill-b');
      const next = await runInProcess([
        '--scenario',
        scenario('next', 1, '  - {at: 0.2s, via: chaos-mesh, target: llm-vllm, kind: latency}\n'),
        '--run-id',
        'cm-next-1',
        '--json',
        join(dir, 'next.json'),
      ]);
      assert.equal(next.code, 0, next.err);
      assert.match(
        next.err,
        /removed a stale Chaos Mesh resource, PodChaos ai-chain\/hopscope-cm-kill-b-0-pod-failure: its driver \(pid \d+ on .+\) is gone/
      );
      assert.deepEqual(ours('cm-kill-b'), []);
      assert.deepEqual(ours('cm-next-1'), []);
    }
  );

  it(
    'a cluster that refuses (a wrong token) stops the run before any request is sent, saying why',
    { skip: skip() },
    async () => {
      const bad = join(dir, 'kubeconfig-bad');
      writeFileSync(bad, readFileSync(kubeconfig, 'utf8').replace(TOKEN, 'wrong'));
      const saved = kubeconfig;
      kubeconfig = bad;
      const sent = llm.requests;
      try {
        const r = await runInProcess([
          '--scenario',
          scenario('refused', 1, '  - {at: 0.2s, via: chaos-mesh, target: llm-vllm, kind: latency}\n'),
          '--run-id',
          'cm-bad-1',
        ]);
        assert.equal(r.code, 2);
        assert.match(
          r.err,
          /Chaos Mesh faults cannot be applied: listing NetworkChaos in ai-chain: the Kubernetes API answered 401/
        );
        assert.equal(llm.requests, sent, 'no load sent');
      } finally {
        kubeconfig = saved;
      }
    }
  );
});
