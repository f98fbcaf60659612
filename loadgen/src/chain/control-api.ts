/**
 * The chain's control API (127.0.0.1:3319 by default):
 *   POST /faults {target, kind, magnitude?, durationS?, pod?} → 201 {id, …annotation}
 *   GET /faults → FaultAnnotation[] (active and recent, newest first; what the proxy reads)
 *   GET /faults/:id, DELETE /faults/:id
 *   GET /targets → Prometheus http_sd targets (every hop replica and dcgm-exporter)
 *   GET /topology → hops, pods, nodes, URLs, pids (and each LLM pod's CUDA driver process)
 *   GET|PUT /config → run-time settings {vectorCacheHitRate, dcgmSmActive, dcgmHostnameLabel}
 *   GET /healthz
 * With HOPSCOPE_CHAIN_TOKEN set (required to bind beyond loopback), every route but GET /healthz and GET /targets
 * (Prometheus service discovery) needs `Authorization: Bearer <token>`; without one, only requests whose Host names
 * loopback are answered (DNS rebinding; contract/loopback-host.ts). At most MAX_ACTIVE_FAULTS faults are active at
 * once (429 beyond). At start it removes nftables tables an earlier chain left when it was killed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorBody } from '../shared/errors';
import { KIND_SPECS, FaultError, type Fault } from './faults/registry';
import {
  droppedPackets,
  removeStaleTables,
  startRetransmits,
  stopRetransmits,
  tcpRetransmitAvailable,
} from './faults/tcp-retransmit';
import { loopbackHostGuard } from '../../../contract/loopback-host';
import type { HopServer } from './hop-server';
import type { RunningChain } from './running';

const fail = (res: Response, status: number, code: string, message: string): void => {
  res.status(status).json(errorBody(code, message));
};

const OPEN_ROUTES = new Set(['GET /healthz', 'GET /targets']);

/** Bearer-token check, constant-time (digests of equal length), for every route but the open ones. */
function requireToken(token: string) {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  const want = digest(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (OPEN_ROUTES.has(`${req.method} ${req.path}`)) return next();
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (m && timingSafeEqual(digest(m[1]), want)) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="hopscope-chain"');
    fail(
      res,
      401,
      'unauthorized',
      "this control API needs Authorization: Bearer <token> (the chain's HOPSCOPE_CHAIN_TOKEN)"
    );
  };
}

export async function startControlApi(chain: RunningChain, port: number, log: Logger): Promise<HopServer> {
  const app = express();
  app.disable('x-powered-by');
  if (chain.config.controlToken) app.use(requireToken(chain.config.controlToken));
  // Open (no token) means loopback only: a rebound name (DNS rebinding) could otherwise inject faults from a web page.
  else app.use(loopbackHostGuard('the control API without HOPSCOPE_CHAIN_TOKEN', 'set a token to serve other names'));
  app.use(express.json({ limit: '64kb' }));
  const nftTables = new Map<string, string>();
  if ((await tcpRetransmitAvailable()) === true) {
    const stale = await removeStaleTables();
    if (stale.length)
      log.warn({ tables: stale }, 'removed nftables tables left by a chain that died without cleaning up');
  }

  chain.faults.on('end', (f: Fault) => {
    const table = nftTables.get(f.id);
    if (table) {
      nftTables.delete(f.id);
      void droppedPackets(table).then((n) => {
        f.note = `${f.note ?? ''}; ${n} packets dropped`.replace(/^; /, '');
        return stopRetransmits(table);
      });
    }
  });
  chain.faults.on('start', (f: Fault) => log.info({ fault: f }, 'fault started'));

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, hops: chain.hops.length });
  });

  app.get('/faults', (_req, res) => {
    res.json(chain.faults.list());
  });

  app.get('/faults/kinds', (_req, res) => {
    res.json(KIND_SPECS);
  });

  app.get('/faults/:id', (req, res) => {
    const f = chain.faults.list().find((x) => x.id === req.params.id);
    if (!f) return fail(res, 404, 'not_found', `no fault ${req.params.id}`);
    res.json(f);
  });

  app.post('/faults', async (req, res) => {
    try {
      const fault = await chain.faults.add(req.body, async (f) => {
        if (f.kind === 'tcp_retransmit') {
          const ok = await tcpRetransmitAvailable();
          if (ok !== true) throw new FaultError(409, 'unavailable', `tcp_retransmit is unavailable here: ${ok}`);
          const ports = chain.hops
            .filter((h) => h.hop === f.target && (!f.pod || h.pod === f.pod))
            .flatMap((h) => [h.url, h.tlsUrl].filter(Boolean).map((u) => Number(new URL(u!).port)));
          try {
            const table = await startRetransmits(ports, f.magnitude);
            nftTables.set(f.id, table);
            return `nft table ${table} drops ${Math.round(f.magnitude)}% of packets to ports ${ports.join(',')}`;
          } catch (err) {
            throw new FaultError(
              409,
              'unavailable',
              `tcp_retransmit is unavailable here: nft refused the rule (${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()})`
            );
          }
        }
        if (f.kind === 'nccl_timeout') {
          const tp = chain.config.tensorParallel;
          if (tp < 2)
            throw new FaultError(
              409,
              'not_tensor_parallel',
              `nccl_timeout stalls a rank of a tensor-parallel group, and this chain's LLM replicas run one rank each (set HOPSCOPE_TP=2 or more)`
            );
          const rank = Math.min(Math.round(f.magnitude), tp - 1);
          return `rank ${rank}'s ncclAllReduce stalls on ${f.pod ?? `every ${f.target} group`} until the watchdog (${chain.config.executeModelTimeoutS} s)`;
        }
        if (f.kind === 'tls_slow_handshake' && !chain.config.tlsHops.includes(f.target)) {
          throw new FaultError(
            409,
            'not_tls',
            `the link to ${f.target} does not use TLS in this chain (TLS hops: ${chain.config.tlsHops.join(', ') || 'none'}; set HOPSCOPE_TLS_HOPS)`
          );
        }
      });
      res.status(201).json(fault);
    } catch (err) {
      if (err instanceof FaultError) return fail(res, err.status, err.code, err.message);
      fail(res, 500, 'internal', (err as Error).message);
    }
  });

  app.delete('/faults/:id', (req, res) => {
    const f = chain.faults.get(req.params.id);
    if (!f) return fail(res, 404, 'not_found', `no fault ${req.params.id}`);
    chain.faults.end(f.id);
    res.json(chain.faults.list().find((x) => x.id === f.id));
  });

  app.get('/targets', (_req, res) => {
    res.json(chain.targets());
  });

  app.get('/topology', (_req, res) => {
    res.json({
      gateway: chain.gatewayUrl,
      control: chain.controlUrl,
      pid: process.pid,
      hops: chain.hops.map((h) => ({
        ...h,
        pid: chain.pids[h.pod],
        ...(chain.gpuDriverPids[h.pod] ? { gpuDriverPid: chain.gpuDriverPids[h.pod] } : {}),
      })),
      dcgm: chain.dcgm,
      tlsHops: chain.config.tlsHops,
    });
  });

  const settingsView = () => ({
    vectorCacheHitRate: chain.settings.vectorCacheHitRate,
    dcgmSmActive: chain.settings.dcgm.smActive,
    dcgmHostnameLabel: chain.settings.dcgm.hostnameLabel,
  });
  app.get('/config', (_req, res) => {
    res.json(settingsView());
  });
  app.put('/config', (req, res) => {
    const b = req.body ?? {};
    if (b.vectorCacheHitRate !== undefined) {
      if (typeof b.vectorCacheHitRate !== 'number' || b.vectorCacheHitRate < 0 || b.vectorCacheHitRate > 1)
        return fail(res, 400, 'bad_request', 'vectorCacheHitRate must be a number in [0, 1]');
    }
    if (b.dcgmSmActive !== undefined && typeof b.dcgmSmActive !== 'boolean')
      return fail(res, 400, 'bad_request', 'dcgmSmActive must be a boolean');
    if (b.dcgmHostnameLabel !== undefined && b.dcgmHostnameLabel !== 'Hostname' && b.dcgmHostnameLabel !== 'hostname')
      return fail(res, 400, 'bad_request', 'dcgmHostnameLabel must be Hostname or hostname');
    if (b.vectorCacheHitRate !== undefined) chain.settings.vectorCacheHitRate = b.vectorCacheHitRate;
    if (b.dcgmSmActive !== undefined) chain.settings.dcgm = { ...chain.settings.dcgm, smActive: b.dcgmSmActive };
    if (b.dcgmHostnameLabel !== undefined)
      chain.settings.dcgm = { ...chain.settings.dcgm, hostnameLabel: b.dcgmHostnameLabel };
    chain.onSettings?.();
    res.json(settingsView());
  });

  app.use((_req, res) =>
    fail(res, 404, 'not_found', 'no such route; see /faults, /targets, /topology, /config, /healthz')
  );
  app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.parse.failed') return fail(res, 400, 'bad_json', 'request body is not valid JSON');
    fail(res, err.status && err.status < 500 ? err.status : 500, 'internal', err.message);
  });

  const server = app.listen(port, chain.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const url = `http://${chain.config.host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
