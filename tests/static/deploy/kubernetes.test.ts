/**
 * deploy/ (Kubernetes): every manifest parsed and validated against the Kubernetes OpenAPI schemas (npm
 * kubernetes-models), then what a schema cannot say: the exporter DaemonSet unprivileged with CAP_BPF, CAP_PERFMON,
 * CAP_SYS_RESOURCE, host pid and read-only host mounts; every Deployment with probes and resource limits; Services
 * selecting real pods on real ports; images pinned; env handed to our containers read by their code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { parse } from 'yaml';
import {
  envHandedVarsReadBy,
  exists,
  isPinnedImage,
  LISTEN_VARS,
  loadPartConfig,
  packageJson,
  PART_OF_IMAGE,
  readText,
  readYaml,
  readYamlDocs,
  repo,
  type Doc,
} from './support';

const MODELS: Record<string, new (d: any) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'v1/ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
/** Kinds that live in no namespace. */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

function manifestFiles(dir = 'deploy/kubernetes'): string[] {
  return readdirSync(repo(dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? manifestFiles(`${dir}/${e.name}`) : /\.ya?ml$/.test(e.name) ? [`${dir}/${e.name}`] : []
  );
}
const docs: Array<{ file: string; doc: Doc }> = manifestFiles().flatMap((file) =>
  readYamlDocs(file).map((doc) => ({ file, doc }))
);
const ofKind = (kind: string): Doc[] => docs.filter((d) => d.doc.kind === kind).map((d) => d.doc);
const workloads = (): Doc[] => [...ofKind('Deployment'), ...ofKind('DaemonSet')];
const containers = (w: Doc): Doc[] => w.spec.template.spec.containers;

/** What a Secret the user creates holds, by the variable it is handed as (others: a token). */
const SECRET_SAMPLES: Record<string, string> = {
  HOPSCOPE_DATABASE_URL: 'postgres://hopscope:sample-password@postgres.example:5432/hopscope?sslmode=require',
};

function schemaErrors(doc: Doc): string | undefined {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) return `no schema for ${doc.apiVersion} ${doc.kind}`;
  try {
    new Model(doc).validate();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

describe('Kubernetes manifests', () => {
  it('every document has apiVersion, kind, metadata.name, and our namespace', () => {
    assert.ok(docs.length >= 8);
    for (const { file, doc } of docs) {
      assert.ok(doc.apiVersion && doc.kind && doc.metadata?.name, `${file}: apiVersion/kind/metadata.name`);
      if (CLUSTER_SCOPED.has(doc.kind))
        assert.equal(doc.metadata.namespace, undefined, `${file}: ${doc.kind}/${doc.metadata.name} is cluster-scoped`);
      else assert.equal(doc.metadata.namespace, 'hopscope', `${file}: ${doc.kind}/${doc.metadata.name} namespace`);
    }
  });

  it('core kinds validate against the Kubernetes OpenAPI schema; CRDs of the Prometheus operator are structurally sound', () => {
    for (const { file, doc } of docs) {
      if (doc.apiVersion === 'monitoring.coreos.com/v1') {
        assert.ok(['ServiceMonitor', 'PodMonitor'].includes(doc.kind), `${file}: ${doc.kind}`);
        assert.ok(doc.spec.selector?.matchLabels, `${file}: ${doc.metadata.name} selects by labels`);
        const eps = doc.spec.endpoints ?? doc.spec.podMetricsEndpoints;
        assert.ok(
          eps?.length && eps.every((e: Doc) => e.port && e.path === '/metrics'),
          `${file}: named port and /metrics`
        );
        continue;
      }
      assert.equal(schemaErrors(doc), undefined, `${file}: ${doc.kind}/${doc.metadata.name}`);
    }
    // The validator is live: a wrong type is refused.
    const broken = structuredClone(ofKind('DaemonSet')[0]);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.match(schemaErrors(broken) ?? '', /containerPort/);
  });

  it('runs the exporter as a DaemonSet: host pid, not privileged, ALL dropped, CAP_BPF + CAP_PERFMON + CAP_SYS_RESOURCE, no CAP_SYS_ADMIN', () => {
    const [ds] = ofKind('DaemonSet');
    assert.equal(ds.metadata.name, 'hopscope-bpf-exporter');
    const pod = ds.spec.template.spec;
    assert.equal(pod.hostPID, true);
    assert.notEqual(pod.hostNetwork, true);
    const sc = pod.containers[0].securityContext;
    assert.equal(sc.privileged, false);
    assert.deepEqual(sc.capabilities.drop, ['ALL']);
    for (const cap of ['BPF', 'PERFMON', 'SYS_RESOURCE']) assert.ok(sc.capabilities.add.includes(cap), cap);
    assert.ok(!sc.capabilities.add.includes('SYS_ADMIN'));
    assert.equal(sc.readOnlyRootFilesystem, true);
    // The runtime's default seccomp profile, for the pod (no container opts out of it).
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    for (const c of pod.containers) assert.notEqual(c.securityContext?.seccompProfile?.type, 'Unconfined', c.name);
    // Each added capability says why it is needed, next to the list.
    const text = readText('deploy/kubernetes/bpf-exporter.yaml');
    const why = text.slice(text.indexOf('drop: ["ALL"]'), text.indexOf('add: ["BPF"'));
    for (const cap of sc.capabilities.add) assert.match(why, new RegExp(`\\b${cap}: \\S`), `why ${cap}`);
  });

  it('mounts every host path of the exporter read-only (tracefs, BTF, cgroups)', () => {
    const [ds] = ofKind('DaemonSet');
    const pod = ds.spec.template.spec;
    const hostVolumes = new Map<string, string>(
      pod.volumes.filter((v: Doc) => v.hostPath).map((v: Doc) => [v.name, v.hostPath.path])
    );
    assert.deepEqual([...hostVolumes.values()].sort(), ['/sys/fs/cgroup', '/sys/kernel/btf', '/sys/kernel/tracing']);
    for (const m of pod.containers[0].volumeMounts)
      if (hostVolumes.has(m.name)) assert.equal(m.readOnly, true, `${m.mountPath} read-only`);
  });

  it('gives every container readiness and liveness probes on a port it declares, and resource requests and limits', () => {
    for (const w of workloads()) {
      for (const c of containers(w)) {
        const ports = new Set<string | number>((c.ports ?? []).flatMap((p: Doc) => [p.name, p.containerPort]));
        for (const probe of ['readinessProbe', 'livenessProbe']) {
          assert.ok(c[probe]?.httpGet, `${w.metadata.name}/${c.name}: ${probe}`);
          assert.ok(
            ports.has(c[probe].httpGet.port),
            `${w.metadata.name}/${c.name}: ${probe} port ${c[probe].httpGet.port} is declared`
          );
        }
        for (const r of ['cpu', 'memory']) {
          assert.ok(c.resources?.limits?.[r], `${w.metadata.name}/${c.name}: limits.${r}`);
          assert.ok(c.resources?.requests?.[r], `${w.metadata.name}/${c.name}: requests.${r}`);
        }
      }
    }
    const proxy = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-backend-proxy');
    assert.ok(proxy, 'the proxy is a Deployment');
    const sc = proxy.spec.template.spec.securityContext;
    assert.equal(sc.runAsNonRoot, true);
  });

  it('selects with each workload the labels of its own pod template', () => {
    for (const w of workloads()) {
      for (const [k, v] of Object.entries(w.spec.selector.matchLabels))
        assert.equal(w.spec.template.metadata.labels[k], v, `${w.metadata.name}: ${k}`);
    }
  });

  it('Services, ServiceMonitors and PodMonitors select existing pods on ports those pods declare', () => {
    const pods = workloads().map((w) => ({
      labels: w.spec.template.metadata.labels as Record<string, string>,
      ports: containers(w).flatMap((c) => c.ports ?? []),
    }));
    const matches = (sel: Record<string, string>) =>
      pods.filter((p) => Object.entries(sel).every(([k, v]) => p.labels[k] === v));
    for (const svc of ofKind('Service')) {
      const hit = matches(svc.spec.selector);
      assert.equal(hit.length, 1, `Service ${svc.metadata.name} selects one workload`);
      for (const p of svc.spec.ports)
        assert.ok(
          hit[0].ports.some((cp: Doc) => cp.name === p.targetPort || cp.containerPort === p.targetPort),
          `Service ${svc.metadata.name}: targetPort ${p.targetPort}`
        );
    }
    for (const sm of ofKind('ServiceMonitor')) {
      const svc = ofKind('Service').find((s) =>
        Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v)
      );
      assert.ok(svc, `ServiceMonitor ${sm.metadata.name} selects a Service`);
      for (const e of sm.spec.endpoints)
        assert.ok(
          svc.spec.ports.some((p: Doc) => p.name === e.port),
          `ServiceMonitor ${sm.metadata.name}: port ${e.port}`
        );
    }
    for (const pm of ofKind('PodMonitor')) {
      const hit = matches(pm.spec.selector.matchLabels);
      assert.equal(hit.length, 1, `PodMonitor ${pm.metadata.name}`);
      for (const e of pm.spec.podMetricsEndpoints) assert.ok(hit[0].ports.some((p: Doc) => p.name === e.port));
    }
  });

  it('pins every image by version, ours at the package version', () => {
    const version = packageJson().version;
    for (const w of workloads())
      for (const c of containers(w)) {
        assert.ok(isPinnedImage(c.image), `${w.metadata.name}: ${c.image}`);
        if (c.image.startsWith('hopscope/')) assert.ok(c.image.endsWith(`:${version}`), c.image);
      }
  });

  it('hands our containers only variables their code reads', () => {
    for (const w of workloads())
      for (const c of containers(w)) {
        const part = PART_OF_IMAGE[c.image.split(':')[0]];
        if (!part) continue;
        const read = envHandedVarsReadBy(part);
        // NODE_OPTIONS is read by Node itself (the proxy's heap bound under its memory limit).
        for (const e of c.env ?? [])
          if (e.name !== 'NODE_OPTIONS')
            assert.ok(read.has(e.name), `${w.metadata.name}: ${e.name} is read by ${part}/`);
      }
  });

  it('hands our containers values their own config modules accept (Secrets and the downward API given sample values)', async () => {
    let checked = 0;
    for (const w of workloads())
      for (const c of containers(w)) {
        const part = PART_OF_IMAGE[c.image.split(':')[0]];
        if (!part) continue;
        const env = Object.fromEntries(
          (c.env ?? []).map((e: Doc) => [
            e.name,
            e.value ??
              (e.valueFrom?.secretKeyRef
                ? (SECRET_SAMPLES[e.name] ?? 'sample-token-0123456789abcdef')
                : 'sample-node-0'),
          ])
        );
        await assert.doesNotReject(
          loadPartConfig(part, env).then(() => undefined),
          `${w.metadata.name}: ${part} accepts its environment`
        );
        checked++;
      }
    assert.equal(checked, 2);
  });

  it('binds our containers to all interfaces, on the ports they declare', () => {
    for (const w of workloads())
      for (const c of containers(w)) {
        const part = PART_OF_IMAGE[c.image.split(':')[0]];
        if (!part) continue;
        const env = Object.fromEntries((c.env ?? []).map((e: Doc) => [e.name, e.value]));
        const lv = LISTEN_VARS[part];
        assert.equal(env[lv.host], '0.0.0.0', `${w.metadata.name}: ${lv.host}`);
        assert.deepEqual(
          lv.ports.map((v) => Number(env[v])).sort(),
          c.ports.map((p: Doc) => p.containerPort).sort(),
          `${w.metadata.name}: ports`
        );
      }
  });

  it('the kustomization names files that exist, and generates the ConfigMap the Collector mounts', () => {
    const k = readYaml('deploy', 'kustomization.yaml');
    for (const r of k.resources) assert.ok(exists('deploy', r), `deploy/${r}`);
    const gen = k.configMapGenerator.find((g: Doc) => g.name === 'hopscope-otel-collector');
    for (const f of gen.files) assert.ok(exists('deploy', f.split('=').at(-1)), f);
    const col = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-otel-collector');
    assert.ok(col.spec.template.spec.volumes.some((v: Doc) => v.configMap?.name === gen.name));
    const files = manifestFiles()
      .filter((f) => !f.includes('/monitoring/'))
      .map((f) => f.replace(/^deploy\//, ''));
    assert.deepEqual(
      [...k.resources].sort(),
      files.sort(),
      'every manifest (except the operator CRs) is in the kustomization'
    );
  });
});

describe("Kubernetes: the Collector's API access, and the proxy's shared database", () => {
  const collector = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-otel-collector');
  const proxy = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-backend-proxy');
  /** Whether these RBAC rules allow `verb` on `group/resource`. */
  const allows = (rules: Doc[], group: string, resource: string, verb: string): boolean =>
    rules.some(
      (r) =>
        r.apiGroups.includes(group) &&
        (r.resources.includes(resource) || r.resources.includes('*')) &&
        (r.verbs.includes(verb) || r.verbs.includes('*'))
    );

  it('runs the Collector under a ServiceAccount bound to a ClusterRole that may read what k8sattributes needs, and nothing to write', () => {
    const pod = collector.spec.template.spec;
    assert.notEqual(pod.automountServiceAccountToken, false, "k8sattributes needs the account's token");
    const sa = ofKind('ServiceAccount').find((a) => a.metadata.name === pod.serviceAccountName);
    assert.ok(sa, `ServiceAccount ${pod.serviceAccountName} exists`);
    const bindings = ofKind('ClusterRoleBinding').filter((b) =>
      b.subjects.some(
        (s: Doc) => s.kind === 'ServiceAccount' && s.name === sa.metadata.name && s.namespace === sa.metadata.namespace
      )
    );
    assert.ok(bindings.length > 0, 'bound cluster-wide (instrumented pods live in every namespace)');
    const rules = bindings.flatMap((b) => {
      assert.equal(b.roleRef.kind, 'ClusterRole');
      const role = ofKind('ClusterRole').find((r) => r.metadata.name === b.roleRef.name);
      assert.ok(role, `ClusterRole ${b.roleRef.name} exists`);
      return role.rules as Doc[];
    });
    for (const verb of ['get', 'list', 'watch']) {
      for (const res of ['pods', 'namespaces']) assert.ok(allows(rules, '', res, verb), `${verb} ${res}`);
      assert.ok(
        allows(rules, 'apps', 'replicasets', verb),
        `${verb} replicasets (the owner that names k8s.deployment.name)`
      );
    }
    for (const r of rules) for (const v of r.verbs) assert.ok(['get', 'list', 'watch'].includes(v), `read-only (${v})`);
    assert.equal(
      allows([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], 'apps', 'replicasets', 'get'),
      false,
      'the check is live'
    );
  });

  it('runs one Collector (tail sampling needs every span of a trace in one), with both config files of its ConfigMap', () => {
    assert.equal(collector.spec.replicas, 1);
    const k = readYaml('deploy', 'kustomization.yaml');
    const files = k.configMapGenerator
      .find((g: Doc) => g.name === 'hopscope-otel-collector')
      .files.map((f: string) => f.split('=')[0]);
    const args: string[] = collector.spec.template.spec.containers[0].args;
    const mount = collector.spec.template.spec.containers[0].volumeMounts.find(
      (m: Doc) => m.name === 'config'
    ).mountPath;
    assert.deepEqual(
      args.filter((a) => a.startsWith('--config=')),
      files.map((f: string) => `--config=${mount}/${f}`)
    );
  });

  it('hands every proxy replica the same PostgreSQL from a Secret, required (two replicas must not keep state apart)', () => {
    assert.ok(proxy.spec.replicas >= 2);
    const c = proxy.spec.template.spec.containers[0];
    const db = c.env.find((e: Doc) => e.name === 'HOPSCOPE_DATABASE_URL');
    assert.ok(db?.valueFrom?.secretKeyRef, 'HOPSCOPE_DATABASE_URL from a Secret (it holds a password)');
    assert.notEqual(db.valueFrom.secretKeyRef.optional, true);
    assert.ok(!c.env.some((e: Doc) => e.name === 'HOPSCOPE_DATA_DIR'), 'no embedded database per replica');
    // The file says how to create that Secret.
    const text = readText('deploy', 'kubernetes', 'backend-proxy.yaml');
    assert.ok(
      text.includes(`create secret generic ${db.valueFrom.secretKeyRef.name}`) &&
        text.includes(`--from-literal=${db.valueFrom.secretKeyRef.key}=`)
    );
    // Readiness does not depend on the database: /metrics.
    assert.equal(c.readinessProbe.httpGet.path, '/metrics');
  });
});

describe("Kubernetes: the bpf-exporter's API access, token and network", () => {
  const [ds] = ofKind('DaemonSet');
  const pod = ds.spec.template.spec;

  it('gives the exporter a ServiceAccount that may only list and watch pods, and uses it', () => {
    const sa = ofKind('ServiceAccount').find((a) => a.metadata.name === pod.serviceAccountName);
    assert.ok(sa, `ServiceAccount ${pod.serviceAccountName} exists`);
    assert.notEqual(pod.automountServiceAccountToken, false, 'its token is mounted (the informer reads it)');
    const bindings = ofKind('ClusterRoleBinding').filter((b) =>
      b.subjects?.some(
        (x: Doc) => x.kind === 'ServiceAccount' && x.name === sa.metadata.name && x.namespace === sa.metadata.namespace
      )
    );
    assert.equal(bindings.length, 1, 'bound cluster-wide once (the pods of its node live in every namespace)');
    assert.equal(bindings[0].roleRef.kind, 'ClusterRole');
    const role = ofKind('ClusterRole').find((r) => r.metadata.name === bindings[0].roleRef.name);
    assert.deepEqual(
      role.rules,
      [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }],
      'read-only, pods only, list and watch only (the informer gets no pod by name)'
    );
  });

  it('binds the exporter beyond loopback only with its token, taken from a Secret the file says how to create', () => {
    const env = new Map<string, Doc>(containers(ds)[0].env.map((e: Doc) => [e.name, e]));
    assert.equal(env.get('HOPSCOPE_BPF_HOST').value, '0.0.0.0');
    const ref = env.get('HOPSCOPE_BPF_TOKEN')?.valueFrom?.secretKeyRef;
    assert.ok(ref?.name && ref.key, 'HOPSCOPE_BPF_TOKEN from a Secret, never inline');
    assert.notEqual(ref.optional, true, 'required: without it the exporter refuses to listen on 0.0.0.0');
    const text = readText('deploy', 'kubernetes', 'bpf-exporter.yaml');
    assert.ok(text.includes(`create secret generic ${ref.name}`) && text.includes(`--from-literal=${ref.key}=`));
  });

  it("hands the proxy the exporters' token from the same Secret and key, required, and the proxy sends it", async () => {
    const proxy = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-backend-proxy');
    const proxyEnv = new Map<string, Doc>(containers(proxy)[0].env.map((e: Doc) => [e.name, e]));
    const theirs = new Map<string, Doc>(containers(ds)[0].env.map((e: Doc) => [e.name, e])).get('HOPSCOPE_BPF_TOKEN')
      .valueFrom.secretKeyRef;
    const ref = proxyEnv.get('HOPSCOPE_EXPORTER_TOKEN')?.valueFrom?.secretKeyRef;
    assert.deepEqual(
      [ref?.name, ref?.key],
      [theirs.name, theirs.key],
      "HOPSCOPE_EXPORTER_TOKEN from the exporters' Secret"
    );
    assert.notEqual(ref.optional, true, 'required: without it every exporter answers 401');
    assert.match(proxyEnv.get('HOPSCOPE_EXPORTER_URLS').value, /^dns\+http:\/\/hopscope-bpf-exporter\./);
    // What the proxy makes of that environment: the token it sends.
    const env = Object.fromEntries(
      [...proxyEnv.values()].map((e: Doc) => [
        e.name,
        e.value ??
          (e.name === 'HOPSCOPE_DATABASE_URL'
            ? SECRET_SAMPLES[e.name]
            : `sample-${e.valueFrom.secretKeyRef.name}-0123456789`),
      ])
    );
    const cfg = (await loadPartConfig('backend-proxy', env)) as { exporterToken?: string };
    assert.equal(cfg.exporterToken, `sample-${theirs.name}-0123456789`);
  });

  it('puts a NetworkPolicy in front of the exporter: its port, from the proxy and Prometheus only', () => {
    const labels = ds.spec.template.metadata.labels as Record<string, string>;
    const np = ofKind('NetworkPolicy').find((p) =>
      Object.entries(p.spec.podSelector.matchLabels).every(([k, v]) => labels[k] === v)
    );
    assert.ok(np, 'a NetworkPolicy selects the exporter pods');
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const ports = containers(ds)[0].ports.flatMap((p: Doc) => [p.name, p.containerPort]);
    const proxyLabels = ofKind('Deployment').find((d) => d.metadata.name === 'hopscope-backend-proxy').spec.template
      .metadata.labels;
    for (const rule of np.spec.ingress) {
      assert.ok(rule.from?.length, 'every rule names who (no allow-all)');
      assert.ok(rule.ports?.length && rule.ports.every((p: Doc) => ports.includes(p.port)), "only the exporter's port");
    }
    const peers: Doc[] = np.spec.ingress.flatMap((r: Doc) => r.from);
    assert.ok(
      peers.some(
        (f) => !f.namespaceSelector && Object.entries(f.podSelector.matchLabels).every(([k, v]) => proxyLabels[k] === v)
      ),
      'the proxy, in this namespace'
    );
    assert.ok(
      peers.some((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'prometheus'),
      'Prometheus'
    );
    assert.ok(
      peers.every((f) => Object.keys(f.podSelector?.matchLabels ?? {}).length > 0),
      'no peer is a whole namespace or the world'
    );
  });

  it("keeps the exporter's pod, namespace and node labels when Prometheus scrapes it (honor labels)", () => {
    const pm = readYamlDocs('deploy/kubernetes/monitoring/servicemonitors.yaml').find(
      (d) => d.kind === 'PodMonitor' && d.metadata.name === 'hopscope-bpf-exporter'
    );
    assert.ok(
      pm.spec.podMetricsEndpoints.length && pm.spec.podMetricsEndpoints.every((e: Doc) => e.honorLabels === true)
    );
    const cm = ofKind('ConfigMap').find((c) => c.metadata.name === 'hopscope-prometheus-scrape');
    const jobs = parse(cm.data['scrape-configs.yaml']).scrape_configs as Doc[];
    assert.equal(jobs.find((j) => j.job_name === 'hopscope-bpf-exporter').honor_labels, true);
  });
});
