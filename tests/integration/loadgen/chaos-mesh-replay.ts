/**
 * A stand-in Kubernetes API server for hopscope-load's Chaos Mesh faults (the API server and Chaos Mesh cannot run
 * here). It serves chaos-mesh.org/v1alpha1 NetworkChaos, HTTPChaos, StressChaos and PodChaos under
 * /apis/chaos-mesh.org/v1alpha1/namespaces/NS/PLURAL[/NAME]: create (POST), list with an equality label selector
 * (GET) and delete (DELETE), each answered in the shape a real API server answered for namespaced custom objects
 * (tests/fixtures/kubernetes/kind-v1.36-custom-objects.json, recorded by k8s-openapi-tests on a kind v1.36 cluster:
 * the create's 201 object with uid, resourceVersion, generation, creationTimestamp and managedFields; the list's
 * `<Kind>List`; the delete's Status Success with details; the 422 Status Invalid), with the group, kind, plural,
 * name, namespace, labels and spec of the object at hand. Like the API server it validates a created object against
 * its CRD's schema (Chaos Mesh v2.8.3's, tests/fixtures/chaos-mesh/), keeps what was created until deleted, answers
 * 409 AlreadyExists and 404 NotFound as Status objects, and requires the bearer token. Every request is logged.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chaosMeshValidators } from '../../support/chaos-mesh-crds';

interface Recorded {
  response_status_code: number;
  response_body: string;
}
const REC = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/kubernetes/kind-v1.36-custom-objects.json'), 'utf8')
) as Record<'create' | 'list' | 'delete' | 'invalid', Recorded>;
const recorded = (r: Recorded): any => JSON.parse(r.response_body);

const GROUP = 'chaos-mesh.org';
const VERSION = 'v1alpha1';
const KINDS: Record<string, string> = {
  networkchaos: 'NetworkChaos',
  httpchaos: 'HTTPChaos',
  stresschaos: 'StressChaos',
  podchaos: 'PodChaos',
};

export interface SeenKubeRequest {
  method: string;
  path: string;
  labelSelector?: string;
  authorization?: string;
}

export interface KubeReplay {
  url: string;
  requests: SeenKubeRequest[];
  /** What exists now, by `plural/namespace/name`. */
  objects: Map<string, any>;
  close(): Promise<void>;
}

function status(code: number, reason: string, message: string, details: Record<string, unknown>): string {
  // The Status shape of the recording's 422, with this failure's reason, message and code.
  const s = recorded(REC.invalid);
  return JSON.stringify({ ...s, message, reason, details, code });
}

const matches = (labels: Record<string, string> = {}, selector: string | undefined): boolean =>
  !selector ||
  selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return labels[k] === v;
  });

export async function startChaosMeshReplay(tls: { key: Buffer; cert: Buffer }, token: string): Promise<KubeReplay> {
  const requests: SeenKubeRequest[] = [];
  const objects = new Map<string, any>();
  const validate = chaosMeshValidators();
  let resourceVersion = Number(recorded(REC.create).metadata.resourceVersion);
  const send = (res: ServerResponse, code: number, body: string): void => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(body.endsWith('\n') ? body : `${body}\n`);
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'https://x');
      requests.push({
        method: req.method ?? '',
        path: u.pathname,
        labelSelector: u.searchParams.get('labelSelector') ?? undefined,
        authorization: req.headers.authorization,
      });
      if (req.headers.authorization !== `Bearer ${token}`)
        return send(res, 401, status(401, 'Unauthorized', 'Unauthorized', {}));
      const m = /^\/apis\/chaos-mesh\.org\/v1alpha1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(u.pathname);
      const kind = m && KINDS[m[2]];
      if (!m || !kind)
        return send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource', {}));
      const [, ns, plural, name] = m;
      const key = (n: string): string => `${plural}/${ns}/${n}`;
      if (req.method === 'POST' && !name) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        const n = body?.metadata?.name as string;
        const errors = validate[kind](body);
        if (errors)
          return send(
            res,
            422,
            status(422, 'Invalid', `${kind}.${GROUP} "${n}" is invalid: ${errors}`, { name: n, group: GROUP, kind })
          );
        if (objects.has(key(n)))
          return send(
            res,
            409,
            status(409, 'AlreadyExists', `${plural}.${GROUP} "${n}" already exists`, {
              name: n,
              group: GROUP,
              kind: plural,
            })
          );
        const shape = recorded(REC.create);
        const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const obj = {
          ...body,
          apiVersion: `${GROUP}/${VERSION}`,
          kind,
          metadata: {
            ...body.metadata,
            creationTimestamp: now,
            generation: shape.metadata.generation,
            managedFields: [
              {
                ...shape.metadata.managedFields[0],
                apiVersion: `${GROUP}/${VERSION}`,
                time: now,
                fieldsV1: { 'f:spec': {} },
              },
            ],
            namespace: ns,
            resourceVersion: String(++resourceVersion),
            uid: randomUUID(),
          },
        };
        objects.set(key(n), obj);
        return send(res, REC.create.response_status_code, JSON.stringify(obj));
      }
      if (req.method === 'GET' && !name) {
        const shape = recorded(REC.list);
        const items = [...objects.entries()]
          .filter(
            ([k, o]) =>
              k.startsWith(`${plural}/${ns}/`) &&
              matches(o.metadata.labels, u.searchParams.get('labelSelector') ?? undefined)
          )
          .map(([, o]) => o);
        return send(
          res,
          REC.list.response_status_code,
          JSON.stringify({
            ...shape,
            apiVersion: `${GROUP}/${VERSION}`,
            items,
            kind: `${kind}List`,
            metadata: { ...shape.metadata, resourceVersion: String(resourceVersion) },
          })
        );
      }
      if (req.method === 'DELETE' && name) {
        const obj = objects.get(key(name));
        if (!obj)
          return send(
            res,
            404,
            status(404, 'NotFound', `${plural}.${GROUP} "${name}" not found`, { name, group: GROUP, kind: plural })
          );
        objects.delete(key(name));
        const shape = recorded(REC.delete);
        return send(
          res,
          REC.delete.response_status_code,
          JSON.stringify({ ...shape, details: { name, group: GROUP, kind: plural, uid: obj.metadata.uid } })
        );
      }
      send(res, 405, status(405, 'MethodNotAllowed', `${req.method} is not supported here`, {}));
    });
  };
  const server = createServer({ key: tls.key, cert: tls.cert }, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    objects,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
