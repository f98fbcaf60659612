/**
 * Simulated GPUs and one dcgm-exporter per GPU node. Each LLM replica owns GPUs on its node (tensor parallel 2); their
 * SM activity, graphics-engine activity, utilisation and framebuffer use follow that replica's engine (busy time, batch,
 * KV usage). Exposes DCGM_FI_* with dcgm-exporter's label layout, including its quirks: the blank sentinel
 * (9223372036854775794) for memory temperature, `Hostname` vs `hostname`, and a switch that removes
 * DCGM_FI_PROF_SM_ACTIVE (commented out in the default counters CSV). With `mig`, GPU 0 of each node is split in two
 * MIG instances (GPU_I_PROFILE, GPU_I_ID).
 */
import { createHash } from 'node:crypto';
import { Counter, Gauge, Registry } from 'prom-client';

export const DCGM_BLANK_INT64 = 9223372036854775794;
export const GPU_MODEL = 'NVIDIA H100 80GB HBM3';
export const FB_TOTAL_MIB = 81_559;
export const DRIVER_VERSION = '550.54.15';

/** What the GPU figures follow: an engine in this process, or the last stats a replica process reported. */
export interface EngineStats {
  busyMsTotal: number;
  lastBatchSize: number;
  kvUsage: number;
  opts: { maxNumSeqs: number };
  /** GPU memory the replica's process holds outside its KV cache (gpu_memory_leak), bytes. */
  leakedBytes?: number;
}

export interface GpuOwner {
  pod: string;
  namespace: string;
  container: string;
  engine: EngineStats;
  weightsMiB: number;
  /** How many GPUs the replica spreads over (its leaked memory is split evenly across them). */
  gpuCount: number;
  oom: () => boolean;
}

export interface SimGpu {
  node: string;
  index: number;
  uuid: string;
  pciBusId: string;
  owner?: GpuOwner;
  /** Last utilisation sample. */
  lastBusyMs: number;
  lastAt: number;
  util: number;
  energyMj: number;
  energyAt: number;
}

export interface DcgmOptions {
  smActive: boolean;
  hostnameLabel: 'Hostname' | 'hostname';
  mig: boolean;
}

export function makeGpus(nodes: string[], perNode: number): SimGpu[] {
  const gpus: SimGpu[] = [];
  for (const node of nodes) {
    for (let i = 0; i < perNode; i++) {
      const h = createHash('sha1').update(`${node}/${i}`).digest('hex');
      gpus.push({
        node,
        index: i,
        uuid: `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`,
        pciBusId: `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase()}:00.0`,
        lastBusyMs: 0,
        lastAt: performance.now(),
        util: 0,
        energyMj: 1.2e9,
        energyAt: performance.now(),
      });
    }
  }
  return gpus;
}

/** Builds the /metrics registry of one node's dcgm-exporter (rebuilt when the options change). */
export function dcgmRegistry(node: string, gpus: SimGpu[], opts: DcgmOptions): Registry {
  const registry = new Registry();
  const mine = gpus.filter((g) => g.node === node);
  const labelNames = [
    'gpu',
    'UUID',
    'pci_bus_id',
    'device',
    'modelName',
    'GPU_I_PROFILE',
    'GPU_I_ID',
    opts.hostnameLabel,
    'DCGM_FI_DRIVER_VERSION',
    'container',
    'namespace',
    'pod',
  ];

  // One sample per GPU (or per MIG instance for profiling fields).
  const instances = (g: SimGpu, perInstance: boolean): Array<Record<string, string>> => {
    const base: Record<string, string> = {
      gpu: String(g.index),
      UUID: g.uuid,
      pci_bus_id: g.pciBusId,
      device: `nvidia${g.index}`,
      modelName: GPU_MODEL,
      [opts.hostnameLabel]: g.node,
      DCGM_FI_DRIVER_VERSION: DRIVER_VERSION,
      container: g.owner?.container ?? '',
      namespace: g.owner?.namespace ?? '',
      pod: g.owner?.pod ?? '',
    };
    if (opts.mig && g.index === 0 && perInstance)
      return [
        { ...base, GPU_I_PROFILE: '3g.40gb', GPU_I_ID: '1' },
        { ...base, GPU_I_PROFILE: '3g.40gb', GPU_I_ID: '2' },
      ];
    return [base];
  };

  const sample = (g: SimGpu): void => {
    const now = performance.now();
    const e = g.owner?.engine;
    const busy = e ? e.busyMsTotal : 0;
    const dt = now - g.lastAt;
    if (dt >= 200) {
      g.util = Math.min(1, Math.max(0, (busy - g.lastBusyMs) / dt));
      g.lastBusyMs = busy;
      g.lastAt = now;
    }
  };
  const batchFrac = (g: SimGpu): number =>
    g.owner ? Math.min(1, g.owner.engine.lastBatchSize / g.owner.engine.opts.maxNumSeqs) : 0;
  const fbUsed = (g: SimGpu): number => {
    if (!g.owner) return 0;
    if (g.owner.oom()) return FB_TOTAL_MIB - 12; // allocation failures happen with the framebuffer full
    const kvPool = FB_TOTAL_MIB * 0.9 - g.owner.weightsMiB;
    // A leak's memory comes on top, up to what the framebuffer has (then allocations fail).
    const leakedMiB = (g.owner.engine.leakedBytes ?? 0) / 2 ** 20 / g.owner.gpuCount;
    const used = g.owner.weightsMiB + kvPool * (0.15 + 0.85 * g.owner.engine.kvUsage) + leakedMiB;
    return Math.round(Math.min(FB_TOTAL_MIB - 512 - 12, used));
  };

  const gauge = (name: string, help: string, value: (g: SimGpu) => number, perInstance = false) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const g of mine) {
          sample(g);
          const insts = instances(g, perInstance);
          for (const l of insts) this.set(l, insts.length > 1 ? value(g) * (l.GPU_I_ID === '1' ? 1 : 0.6) : value(g));
        }
      },
    });

  gauge('DCGM_FI_DEV_SM_CLOCK', 'SM clock frequency (in MHz).', (g) => (g.util > 0.05 ? 1980 : 345));
  gauge('DCGM_FI_DEV_MEM_CLOCK', 'Memory clock frequency (in MHz).', () => 2619);
  gauge('DCGM_FI_DEV_MEMORY_TEMP', 'Memory temperature (in C).', () => DCGM_BLANK_INT64);
  gauge('DCGM_FI_DEV_GPU_TEMP', 'GPU temperature (in C).', (g) => Math.round(33 + 40 * g.util));
  gauge('DCGM_FI_DEV_POWER_USAGE', 'Power draw (in W).', (g) => Number((72 + 560 * g.util).toFixed(3)));
  new Counter({
    name: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
    help: 'Total energy consumption since boot (in mJ).',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      const now = performance.now();
      for (const g of mine) {
        g.energyMj += (72 + 560 * g.util) * Math.max(0, now - g.energyAt); // W × ms = mJ
        g.energyAt = now;
        for (const l of instances(g, false)) this.inc(l, Math.round(g.energyMj));
      }
    },
  });
  new Counter({
    name: 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER',
    help: 'Total number of PCIe retries.',
    labelNames,
    registers: [registry],
    collect() {
      for (const g of mine) for (const l of instances(g, false)) this.inc(l, 0);
    },
  });
  gauge('DCGM_FI_DEV_GPU_UTIL', 'GPU utilization (in %).', (g) => Math.round(100 * g.util));
  gauge('DCGM_FI_DEV_MEM_COPY_UTIL', 'Memory utilization (in %).', (g) =>
    Math.round(60 * g.util * (0.3 + 0.7 * batchFrac(g)))
  );
  gauge('DCGM_FI_DEV_ENC_UTIL', 'Encoder utilization (in %).', () => 0);
  gauge('DCGM_FI_DEV_DEC_UTIL', 'Decoder utilization (in %).', () => 0);
  gauge('DCGM_FI_DEV_XID_ERRORS', 'Value of the last XID error encountered.', () => 0);
  gauge('DCGM_FI_DEV_FB_FREE', 'Framebuffer memory free (in MiB).', (g) => FB_TOTAL_MIB - 512 - fbUsed(g));
  gauge('DCGM_FI_DEV_FB_USED', 'Framebuffer memory used (in MiB).', fbUsed);
  gauge('DCGM_FI_DEV_FB_RESERVED', 'Framebuffer memory reserved (in MiB).', () => 512);
  new Counter({
    name: 'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL',
    help: 'Total number of NVLink bandwidth counters for all lanes.',
    labelNames,
    registers: [registry],
    collect() {
      for (const g of mine) for (const l of instances(g, false)) this.inc(l, Math.round(g.util * 1e6));
    },
  });
  gauge('DCGM_FI_DEV_VGPU_LICENSE_STATUS', 'vGPU License status', () => 0);
  new Counter({
    name: 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS',
    help: 'Number of remapped rows for uncorrectable errors',
    labelNames,
    registers: [registry],
    collect() {
      for (const g of mine) for (const l of instances(g, false)) this.inc(l, 0);
    },
  });
  new Counter({
    name: 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS',
    help: 'Number of remapped rows for correctable errors',
    labelNames,
    registers: [registry],
    collect() {
      for (const g of mine) for (const l of instances(g, false)) this.inc(l, 0);
    },
  });
  gauge('DCGM_FI_DEV_ROW_REMAP_FAILURE', 'Whether remapping of rows has failed', () => 0);
  // Profiling fields (ratios 0..1), per MIG instance when MIG is on.
  gauge(
    'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
    'Ratio of time the graphics engine is active.',
    (g) => Number(g.util.toFixed(4)),
    true
  );
  if (opts.smActive)
    gauge(
      'DCGM_FI_PROF_SM_ACTIVE',
      'The ratio of cycles an SM has at least 1 warp assigned.',
      (g) => Number((g.util * (0.55 + 0.4 * batchFrac(g))).toFixed(4)),
      true
    );
  gauge(
    'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
    'Ratio of cycles the tensor (HMMA) pipe is active.',
    (g) => Number((g.util * 0.45 * (0.4 + 0.6 * batchFrac(g))).toFixed(4)),
    true
  );
  gauge(
    'DCGM_FI_PROF_DRAM_ACTIVE',
    'Ratio of cycles the device memory interface is active sending or receiving data.',
    (g) => Number((g.util * (0.6 - 0.3 * batchFrac(g))).toFixed(4)),
    true
  );
  gauge(
    'DCGM_FI_PROF_PCIE_TX_BYTES',
    'The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
    (g) => Math.round(2e6 + 4e7 * g.util),
    true
  );
  gauge(
    'DCGM_FI_PROF_PCIE_RX_BYTES',
    'The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
    (g) => Math.round(3e6 + 6e7 * g.util),
    true
  );
  return registry;
}
