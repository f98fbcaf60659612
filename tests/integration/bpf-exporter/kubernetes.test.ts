/**
 * Pod identity from the Kubernetes API, against a replay server answering with responses recorded from real API
 * servers (tests/fixtures/kubernetes/: a kind v1.36 list and watch, and a kind watch in which a pod is deleted; each
 * file names its source), over TLS (client-node refuses a plain-http server unless told to skip TLS verification),
 * the exporter pointed at it through a kubeconfig that carries the replay's CA:
 *   - it lists only its node's pods (fieldSelector=spec.nodeName), watches from the list's resourceVersion with
 *     bookmarks, sends the kubeconfig's bearer token over TLS verified with its CA, and says so in /health;
 *   - pod UID → name, namespace, allow-listed labels, controller, workload (the Deployment above a ReplicaSet);
 *   - a watch that ends is renewed from the last resourceVersion; a deleted pod stays known for a while, marked deleted;
 *   - an API server it cannot reach leaves it on /proc, saying why;
 *   - as root, a process moved into that pod's cgroup connects and the real tcp_connect probe names the pod, its labels
 *     and owner from the API, and the metrics carry the workload label.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import type { KernelEvent } from '../../../contract';
import { child, has, probeSkipReason, sh, waitForEvents } from './helpers';
import { getJson, waitFor } from './http';
import { recording, startKubeReplay } from './kube-replay';

const log = pino({ level: 'silent' });
const TOKEN = 'bx-kube-token-0123456789';
const COREDNS_UID = 'f78db027-d69e-485e-9a9e-a6dc7493b6d7';

interface KubeHealth {
  attribution: {
    mode: string;
    reason?: string;
    kubernetes?: {
      source: string;
      server: string;
      node: string;
      synced: boolean;
      pods: number;
      deletedKept: number;
      resourceVersion: string;
      watches: number;
      lastError?: string;
    };
  };
}

function kubeconfig(dir: string, server: string, user: Record<string, string>, ca?: Buffer): string {
  const file = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
current-context: bx
contexts:
- name: bx
  context: { cluster: bx, user: bx }
clusters:
- name: bx
  cluster:
    server: ${server}
${ca ? `    certificate-authority-data: ${ca.toString('base64')}\n` : ''}users:
- name: bx
  user: ${JSON.stringify(user)}
`
  );
  return file;
}

describe('bpf-exporter: pod identity from the Kubernetes API (recorded real API responses)', () => {
  let dir = '';
  const exporters: Exporter[] = [];
  const closers: Array<() => Promise<void>> = [];
  const start = async (env: Record<string, string>): Promise<Exporter> => {
    const e = await startExporter(loadConfig({ HOPSCOPE_BPF_PORT: '0', ...env }), log);
    exporters.push(e);
    return e;
  };
  const kind = recording('kind-v1.36-kube-system.json');
  const aeraki = recording('kind-aeraki-watch-delete.json');

  let tls: { key: Buffer; cert: Buffer } | undefined;
  const noTls = (): string | undefined => (tls ? undefined : "openssl missing (the replay server's certificate)");

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bx-bpf-kube-'));
    writeFileSync(join(dir, 'empty.jsonl'), '');
    if (!has('openssl')) return;
    sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'api.key'),
      '-out',
      join(dir, 'api.crt'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    tls = { key: readFileSync(join(dir, 'api.key')), cert: readFileSync(join(dir, 'api.crt')) };
  });
  after(async () => {
    await Promise.all(exporters.map((e) => e.stop()));
    for (const c of closers) await c();
    rmSync(dir, { recursive: true, force: true });
  });

  test("lists its node's pods, watches from the list's resourceVersion, token over verified TLS; UID → name, labels, owner, workload", async (t) => {
    if (noTls()) return t.skip(noTls());
    const cert = tls!.cert;
    const api = await startKubeReplay({ list: kind.list, watches: [{ body: kind.watch.response_body }] }, tls);
    closers.push(api.close);
    const e = await start({
      HOPSCOPE_BPF_NODE: 'v1.36-control-plane',
      HOPSCOPE_BPF_KUBECONFIG: kubeconfig(dir, api.url, { token: TOKEN }, cert),
      HOPSCOPE_BPF_POD_LABELS: 'k8s-app,tier',
      HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl'),
    });
    const k = await waitFor('informer synced and watching', async () => {
      const { body } = await getJson<KubeHealth>(`${e.url}/health`);
      // The exporter counts a watch once it asks for it; the replay server sees the request a moment later.
      return body.attribution.kubernetes?.synced && body.attribution.kubernetes.watches >= 1 && api.requests.length >= 2
        ? body.attribution
        : undefined;
    });
    assert.equal(k.mode, 'kubernetes');
    assert.deepEqual(
      [k.kubernetes!.source, k.kubernetes!.server, k.kubernetes!.node, k.kubernetes!.pods],
      ['kubeconfig', api.url, 'v1.36-control-plane', 8]
    );
    const [list, watch] = api.requests;
    assert.equal(list.query.get('fieldSelector'), 'spec.nodeName=v1.36-control-plane', "only this node's pods");
    assert.equal(list.query.get('watch'), null);
    assert.equal(list.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(
      [
        watch.query.get('watch'),
        watch.query.get('resourceVersion'),
        watch.query.get('allowWatchBookmarks'),
        watch.query.get('fieldSelector'),
      ],
      ['true', '554', 'true', 'spec.nodeName=v1.36-control-plane'],
      "watch from the list's resourceVersion"
    );
    // The recorded bookmark moves the resourceVersion on.
    await waitFor(
      'bookmark applied',
      async () =>
        (await getJson<KubeHealth>(`${e.url}/health`)).body.attribution.kubernetes!.resourceVersion === '550' ||
        undefined
    );
    const pods = e.pipeline.pods!;
    assert.deepEqual(pods.byUid(COREDNS_UID), {
      uid: COREDNS_UID,
      name: 'coredns-589f44dc88-4fpns',
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-dns' },
      owner: { kind: 'ReplicaSet', name: 'coredns-589f44dc88' },
      workload: { kind: 'Deployment', name: 'coredns' },
    });
    assert.deepEqual(
      pods.byUid('cb900117-5e77-4015-9a6a-60501bac2b2a'),
      {
        uid: 'cb900117-5e77-4015-9a6a-60501bac2b2a',
        name: 'etcd-v1.36-control-plane',
        namespace: 'kube-system',
        labels: { tier: 'control-plane' },
        owner: { kind: 'Node', name: 'v1.36-control-plane' },
        workload: { kind: 'Node', name: 'v1.36-control-plane' },
      },
      'a static pod: owned by its node'
    );
    assert.equal(pods.byUid('kindnet-4pxt7'), undefined, 'by UID, not by name');
  });

  test('a watch that ends is renewed from its last resourceVersion; a deleted pod stays known for a while, marked deleted', async (t) => {
    if (noTls()) return t.skip(noTls());
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    const api = await startKubeReplay(
      { list: aeraki.list, watches: [{ body: aeraki.watch.response_body, end: true }] },
      tls
    );
    closers.push(api.close);
    const e = await start({
      HOPSCOPE_BPF_NODE: 'aeraki-control-plane',
      HOPSCOPE_BPF_KUBECONFIG: kubeconfig(dir, api.url, { tokenFile: join(dir, 'token') }, tls!.cert),
      HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl'),
    });
    const k = await waitFor('second watch', async () => {
      const { body } = await getJson<KubeHealth>(`${e.url}/health`);
      return (body.attribution.kubernetes?.watches ?? 0) >= 2 ? body.attribution.kubernetes : undefined;
    });
    const watches = api.requests.filter((r) => r.query.get('watch') === 'true');
    assert.deepEqual(
      watches.map((w) => w.query.get('resourceVersion')),
      ['744175', '760032'],
      "renewed from the DELETED event's resourceVersion"
    );
    assert.ok(
      api.requests.every((r) => r.authorization === `Bearer ${TOKEN}`),
      "the token file's token"
    );
    assert.deepEqual([k!.pods, k!.deletedKept], [1, 1]);
    const pods = e.pipeline.pods!;
    assert.equal(pods.byUid('c7173455-4a47-4d7f-818d-6634df001f15')?.name, 'network-tool1');
    const gone = pods.byUid('548a29a9-9359-4858-8a18-48633d29d394');
    assert.equal(gone?.name, 'network-tool');
    assert.equal(gone?.deleted, true, 'its last sockets are still attributed to it');
  });

  test('an API server it cannot reach: /proc attribution, and /health says why', async (t) => {
    if (noTls()) return t.skip(noTls());
    const api = await startKubeReplay({ list: kind.list, watches: [] }, tls);
    const url = api.url;
    await api.close();
    const e = await start({
      HOPSCOPE_BPF_NODE: 'n1',
      HOPSCOPE_BPF_KUBECONFIG: kubeconfig(dir, url, { token: TOKEN }, tls!.cert),
      HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl'),
    });
    const k = await waitFor('list failure reported', async () => {
      const { body } = await getJson<KubeHealth>(`${e.url}/health`);
      return body.attribution.kubernetes?.lastError ? body.attribution.kubernetes : undefined;
    });
    assert.equal(k!.synced, false);
    assert.match(k!.lastError!, /^list: .*ECONNREFUSED/);
    const bad = join(dir, 'exec-kubeconfig');
    writeFileSync(
      bad,
      'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n'
    );
    const e2 = await start({ HOPSCOPE_BPF_KUBECONFIG: bad, HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl') });
    const { body } = await getJson<KubeHealth>(`${e2.url}/health`);
    assert.equal(body.attribution.mode, 'proc');
    assert.match(body.attribution.reason!, /credential plugin/);
    const e3 = await start({ HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl') });
    const { body: off } = await getJson<KubeHealth>(`${e3.url}/health`);
    assert.deepEqual([off.attribution.mode, /off-cluster/.test(off.attribution.reason!)], ['proc', true]);
  });

  test("root: a process in that pod's cgroup connects; the real probe names the pod, labels and owner from the API", async (t) => {
    const skip = probeSkipReason() ?? (has('python3') ? undefined : 'python3 missing') ?? noTls();
    if (skip) return t.skip(skip);
    const cg2 = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((p) => {
      try {
        readFileSync(join(p, 'cgroup.procs'));
        return true;
      } catch {
        return false;
      }
    });
    if (!cg2) return t.skip('no cgroup v2 mount');
    const api = await startKubeReplay({ list: kind.list, watches: [{ body: kind.watch.response_body }] }, tls);
    closers.push(api.close);
    const e = await start({
      HOPSCOPE_BPF_NODE: 'v1.36-control-plane',
      HOPSCOPE_BPF_KUBECONFIG: kubeconfig(dir, api.url, { token: TOKEN }, tls!.cert),
      HOPSCOPE_BPF_PROBES: 'tcp_connect',
      HOPSCOPE_BPF_POD_LABELS: 'k8s-app',
      HOPSCOPE_BPF_EVENT_BUDGET: '100000',
    });
    await e.pipeline.settled(60_000);
    await waitFor('informer synced', () => e.pipeline.pods!.synced || undefined);
    // The cgroup the kubelet (systemd driver, containerd) gives a container of the recorded coredns pod.
    const scope = join(
      cg2,
      'kubepods.slice/kubepods-burstable.slice',
      `kubepods-burstable-pod${COREDNS_UID.replace(/-/g, '_')}.slice`,
      `cri-containerd-${'b'.repeat(60)}${process.pid.toString(16).padStart(4, '0').slice(-4)}.scope`
    );
    mkdirSync(scope, { recursive: true });
    const py = child('python3', [
      '-c',
      `
import socket, sys
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()
print('ready', srv.getsockname()[1], flush=True); sys.stdin.readline()
socket.create_connection(srv.getsockname()).close(); print('done', flush=True); sys.stdin.readline()
`,
    ]);
    try {
      const port = Number((await py.waitLine(/^ready/)).split(' ')[1]);
      writeFileSync(join(scope, 'cgroup.procs'), String(py.pid));
      py.stdin!.write('go\n');
      await py.waitLine(/^done/);
      const [ev] = await waitForEvents(
        e.url,
        `pid=${py.pid}&type=tcp_connect`,
        (x: KernelEvent) => x.detail.dport === port
      );
      assert.deepEqual(
        [ev.pod, ev.namespace, ev.labels],
        ['coredns-589f44dc88-4fpns', 'kube-system', { 'k8s-app': 'kube-dns' }]
      );
      assert.equal(ev.detail.attribution, 'kubernetes');
      assert.equal(ev.detail.podUid, COREDNS_UID);
      assert.deepEqual(ev.detail.owner, { kind: 'ReplicaSet', name: 'coredns-589f44dc88' });
      assert.deepEqual(ev.detail.workload, { kind: 'Deployment', name: 'coredns' });
      const metrics = await (await fetch(`${e.url}/metrics`)).text();
      assert.match(
        metrics,
        /hopscope_tcp_connect_seconds_count\{pod="coredns-589f44dc88-4fpns",namespace="kube-system",node="v1.36-control-plane",label_k8s_app="kube-dns"\} [1-9]/
      );
    } finally {
      py.kill();
      await new Promise((r) => setTimeout(r, 200));
      for (let d = scope; d.startsWith(join(cg2, 'kubepods.slice')); d = dirname(d)) {
        try {
          rmdirSync(d);
        } catch {
          break;
        }
      }
    }
  });
});
