/**
 * Starts the whole simulated chain in this process: every hop replica on its own port with its own TracerProvider
 * and /metrics registry, one dcgm-exporter per GPU node, and the control API (faults, Prometheus targets, topology).
 * `startChain({gatewayPort: 0, controlPort: 0, timeScale: 0.05})` is what tests use; it returns the URLs it got.
 */
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { podRegistry } from '../telemetry/metrics-format';
import { registerProcessCpu } from '../telemetry/process-cpu';
import { controlBindProblem, loadChainConfig, type ChainConfig } from '../config';
import { makeLogger } from '../log';
import { createHopTelemetry, type HopTelemetry } from '../telemetry/tracing';
import { Directory, HopClient } from './client';
import { startControlApi } from './control-api';
import { CpuBurner } from './faults/cpu-burn';
import { FaultRegistry } from './faults/registry';
import { stopAllRetransmits } from './faults/tcp-retransmit';
import { ensureCudaStandIn, type CudaStandIn } from './gpu/cuda-stand-in';
import { dcgmRegistry, makeGpus, type DcgmOptions, type EngineStats, type SimGpu } from './gpu/dcgm';
import { startHopServer, type HopEnv, type HopServer, type Routes } from './hop-server';
import { agentRoutes } from './hops/agent';
import { embeddingRoutes } from './hops/embedding';
import { gatewayRoutes } from './hops/gateway';
import { createLlmHop, type LlmHop } from './hops/llm';
import { ragRoutes } from './hops/rag';
import { toolRoutes } from './hops/tool';
import { vectorCacheRoutes } from './hops/vector-cache';
import { MODELS } from './llm/models';
import { HOPS, replicasOf, type Replica } from './topology';
import { seededRandom } from '../shared/random';
import { registerWithExporter } from './registration';
import type { HopInfo, RunningChain } from './running';

export type { HopInfo, RunningChain } from './running';

export interface StartChainOptions extends Partial<ChainConfig> {
  /** Added to every hop's TracerProvider (tests use an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  logger?: Logger;
  /** Split mode: run only these pods here (default: all). */
  only?: string[];
  /** Split mode: where every pod listens (pods run here bind these ports; the others are called there). */
  endpoints?: Record<string, { url: string; tlsUrl?: string }>;
  /** Start the control API and the dcgm-exporters here (default true; false in replica processes). */
  control?: boolean;
}

export async function startChain(opts: StartChainOptions = {}): Promise<RunningChain> {
  const { spanProcessors, logger, only, endpoints, control = true, ...overrides } = opts;
  const cfg = loadChainConfig(overrides);
  const bindProblem = control ? controlBindProblem(cfg) : undefined;
  if (bindProblem) throw new Error(`invalid chain configuration:\n  host: ${bindProblem}`);
  const log = logger ?? makeLogger(cfg.logLevel);
  const rand = seededRandom(cfg.seed);
  const directory = new Directory();
  const gpuNodeNames = Array.from({ length: cfg.gpuNodes }, (_, i) => `gpu-node-${i}`);
  const replicas: Replica[] = HOPS.flatMap((h) => replicasOf(h, cfg.replicas[h], cfg.namespace, gpuNodeNames));
  const podsByHop: Record<string, string[]> = {};
  for (const r of replicas) (podsByHop[r.hop] ??= []).push(r.pod);
  const faults = new FaultRegistry(podsByHop);
  const settings = {
    vectorCacheHitRate: cfg.vectorCacheHitRate,
    dcgm: { smActive: cfg.dcgmSmActive, hostnameLabel: cfg.dcgmHostnameLabel, mig: cfg.mig } as DcgmOptions,
  };
  const scale = (ms: number) => ms * cfg.timeScale;
  // The LLM replicas run here allocate through the stand-in CUDA driver, built now if needed.
  const runsLlm = replicas.some((r) => r.hop.startsWith('llm-') && (!only || only.includes(r.pod)));
  let cudaStandIn: CudaStandIn | undefined;
  if (cfg.cudaStandIn && runsLlm) {
    const built = ensureCudaStandIn();
    if (built.ok) cudaStandIn = built;
    else
      log.warn(
        { reason: built.reason },
        `no stand-in libcuda.so.1: ${built.reason}. GPU OOM is simulated without the kernel signal (no cuMemAlloc_v2 a probe could see)`
      );
  }

  const servers: HopServer[] = [];
  const telemetries: HopTelemetry[] = [];
  const clients: HopClient[] = [];
  const burners: CpuBurner[] = [];
  const llm = new Map<string, LlmHop>();
  const hops: HopInfo[] = [];
  let nextFixedPort = cfg.hopPort;

  const stopAll = async (): Promise<void> => {
    faults.endAll();
    await stopAllRetransmits();
    for (const l of llm.values()) l.stop();
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(burners.map((b) => b.close()));
    // Flush spans, but do not hang on an unreachable OTLP endpoint (the demo gives each part 5 s to stop).
    await Promise.race([
      Promise.all(telemetries.map((t) => t.shutdown().catch(() => {}))),
      new Promise((r) => setTimeout(r, 1500).unref()),
    ]);
  };

  try {
    for (const replica of replicas) {
      if (only && !only.includes(replica.pod)) {
        const ep = endpoints?.[replica.pod];
        if (!ep) throw new Error(`split mode: no endpoint for ${replica.pod}`);
        hops.push({
          hop: replica.hop,
          pod: replica.pod,
          node: replica.node,
          namespace: replica.namespace,
          url: ep.url,
          tlsUrl: ep.tlsUrl,
          metricsUrl: `${ep.url}/metrics`,
        });
        continue;
      }
      const registry = podRegistry();
      // One pod in this process (split mode): its CPU is the process's.
      if (only?.length === 1) registerProcessCpu(registry);
      const tel = createHopTelemetry(
        { service: replica.hop, pod: replica.pod, node: replica.node, namespace: replica.namespace },
        {
          tracing: cfg.tracing,
          otlpEndpoint: cfg.otlpEndpoint,
          otlpProtocol: cfg.otlpProtocol,
          otlpHeaders: cfg.otlpHeaders,
          serviceNamespace: cfg.serviceNamespace,
          resourceAttributes: cfg.resourceAttributes,
          samplerBaseRate: cfg.samplerBaseRate,
          samplerMinRate: cfg.samplerMinRate,
          samplerP99KneeMs: cfg.samplerP99KneeMs,
          samplerAdaptive: cfg.samplerAdaptive,
          registry,
          extraProcessors: spanProcessors,
        }
      );
      telemetries.push(tel);
      const client = new HopClient(directory, tel.tracer, cfg.tlsHops, cfg.hopTimeoutMs);
      clients.push(client);
      const burner = new CpuBurner();
      burners.push(burner);
      const env: HopEnv = {
        cfg,
        replica,
        tracer: tel.tracer,
        registry,
        faults,
        log: log.child({ hop: replica.hop, pod: replica.pod }),
        client,
        rand,
        burner,
        scale,
        cudaStandIn,
      };
      let routes: Routes;
      switch (replica.hop) {
        case 'gateway':
          routes = gatewayRoutes(env);
          break;
        case 'embedding':
          routes = embeddingRoutes(env);
          break;
        case 'vector-cache':
          routes = vectorCacheRoutes(env, () => settings.vectorCacheHitRate);
          break;
        case 'rag':
          routes = ragRoutes(env);
          break;
        case 'llm-vllm':
        case 'llm-tgi':
        case 'llm-sglang': {
          const l = createLlmHop(env);
          llm.set(replica.pod, l);
          routes = l.routes;
          break;
        }
        case 'agent':
          routes = agentRoutes(env);
          break;
        case 'tool':
          routes = toolRoutes(env);
          break;
      }
      const fixed = endpoints?.[replica.pod];
      const port = fixed
        ? Number(new URL(fixed.url).port)
        : replica.hop === 'gateway' && replica.index === 0
          ? cfg.gatewayPort
          : nextFixedPort
            ? nextFixedPort++
            : 0;
      const server = await startHopServer(env, routes, port, fixed?.tlsUrl ? Number(new URL(fixed.tlsUrl).port) : 0);
      servers.push(server);
      hops.push({
        hop: replica.hop,
        pod: replica.pod,
        node: replica.node,
        namespace: replica.namespace,
        url: server.url,
        tlsUrl: server.tlsUrl,
        metricsUrl: `${server.url}/metrics`,
      });
    }
    for (const h of HOPS)
      directory.set(
        h,
        hops.filter((x) => x.hop === h).map((x) => ({ pod: x.pod, url: x.url, tlsUrl: x.tlsUrl }))
      );

    const remoteEngines = new Map<string, EngineStats>();
    const idle: EngineStats = { busyMsTotal: 0, lastBatchSize: 0, kvUsage: 0, opts: { maxNumSeqs: 32 } };
    // GPUs: each LLM replica owns a pair of GPUs on its node (or one when a node has too few).
    const gpuNodes = [...new Set(replicas.filter((r) => r.hop.startsWith('llm-')).map((r) => r.node))];
    const gpus: SimGpu[] = makeGpus(gpuNodes, cfg.gpusPerNode);
    for (const node of gpuNodes) {
      const owners = replicas.filter((r) => r.node === node && r.hop.startsWith('llm-'));
      const mine = gpus.filter((g) => g.node === node);
      const per = Math.max(1, Math.floor(mine.length / Math.max(1, owners.length)));
      owners.forEach((r, i) => {
        const l = llm.get(r.pod);
        // A getter, so a remote replica's latest report is read at scrape time.
        const stats: EngineStats = l
          ? l.engine
          : {
              get busyMsTotal() {
                return (remoteEngines.get(r.pod) ?? idle).busyMsTotal;
              },
              get lastBatchSize() {
                return (remoteEngines.get(r.pod) ?? idle).lastBatchSize;
              },
              get kvUsage() {
                return (remoteEngines.get(r.pod) ?? idle).kvUsage;
              },
              get opts() {
                return (remoteEngines.get(r.pod) ?? idle).opts;
              },
              get leakedBytes() {
                return (remoteEngines.get(r.pod) ?? idle).leakedBytes;
              },
            };
        for (const g of mine.slice(i * per, i * per + per)) {
          g.owner = {
            pod: r.pod,
            namespace: r.namespace,
            container: r.hop === 'llm-tgi' ? 'text-generation-inference' : r.hop === 'llm-sglang' ? 'sglang' : 'vllm',
            engine: stats,
            weightsMiB: MODELS['hopscope-llama-8b-v1'].weightsMiB / per,
            gpuCount: per,
            oom: () => Boolean(faults.active(r.hop, r.pod, 'gpu_oom')),
          };
        }
      });
    }
    const dcgm: RunningChain['dcgm'] = [];
    for (const node of control ? gpuNodes : []) {
      let reg = dcgmRegistry(node, gpus, settings.dcgm);
      let builtFor = JSON.stringify(settings.dcgm);
      const server = http.createServer(async (req, res) => {
        if (req.url?.startsWith('/metrics')) {
          if (JSON.stringify(settings.dcgm) !== builtFor) {
            reg = dcgmRegistry(node, gpus, settings.dcgm);
            builtFor = JSON.stringify(settings.dcgm);
          }
          res.writeHead(200, { 'content-type': reg.contentType });
          res.end(await reg.metrics());
        } else {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'not_found', message: 'dcgm-exporter serves /metrics' } }));
        }
      });
      const port = nextFixedPort ? nextFixedPort++ : 0;
      await new Promise<void>((r, j) => {
        server.once('error', j);
        server.listen(port, cfg.host, () => r());
      });
      const url = `http://${cfg.host}:${(server.address() as AddressInfo).port}`;
      servers.push({
        url,
        port: 0,
        close: () =>
          new Promise((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
      dcgm.push({ node, url, metricsUrl: `${url}/metrics` });
    }

    const chain: RunningChain = {
      config: cfg,
      gatewayUrl: hops.find((h) => h.hop === 'gateway')!.url,
      controlUrl: '',
      hops,
      dcgm,
      faults,
      llm,
      settings,
      remoteEngines,
      pids: Object.fromEntries(hops.filter((h) => !only || only.includes(h.pod)).map((h) => [h.pod, process.pid])),
      gpuDriverPids: Object.fromEntries(
        [...llm].filter(([, l]) => l.gpuDriverPid).map(([pod, l]) => [pod, l.gpuDriverPid!])
      ),
      targets: () => [
        ...hops.map((h) => ({
          targets: [new URL(h.url).host],
          labels: { service: h.hop, pod: h.pod, node: h.node, namespace: h.namespace },
        })),
        ...dcgm.map((d) => ({ targets: [new URL(d.url).host], labels: { service: 'dcgm-exporter', node: d.node } })),
      ],
      forceFlush: async () => {
        await Promise.all(telemetries.map((t) => t.forceFlush()));
      },
      stop: async () => {},
    };
    if (control) {
      const api = await startControlApi(chain, cfg.controlPort, log);
      servers.push(api);
      chain.controlUrl = api.url;
    }
    chain.stop = stopAll;
    // One pid can stand for one pod: register it for the first pod run here (in split mode, each replica process
    // runs exactly one pod, so kernel events are attributed to the right one). Each LLM pod's CUDA driver process is
    // registered as that pod as well (after this process's own registration), wherever the pod runs.
    const mine = hops.find((h) => !only || only.includes(h.pod));
    if (cfg.exporterUrl && mine) {
      const url = cfg.exporterUrl;
      const drivers = hops.filter((h) => chain.gpuDriverPids[h.pod]);
      void (async () => {
        await registerWithExporter(
          url,
          { pid: process.pid, pod: mine.pod, namespace: cfg.namespace, node: mine.node, service: mine.hop },
          log,
          cfg.exporterToken
        );
        for (const h of drivers)
          await registerWithExporter(
            url,
            { pid: chain.gpuDriverPids[h.pod], pod: h.pod, namespace: cfg.namespace, node: h.node, service: h.hop },
            log,
            cfg.exporterToken
          );
      })();
    }
    log.info(
      {
        gateway: chain.gatewayUrl,
        control: chain.controlUrl,
        hops: hops.length,
        gpus: gpus.length,
        tracing: cfg.tracing,
        otlp: cfg.otlpEndpoint,
        cudaStandIn: cudaStandIn?.library ?? 'off',
      },
      'chain started'
    );
    return chain;
  } catch (err) {
    await stopAll();
    throw err;
  }
}
