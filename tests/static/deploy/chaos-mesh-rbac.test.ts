/**
 * deploy/chaos-mesh/: the Role hopscope-load needs for a scenario's Chaos Mesh faults is valid (Kubernetes OpenAPI,
 * npm kubernetes-models) and minimal: exactly the chaos-mesh.org resources the driver creates, and exactly the verbs
 * its client calls (create, delete, list), bound by a RoleBinding; the kustomization names it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { RESOURCES } from '../../../loadgen/src/chaos-mesh/resources';
import { readText, readYaml, readYamlDocs } from './support';

describe('Chaos Mesh RBAC (deploy/chaos-mesh)', () => {
  const docs = readYamlDocs('deploy', 'chaos-mesh', 'rbac.yaml');
  const role = docs.find((d) => d.kind === 'Role');
  const binding = docs.find((d) => d.kind === 'RoleBinding');

  it('a valid Role and RoleBinding, namespaced by the kustomization', () => {
    new Role(role).validate();
    new RoleBinding(binding).validate();
    assert.equal(binding.roleRef.name, role.metadata.name);
    assert.equal(binding.roleRef.kind, 'Role');
    const k = readYaml('deploy', 'chaos-mesh', 'kustomization.yaml');
    assert.deepEqual(k.resources, ['rbac.yaml']);
    assert.ok(k.namespace);
  });

  it('grants exactly the resources and verbs the driver uses', () => {
    assert.equal(role.rules.length, 1);
    const [rule] = role.rules;
    assert.deepEqual(rule.apiGroups, ['chaos-mesh.org']);
    assert.deepEqual([...rule.resources].sort(), Object.values(RESOURCES).sort());
    assert.deepEqual([...rule.verbs].sort(), ['create', 'delete', 'list']);
    const client = readText('loadgen', 'src', 'chaos-mesh', 'client.ts');
    const calls = [...client.matchAll(/this\.api\.(\w+)NamespacedCustomObject/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(calls)].sort(), ['create', 'delete', 'list'], 'the client calls no other verb');
  });
});
