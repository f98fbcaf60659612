/**
 * The pods of this node, by UID, from the Kubernetes API: an informer (list, then watch from the list's
 * resourceVersion with bookmarks; relist on 410 Gone; reconnect with backoff) on `/api/v1/pods` filtered with
 * `fieldSelector=spec.nodeName=<node>`, so the exporter holds only its own node's pods (a kubelet runs at most a few
 * hundred). Each pod is kept slim: name, namespace, the allow-listed labels, its controller and the workload above it.
 * A deleted pod stays known for a while (its sockets may still retransmit), and the whole cache is bounded.
 *
 * @kubernetes/client-node was the first choice; its 2.0.1 (the installed version) does not load on Node 20 (its
 * undici 8 needs Node >= 22.19), so this is the same list/watch protocol on node:https, in one file.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

interface PodObject {
  metadata?: {
    uid?: string; name?: string; namespace?: string; resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind?: string; name?: string; controller?: boolean }>;
  };
}

interface WatchEvent { type?: string; object?: PodObject & { code?: number; reason?: string; message?: string } }

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
function workloadOf(owner: { kind: string; name: string } | undefined, labels: Record<string, string>): PodIdentity['workload'] {
  if (!owner) return undefined;
  const hash = labels['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`)) return { kind: 'Deployment', name: owner.name.slice(0, -hash.length - 1) };
  if (owner.kind === 'Job' && /-\d{8,}$/.test(owner.name)) return { kind: 'CronJob', name: owner.name.replace(/-\d{8,}$/, '') };
  return owner;
}

export class PodInformer {
  private readonly pods = new Map<string, PodIdentity>();
  private readonly tombstones: BoundedCache<string, PodIdentity>;
  private readonly maxPods: number;
  private rv = '';
  private req?: ClientRequest;
  private timer?: NodeJS.Timeout;
  private idle?: NodeJS.Timeout;
  private stopped = true;
  private failures = 0;
  private readonly h: PodInformerHealth;

  constructor(private readonly opts: PodInformerOptions) {
    this.maxPods = opts.maxPods ?? 4096;
    this.tombstones = new BoundedCache(this.maxPods, opts.tombstoneMs ?? 120_000);
    this.h = {
      source: opts.connection.source, server: opts.connection.server, node: opts.node, synced: false, pods: 0, deletedKept: 0,
      resourceVersion: '', lists: 0, watches: 0, events: 0, evicted: 0,
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.list();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.idle);
    this.req?.destroy();
    this.req = undefined;
  }

  /** The pod with this UID (a deleted one for a while after its deletion). */
  byUid(uid: string): PodIdentity | undefined {
    return this.pods.get(uid) ?? this.tombstones.get(uid);
  }

  get synced(): boolean { return this.h.synced; }

  health(): PodInformerHealth {
    return { ...this.h, pods: this.pods.size, deletedKept: this.tombstones.size, resourceVersion: this.rv };
  }

  private selector(): string {
    return `fieldSelector=${encodeURIComponent(`spec.nodeName=${this.opts.node}`)}`;
  }

  private identity(o: PodObject): PodIdentity | undefined {
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
    this.pods.delete(p.uid);
    if (this.pods.size >= this.maxPods) {
      // More pods than a node can run: keep the newest, count the rest.
      this.pods.delete(this.pods.keys().next().value as string);
      this.h.evicted++;
    }
    this.pods.set(p.uid, p);
    this.tombstones.delete(p.uid);
  }

  private remove(uid: string): void {
    const p = this.pods.get(uid);
    this.pods.delete(uid);
    if (p) this.tombstones.set(uid, { ...p, deleted: true });
  }

  private send(path: string, timeoutMs: number | undefined, onResponse: (res: IncomingMessage) => void, onError: (err: Error) => void): void {
    const c = this.opts.connection;
    const url = new URL(c.server + path);
    const token = c.token();
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'hopscope-bpf-exporter' };
    if (token) headers.authorization = `Bearer ${token}`;
    const tls = url.protocol === 'https:';
    const req = (tls ? httpsRequest : httpRequest)(url, {
      method: 'GET', headers, timeout: timeoutMs,
      ...(tls ? { ca: c.ca, cert: c.cert, key: c.key, rejectUnauthorized: !c.insecureSkipTlsVerify } : {}),
    }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.host} within ${timeoutMs} ms`)));
    req.on('error', onError);
    req.end();
    this.req = req;
  }

  private fail(what: string, err: Error | string): void {
    if (this.stopped) return;
    const msg = typeof err === 'string' ? err : err.message;
    this.h.lastError = `${what}: ${msg}`;
    this.h.lastErrorAt = Date.now();
    const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.failures++);
    this.h.nextRetryAt = Date.now() + delay;
    this.opts.log.warn({ err: msg, retryInMs: delay }, `kubernetes ${what} failed; pods attributed from /proc meanwhile`);
    clearTimeout(this.timer);
    // A watch failure retries the watch from the resourceVersion held; a list failure lists again.
    this.timer = setTimeout(() => { void (what === 'watch' && this.rv ? this.watch() : this.list()); }, delay);
    this.timer.unref();
  }

  /** GET one page; resolves the parsed body or rejects with the status and the server's message. */
  private page(path: string): Promise<{ metadata?: { resourceVersion?: string; continue?: string }; items?: PodObject[] }> {
    return new Promise((resolve, reject) => {
      this.send(path, this.opts.requestTimeoutMs ?? 30_000, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) {
            let message = text.slice(0, 300);
            try { message = (JSON.parse(text) as { message?: string }).message ?? message; } catch { /* not a Status */ }
            return reject(new Error(`HTTP ${res.statusCode}: ${message}`));
          }
          try { resolve(JSON.parse(text)); } catch (err) { reject(err as Error); }
        });
      }, reject);
    });
  }

  private async list(): Promise<void> {
    if (this.stopped) return;
    this.h.lists++;
    const seen = new Map<string, PodIdentity>();
    let cont = '';
    let rv = '';
    try {
      do {
        const body = await this.page(`/api/v1/pods?${this.selector()}&limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        for (const o of body.items ?? []) { const p = this.identity(o); if (p) seen.set(p.uid, p); }
        rv = body.metadata?.resourceVersion ?? rv;
        cont = body.metadata?.continue ?? '';
      } while (cont && !this.stopped);
    } catch (err) {
      return this.fail('list', err as Error);
    }
    if (this.stopped) return;
    // Pods gone since the last list are deleted ones now.
    for (const uid of [...this.pods.keys()]) if (!seen.has(uid)) this.remove(uid);
    for (const p of seen.values()) this.upsert(p);
    this.rv = rv;
    this.failures = 0;
    Object.assign(this.h, { synced: true, lastSyncAt: Date.now(), nextRetryAt: undefined });
    this.opts.log.info({ pods: seen.size, node: this.opts.node, resourceVersion: rv }, 'kubernetes pods listed');
    this.watch();
  }

  private watch(): void {
    if (this.stopped) return;
    this.h.watches++;
    const timeoutS = this.opts.watchTimeoutS ?? 300;
    const path = `/api/v1/pods?${this.selector()}&watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.rv)}&timeoutSeconds=${timeoutS}`;
    let relist = false;
    const armIdle = (req: ClientRequest): void => {
      // The server ends a watch after timeoutSeconds; silence well past that is a dead connection.
      clearTimeout(this.idle);
      this.idle = setTimeout(() => req.destroy(new Error(`watch silent for ${timeoutS + 30} s`)), (timeoutS + 30) * 1000);
      this.idle.unref();
    };
    this.send(path, undefined, (res) => {
      const req = this.req!;
      if (res.statusCode === 410) { res.resume(); return void this.list(); }
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (d: Buffer) => { if (text.length < 1000) text += d.toString('utf8'); });
        res.on('end', () => this.fail('watch', `HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
        return;
      }
      armIdle(req);
      let rest = '';
      res.on('data', (d: Buffer) => {
        armIdle(req);
        const text = rest + d.toString('utf8');
        const lines = text.split('\n');
        rest = lines.pop() ?? '';
        if (rest.length > 16 << 20) { rest = ''; req.destroy(new Error('watch line over 16 MiB')); }
        for (const line of lines) if (line.trim() && this.onEvent(line)) relist = true;
      });
      res.on('end', () => {
        clearTimeout(this.idle);
        if (this.stopped) return;
        if (relist) return void this.list();
        this.failures = 0;
        this.watch(); // the server's timeout: renew from the last resourceVersion
      });
      res.on('error', (err) => { clearTimeout(this.idle); this.fail('watch', err); });
    }, (err) => { clearTimeout(this.idle); this.fail('watch', err); });
  }

  /** One watch event; true when the resourceVersion is too old (relist). */
  private onEvent(line: string): boolean {
    let ev: WatchEvent;
    try { ev = JSON.parse(line) as WatchEvent; } catch { return false; }
    const o = ev.object;
    if (ev.type === 'ERROR') {
      if (o?.code === 410) { this.rv = ''; return true; }
      this.h.lastError = `watch: ${o?.message ?? 'error event'}`;
      this.h.lastErrorAt = Date.now();
      return false;
    }
    if (o?.metadata?.resourceVersion) this.rv = o.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK' || !o) return false;
    this.h.events++;
    this.h.lastEventAt = Date.now();
    const p = this.identity(o);
    if (!p) return false;
    if (ev.type === 'DELETED') this.remove(p.uid);
    else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.upsert(p);
    return false;
  }
}
