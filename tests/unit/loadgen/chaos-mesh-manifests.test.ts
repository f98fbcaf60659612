/**
 * Scenario faults via Chaos Mesh: each kind with an equivalent becomes the Chaos Mesh resource that does it, valid
 * against Chaos Mesh's own CRD schema (v2.8.3, tests/fixtures/chaos-mesh/, unknown fields refused as strict field
 * validation would); the others are refused naming the alternative; names and labels fit Kubernetes' limits;
 * `--dry-run` prints YAML documents on stdout and nothing else; the scenario schema says what a chaos-mesh fault needs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Scenario, type ScenarioFault } from '../../../contract/scenario';
import { main, parseCli } from '../../../loadgen/src/cli';
import { staleReason } from '../../../loadgen/src/chaos-mesh/cleanup';
import { manifestFor, RefusedFault, type ManifestContext } from '../../../loadgen/src/chaos-mesh/manifests';
import { RESOURCES, resourceName, runIdLabel } from '../../../loadgen/src/chaos-mesh/resources';
import { UsageError } from '../../../loadgen/src/load/errors';
import { appliedAs } from '../../../src/datasource/frames/fault-applied-as';
import { chaosMeshValidators, crdFixture } from '../../support/chaos-mesh-crds';

const validators = chaosMeshValidators();
const ctx: ManifestContext = {
  runId: 'chaos-test-1a2b',
  chaosMesh: {
    namespace: 'ai-chain',
    hops: {
      'llm-vllm': { labels: { 'app.kubernetes.io/name': 'llm-vllm' }, container: 'vllm' },
      rag: { labels: { app: 'rag' }, port: 3313, namespace: 'rag-ns' },
    },
  },
  owner: 'host-a/4242',
  expiresAt: new Date('2026-12-02T06:00:00Z'),
  requestTimeoutS: 30,
};
const fault = (f: Partial<ScenarioFault>): ScenarioFault =>
  ({ at: 5, via: 'chaos-mesh', target: 'llm-vllm', kind: 'latency', ...f }) as ScenarioFault;

const dir = mkdtempSync(join(tmpdir(), `lg-chaos-mesh-${process.pid}-`));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('Chaos Mesh manifests', () => {
  it('map each kind to its resource, valid against the CRD schema of Chaos Mesh v2.8.3', () => {
    const cases: Array<[Partial<ScenarioFault>, string, (spec: any) => void]> = [
      [
        { kind: 'latency', magnitude: 250, for: 20 },
        'NetworkChaos',
        (s) => {
          assert.equal(s.action, 'delay');
          assert.deepEqual(s.delay, { latency: '250ms' });
          assert.equal(s.duration, '20s');
        },
      ],
      [
        { kind: 'tcp_retransmit', magnitude: 12.5 },
        'NetworkChaos',
        (s) => {
          assert.equal(s.action, 'loss');
          assert.deepEqual(s.loss, { loss: '12.5' });
          assert.equal(s.duration, undefined, 'no `for`: until deleted at the end');
        },
      ],
      [
        { kind: 'error', target: 'rag', for: 1.5 },
        'HTTPChaos',
        (s) => {
          assert.equal(s.target, 'Response');
          assert.deepEqual(s.replace, { code: 500 });
          assert.equal(s.port, 3313);
          assert.equal(s.duration, '1500ms');
          assert.deepEqual(s.selector, { namespaces: ['rag-ns'], labelSelectors: { app: 'rag' } });
        },
      ],
      [
        { kind: 'timeout', target: 'rag' },
        'HTTPChaos',
        (s) => {
          assert.equal(s.target, 'Request');
          assert.equal(s.delay, '35s', 'past the 30 s request timeout');
        },
      ],
      [
        { kind: 'cpu_hog', magnitude: 2 },
        'StressChaos',
        (s) => {
          assert.deepEqual(s.stressors, { cpu: { workers: 2, load: 100 } });
          assert.deepEqual(s.containerNames, ['vllm']);
        },
      ],
      [
        { kind: 'pod_kill' },
        'PodChaos',
        (s) => {
          assert.equal(s.action, 'pod-kill');
          assert.equal(s.mode, 'one');
        },
      ],
      [
        { kind: 'pod_failure', magnitude: 2, for: 10 },
        'PodChaos',
        (s) => {
          assert.equal(s.action, 'pod-failure');
          assert.deepEqual([s.mode, s.value], ['fixed', '2']);
        },
      ],
      [
        { kind: 'container_kill', pod: 'llm-vllm-0' },
        'PodChaos',
        (s) => {
          assert.equal(s.action, 'container-kill');
          assert.deepEqual(s.containerNames, ['vllm']);
          assert.deepEqual(s.selector, { pods: { 'ai-chain': ['llm-vllm-0'] } }, 'the named pod only');
        },
      ],
    ];
    for (const [f, kind, check] of cases) {
      const m = manifestFor(fault(f), 3, ctx);
      assert.equal(m.kind, kind, f.kind);
      assert.equal(m.apiVersion, 'chaos-mesh.org/v1alpha1');
      assert.equal(validators[kind](m), undefined, `${f.kind}: ${validators[kind](m)}`);
      check(m.spec);
    }
  });

  it('the schemas catch what they should (a wrong mode, a field Chaos Mesh does not have)', () => {
    const m = manifestFor(fault({ kind: 'latency' }), 0, ctx);
    assert.match(validators.NetworkChaos({ ...m, spec: { ...m.spec, mode: 'most' } })!, /\/spec\/mode/);
    assert.match(validators.NetworkChaos({ ...m, spec: { ...m.spec, latency: '1s' } })!, /additional properties/);
    assert.match(validators.NetworkChaos({ ...m, spec: { ...m.spec, delay: { latency: '1 second' } } })!, /pattern/);
    for (const f of ['networkchaos', 'httpchaos', 'stresschaos', 'podchaos']) {
      const crd = crdFixture(f);
      assert.equal(crd.source.release, 'v2.8.3');
      assert.equal(crd.source.path, `config/crd/bases/chaos-mesh.org_${f}.yaml`);
      assert.equal(RESOURCES[crd.kind as keyof typeof RESOURCES], crd.plural);
    }
  });

  it('refuses the kinds Chaos Mesh cannot do, naming the alternative', () => {
    const refused = (f: Partial<ScenarioFault>): string => {
      try {
        manifestFor(fault(f), 0, ctx);
      } catch (e) {
        assert.ok(e instanceof RefusedFault);
        return e.message;
      }
      assert.fail(`${f.kind} was not refused`);
    };
    assert.match(refused({ kind: 'gpu_oom' }), /no GPU fault.*via: chain/);
    assert.match(refused({ kind: 'kv_cache_thrash' }), /via: chain/);
    assert.match(refused({ kind: 'tls_slow_handshake' }), /use latency via chaos-mesh/);
    assert.match(refused({ kind: 'error', magnitude: 0.3, target: 'rag' }), /no per-request probability.*via: chain/);
    assert.match(refused({ kind: 'error' }), /set chaosMesh\.hops\.llm-vllm\.port/);
    assert.match(refused({ kind: 'container_kill', target: 'rag' }), /chaosMesh\.hops\.rag\.container/);
    assert.match(refused({ kind: 'latency', magnitude: 0 }), /must be > 0/);
    assert.match(refused({ kind: 'pod_kill', magnitude: 1.5 }), /integer/);
    assert.match(refused({ target: 'embedding' }), /no chaosMesh\.hops\.embedding/);
  });

  it('names fit DNS-1123 and labels fit 63 characters, whatever the run id', () => {
    const long = `${'a'.repeat(100)}:${'B'.repeat(20)}`;
    const n = resourceName(long, 12, 'container_kill');
    assert.ok(n.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n), n);
    assert.notEqual(
      resourceName(`${'a'.repeat(100)}x`, 0, 'latency'),
      resourceName(`${'a'.repeat(100)}y`, 0, 'latency')
    );
    assert.equal(runIdLabel('run-1'), 'run-1');
    assert.match(runIdLabel('a:b'), /^h-[0-9a-f]{20}$/);
    assert.equal(runIdLabel(long).length, 22);
    const m = manifestFor(fault({}), 0, { ...ctx, runId: long });
    assert.equal(m.metadata.annotations['hopscope.io/run-id'], long, 'the whole run id in the annotation');
    assert.equal(validators.NetworkChaos(m), undefined);
  });

  it('a resource is stale when it expired, or its driver on this host is gone; never while it may be running', () => {
    const r = (owner: string, expires: string) => ({
      kind: 'NetworkChaos' as const,
      namespace: 'ns',
      name: 'x',
      annotations: { 'hopscope.io/owner': owner, 'hopscope.io/expires-at': expires },
    });
    const now = Date.parse('2026-12-02T05:00:00Z');
    const alive = (pid: number): boolean => pid === 1;
    assert.match(staleReason(r('other/1', '2026-12-02T04:59:59Z'), now, 'me', alive)!, /expired/);
    assert.match(staleReason(r('me/99', '2026-12-02T06:00:00Z'), now, 'me', alive)!, /pid 99 on me/);
    assert.equal(staleReason(r('me/1', '2026-12-02T06:00:00Z'), now, 'me', alive), undefined, 'alive');
    assert.equal(staleReason(r('other/99', '2026-12-02T06:00:00Z'), now, 'me', alive), undefined, 'another host');
  });
});

describe('scenarios with Chaos Mesh faults', () => {
  const base = { load: { duration: 60 } };
  const issues = (s: unknown): string =>
    Scenario.safeParse(s)
      .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('\n') ?? '';

  it('a chaos-mesh fault needs the chaosMesh section and its hop; cluster kinds need a cluster', () => {
    assert.match(
      issues({ ...base, faults: [{ at: 1, via: 'chaos-mesh', target: 'rag', kind: 'latency' }] }),
      /faults\.0\.via: via: chaos-mesh needs the scenario's chaosMesh/
    );
    assert.match(
      issues({
        ...base,
        chaosMesh: { namespace: 'ns', hops: { rag: { labels: { a: 'b' } } } },
        faults: [{ at: 1, via: 'chaos-mesh', target: 'llm-tgi', kind: 'latency' }],
      }),
      /no chaosMesh\.hops\.llm-tgi/
    );
    assert.match(
      issues({ ...base, faults: [{ at: 1, target: 'rag', kind: 'pod_kill' }] }),
      /pod_kill needs a cluster \(via: chaos-mesh/
    );
    assert.match(issues({ ...base, chaosMesh: { namespace: 'Bad_NS', hops: {} } }), /DNS label/);
    assert.equal(issues({ ...base, faults: [{ at: 1, target: 'rag', kind: 'latency' }] }), '', 'via defaults to chain');
  });

  it('the shipped chaos-mesh-cluster scenario: --dry-run prints only YAML documents, each valid, labelled with the run id', async () => {
    let out = '',
      err = '';
    const code = await main(
      ['--scenario', 'chaos-mesh-cluster', '--dry-run', '--run-id', 'dry-1'],
      (s) => (out += s),
      (s) => (err += s),
      { env: {} }
    );
    assert.equal(code, 0, err);
    assert.equal(err, '');
    const docs = parseAllDocuments(out);
    assert.equal(docs.length, 3);
    const kinds = docs.map((d) => {
      assert.equal(d.errors.length, 0);
      const m = d.toJS();
      assert.equal(validators[m.kind](m), undefined, `${m.kind}: ${validators[m.kind](m)}`);
      assert.equal(m.metadata.labels['hopscope.io/run-id'], 'dry-1');
      assert.equal(m.metadata.labels['app.kubernetes.io/managed-by'], 'hopscope-load');
      return `${m.kind} ${m.spec.action ?? m.spec.target}`;
    });
    assert.deepEqual(kinds, ['NetworkChaos delay', 'HTTPChaos Response', 'PodChaos pod-kill']);
  });

  it('a refused kind is a usage error before any run; --cleanup needs a namespace', () => {
    const file = join(dir, 'gpu.yaml');
    writeFileSync(
      file,
      'load: {duration: 30s}\ntarget: {control: none}\nchaosMesh: {namespace: ns, hops: {llm-vllm: {labels: {app: vllm}}}}\nfaults:\n  - {at: 5s, via: chaos-mesh, target: llm-vllm, kind: gpu_oom}\n'
    );
    assert.throws(
      () => parseCli(['--scenario', file, '--report', 'none'], {}),
      (e: unknown) =>
        e instanceof UsageError && /faults\[0\] \(gpu_oom on llm-vllm\): Chaos Mesh has no GPU fault/.test(e.message)
    );
    assert.throws(() => parseCli(['--cleanup', 'run-1'], {}), /--kube-namespace NS, or --scenario/);
    assert.deepEqual(parseCli(['--cleanup', 'run-1', '--kube-namespace', 'x'], {}), {
      cleanup: 'run-1',
      namespaces: ['x'],
    });
    assert.deepEqual(parseCli(['--cleanup', 'run-1', '--scenario', 'chaos-mesh-cluster'], {}), {
      cleanup: 'run-1',
      namespaces: ['ai-chain'],
    });
  });
});

describe('the run page names what applied a fault', () => {
  it('the chain fault id, or the Chaos Mesh resource', () => {
    assert.equal(appliedAs({ atS: 1, target: 'rag', kind: 'latency', id: 'f-1' }), 'chain fault f-1');
    assert.equal(
      appliedAs({
        atS: 1,
        target: 'rag',
        kind: 'pod_kill',
        via: 'chaos-mesh',
        id: 'PodChaos/ns/n',
        resource: 'PodChaos ns/n',
      }),
      'Chaos Mesh PodChaos ns/n'
    );
  });
});
