/**
 * The pods of this node, by UID, from the Kubernetes API: @kubernetes/client-node's informer (`makeInformer`: list,
 * then watch from the list's resourceVersion; renewed from the last resourceVersion when the server ends a watch;
 * relist on 410 Gone) on `/api/v1/pods` with `fieldSelector=spec.nodeName=<node>`, so the exporter holds only its own
 * node's pods (a kubelet runs at most a few hundred). The list is CoreV1Api's, paged; the watch asks for bookmarks
 * and a server-side timeout. The library stops on an error: this restarts it with backoff (a failed list lists
 * again, a failed watch watches again from the resourceVersion held), and replaces an informer whose watch stays
 * silent (relisting).
 * Each pod is kept here slim, by UID: name, namespace, the allow-listed labels, its controller and the workload above
 * it. A deleted pod stays known for a while (its sockets may still retransmit), and this cache is bounded.
 */
import {
  CoreV1Api,
  ListWatch,
  makeInformer,
  Observable,
  type ConfigurationOptions,
  type Informer,
  type ObjectCache,
  type RequestContext,
  type ResponseContext,
  type V1Pod,
  type V1PodList,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { BoundedCache } from '../bounded-cache';
import type { KubeConnection } from './connection';

export interface PodIdentity {
  uid: string;
  name: string;
  namespace: string;
  /** Only the allow-listed keys. */
  labels: Record<string, string>;
  /** The controller owner reference (ReplicaSet, DaemonSet, StatefulSet, Job, Node for static pods…). */
  owner?: { kind: string; name: string };
  /** The workload a person names: the Deployment above a ReplicaSet, the CronJob above a Job, else the owner. */
  workload?: { kind: string; name: string };
  deleted?: boolean;
}

export interface PodInformerOptions {
  connection: KubeConnection;
  node: string;
  /** Label keys kept per pod (the workload-label allow-list). */
  labelKeys: readonly string[];
  log: Logger;
  maxPods?: number;
  /** How long a deleted pod stays known. */
  tombstoneMs?: number;
  /** Server-side watch timeout; the watch is renewed from the last resourceVersion after it. */
  watchTimeoutS?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Request timeout of a list page. */
  requestTimeoutMs?: number;
}

export interface PodInformerHealth {
  source: KubeConnection['source'];
  server: string;
  node: string;
  synced: boolean;
  pods: number;
  deletedKept: number;
  resourceVersion: string;
  lists: number;
  watches: number;
  events: number;
  lastSyncAt?: number;
  lastEventAt?: number;
  lastError?: string;
  lastErrorAt?: number;
  nextRetryAt?: number;
  evicted: number;
}

/** `rs-name-<pod-template-hash>` → the Deployment's name; `job-<schedule time>` of a CronJob → the CronJob's. */
function workloadOf(
  owner: { kind: string; name: string } | undefined,
  labels: Record<string, string>
): PodIdentity['workload'] {
  if (!owner) return undefined;
  const hash = labels['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`))
    return { kind: 'Deployment', name: owner.name.slice(0, -hash.length - 1) };
  if (owner.kind === 'Job' && /-\d{8,}$/.test(owner.name))
    return { kind: 'CronJob', name: owner.name.replace(/-\d{8,}$/, '') };
  return owner;
}

/** A list failure, told apart from a watch failure (the library reports both through its error callback). */
class ListFailure extends Error {}

/** What an error of the library's HTTP layer says, without headers or bodies beyond the server's message. */
function describe(err: unknown, timeoutMs?: number): string {
  const e = err as Error & { code?: number | string; statusCode?: number; body?: unknown; type?: string };
  if (e?.name === 'AbortError' && timeoutMs) return `no answer within ${timeoutMs} ms`;
  // CoreV1Api's ApiException: the status and the Status object's message.
  if (typeof e?.code === 'number' && e.body !== undefined) {
    let body: unknown = e.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        /* text */
      }
    }
    const message =
      typeof body === 'object' && body && typeof (body as { message?: unknown }).message === 'string'
        ? (body as { message: string }).message
        : String(e.body).slice(0, 300);
    return `HTTP ${e.code}: ${message}`;
  }
  // The watch's non-200 answer.
  if (typeof e?.statusCode === 'number') return `HTTP ${e.statusCode}: ${e.message}`;
  // node-fetch's FetchError: "request to <url> failed, reason: connect ECONNREFUSED …" → the reason.
  const m = /failed, reason: (.*)$/s.exec(e?.message ?? '');
  return m ? m[1] : (e?.message ?? String(err));
}

export class PodInformer {
  private readonly pods = new Map<string, PodIdentity>();
  /** namespace/name → UID: a pod recreated under its name (a StatefulSet's) retires the old UID. */
  private readonly uidOf = new Map<string, string>();
  private readonly tombstones: BoundedCache<string, PodIdentity>;
  private readonly maxPods: number;
  private informer?: Informer<V1Pod> & ObjectCache<V1Pod>;
  private timer?: NodeJS.Timeout;
  private idle?: NodeJS.Timeout;
  private stopped = true;
  private failures = 0;
  /** The next connect is this class's own retry (not the library renewing a watch the server ended). */
  private retrying = false;
  /** The resourceVersion of an informer given up for its silence, shown until the next one has its own. */
  private abandonedRv = '';
  /** The library is applying a list just returned: its add/update/delete calls are not watch events. */
  private applyingList = false;
  private readonly h: PodInformerHealth;

  constructor(private readonly opts: PodInformerOptions) {
    this.maxPods = opts.maxPods ?? 4096;
    this.tombstones = new BoundedCache(this.maxPods, opts.tombstoneMs ?? 120_000);
    this.h = {
      source: opts.connection.source,
      server: opts.connection.server,
      node: opts.node,
      synced: false,
      pods: 0,
      deletedKept: 0,
      resourceVersion: '',
      lists: 0,
      watches: 0,
      events: 0,
      evicted: 0,
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.run();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.idle);
    void this.informer?.stop();
  }

  /** The pod with this UID (a deleted one for a while after its deletion). */
  byUid(uid: string): PodIdentity | undefined {
    return this.pods.get(uid) ?? this.tombstones.get(uid);
  }

  get synced(): boolean {
    return this.h.synced;
  }

  health(): PodInformerHealth {
    return {
      ...this.h,
      pods: this.pods.size,
      deletedKept: this.tombstones.size,
      resourceVersion: this.resourceVersion() || this.abandonedRv,
    };
  }

  private resourceVersion(): string {
    // makeInformer's type omits it; the object it returns is a ListWatch.
    return this.informer instanceof ListWatch ? this.informer.latestResourceVersion() : '';
  }

  private makeInformer(): Informer<V1Pod> & ObjectCache<V1Pod> {
    const kc = this.opts.connection.kubeConfig;
    const api = kc.makeApiClient(CoreV1Api);
    const fieldSelector = `spec.nodeName=${this.opts.node}`;
    const timeoutMs = this.opts.requestTimeoutMs ?? 30_000;
    // Each list page gets its own deadline (the generated client has none).
    const deadline: ConfigurationOptions = {
      middleware: [
        {
          pre: (ctx: RequestContext) => {
            ctx.setSignal(AbortSignal.timeout(timeoutMs));
            return new Observable(Promise.resolve(ctx));
          },
          post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
    const list = async (): Promise<V1PodList> => {
      this.h.lists++;
      const items: V1Pod[] = [];
      let cont: string | undefined;
      let rv = '';
      try {
        do {
          const page = await api.listPodForAllNamespaces({ fieldSelector, limit: 500, _continue: cont }, deadline);
          items.push(...page.items);
          rv = page.metadata?.resourceVersion ?? rv;
          cont = page.metadata?._continue || undefined;
        } while (cont && !this.stopped);
      } catch (err) {
        throw new ListFailure(describe(err, timeoutMs));
      }
      // The library applies the list right after this resolves, then watches: synced once that has run.
      this.applyingList = true;
      this.h.watches++;
      setImmediate(() => {
        this.applyingList = false;
        if (informer !== this.informer) return;
        // Pods gone since the last list are deleted ones now (also those a replaced informer never knew).
        const listed = new Set(items.map((o) => o.metadata?.uid));
        for (const uid of [...this.pods.keys()]) if (!listed.has(uid)) this.remove(uid);
        this.failures = 0;
        Object.assign(this.h, { synced: true, lastSyncAt: Date.now(), nextRetryAt: undefined });
        this.armIdle(); // the watch that follows
        this.opts.log.info({ pods: items.length, node: this.opts.node, resourceVersion: rv }, 'kubernetes pods listed');
      });
      return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: rv }, items };
    };
    // The selector, bookmarks and the server-side timeout ride on the path: the library adds watch and resourceVersion.
    const q = new URLSearchParams({
      fieldSelector,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(this.opts.watchTimeoutS ?? 300),
    });
    const informer = makeInformer<V1Pod>(kc, `/api/v1/pods?${q}`, list);
    // Calls from an informer given up on (below) are ignored.
    const live = (): boolean => informer === this.informer && !this.stopped;
    informer.on('add', (o) => {
      if (live()) this.onObject('add', o);
    });
    informer.on('update', (o) => {
      if (live()) this.onObject('update', o);
    });
    informer.on('delete', (o) => {
      if (live()) this.onObject('delete', o);
    });
    informer.on('connect', () => {
      if (live()) this.onConnect();
    });
    informer.on('error', (err) => {
      if (live()) this.onError(err);
    });
    return informer;
  }

  private run(): void {
    const informer = (this.informer ??= this.makeInformer());
    informer.start().catch((err: unknown) => {
      if (informer === this.informer) this.onError(err);
    });
  }

  /** Before every list-then-watch or watch the library starts. */
  private onConnect(): void {
    const retry = this.retrying;
    this.retrying = false;
    // No resourceVersion: a list comes first (counted there). The server ended the last watch: it worked.
    if (!this.resourceVersion()) return;
    this.h.watches++;
    if (!retry) this.failures = 0;
    this.armIdle();
  }

  /**
   * The server ends a watch after timeoutSeconds and the library opens the next: silence well past that is a dead
   * connection. That informer is given up (the library hands out a watch's abort only once the response headers
   * arrived, so a watch stuck before them cannot be ended) and a new one lists again.
   */
  private armIdle(): void {
    clearTimeout(this.idle);
    const silentS = (this.opts.watchTimeoutS ?? 300) + 30;
    this.idle = setTimeout(() => {
      if (this.stopped || !this.informer) return;
      const dead = this.informer;
      this.abandonedRv = this.resourceVersion();
      this.informer = undefined;
      void dead.stop();
      this.fail('watch', `silent for ${silentS} s`);
    }, silentS * 1000);
    this.idle.unref();
  }

  private onError(err: unknown): void {
    if (err instanceof ListFailure) this.fail('list', err.message);
    else this.fail('watch', describe(err));
  }

  private fail(what: 'list' | 'watch', msg: string): void {
    clearTimeout(this.idle);
    this.h.lastError = `${what}: ${msg}`;
    this.h.lastErrorAt = Date.now();
    const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.failures++);
    this.h.nextRetryAt = Date.now() + delay;
    this.opts.log.warn(
      { err: msg, retryInMs: delay },
      `kubernetes ${what} failed; pods attributed from /proc meanwhile`
    );
    clearTimeout(this.timer);
    // The library keeps its resourceVersion: a failed watch is retried from it, a failed list lists again.
    this.timer = setTimeout(() => {
      if (!this.stopped) {
        this.retrying = true;
        this.run();
      }
    }, delay);
    this.timer.unref();
  }

  private onObject(kind: 'add' | 'update' | 'delete', o: V1Pod): void {
    if (!this.applyingList) {
      this.h.events++;
      this.h.lastEventAt = Date.now();
      this.armIdle();
    }
    const p = this.identity(o);
    if (!p) return;
    if (kind === 'delete') this.remove(p.uid);
    else this.upsert(p);
  }

  private identity(o: V1Pod): PodIdentity | undefined {
    const m = o.metadata;
    if (!m?.uid || !m.name) return undefined;
    const all = m.labels ?? {};
    const labels: Record<string, string> = {};
    for (const k of this.opts.labelKeys) if (typeof all[k] === 'string') labels[k] = all[k];
    const refs = m.ownerReferences ?? [];
    const ref = refs.find((r) => r.controller) ?? refs[0];
    const owner = ref?.kind && ref.name ? { kind: ref.kind, name: ref.name } : undefined;
    return { uid: m.uid, name: m.name, namespace: m.namespace ?? '', labels, owner, workload: workloadOf(owner, all) };
  }

  private upsert(p: PodIdentity): void {
    const key = `${p.namespace}/${p.name}`;
    const before = this.uidOf.get(key);
    if (before && before !== p.uid) this.remove(before);
    this.pods.delete(p.uid);
    if (this.pods.size >= this.maxPods) {
      // More pods than a node can run: keep the newest, count the rest.
      const oldest = this.pods.values().next().value as PodIdentity;
      this.pods.delete(oldest.uid);
      this.uidOf.delete(`${oldest.namespace}/${oldest.name}`);
      this.h.evicted++;
    }
    this.pods.set(p.uid, p);
    this.uidOf.set(key, p.uid);
    this.tombstones.delete(p.uid);
  }

  private remove(uid: string): void {
    const p = this.pods.get(uid);
    this.pods.delete(uid);
    if (!p) return;
    const key = `${p.namespace}/${p.name}`;
    if (this.uidOf.get(key) === uid) this.uidOf.delete(key);
    this.tombstones.set(uid, { ...p, deleted: true });
  }
}
