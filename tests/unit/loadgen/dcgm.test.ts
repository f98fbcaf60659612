import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DCGM_BLANK_INT64, dcgmRegistry, makeGpus } from '../../../loadgen/src/chain/gpu/dcgm';

function gpus() {
  const g = makeGpus(['node-a'], 2);
  g[0].owner = {
    pod: 'llm-vllm-x-0',
    namespace: 'ns',
    container: 'vllm',
    engine: { busyMsTotal: 0, lastBatchSize: 16, kvUsage: 0.5, opts: { maxNumSeqs: 32 } },
    weightsMiB: 8000,
    gpuCount: 2,
    oom: () => false,
  };
  return g;
}

describe('simulated dcgm-exporter', () => {
  it('uses dcgm-exporter labels and the blank sentinel', async () => {
    const text = await dcgmRegistry('node-a', gpus(), {
      smActive: true,
      hostnameLabel: 'Hostname',
      mig: false,
    }).metrics();
    assert.match(
      text,
      /DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-[0-9a-f-]{36}",pci_bus_id="[^"]+",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="[^"]+",container="vllm",namespace="ns",pod="llm-vllm-x-0"\} \d+/
    );
    // prom-client prints doubles: the sentinel reads back as ≥ 9.22e18, which is how consumers detect it.
    const blank = Number(/DCGM_FI_DEV_MEMORY_TEMP\{[^}]*\} (\S+)/.exec(text)![1]);
    assert.ok(blank >= 9.22e18 && Math.abs(blank - DCGM_BLANK_INT64) < 2048);
    assert.match(text, /# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter/);
    assert.ok(text.includes('DCGM_FI_PROF_SM_ACTIVE{'));
  });

  it('can drop SM_ACTIVE, use lowercase hostname, and split GPU 0 into MIG instances', async () => {
    const text = await dcgmRegistry('node-a', gpus(), {
      smActive: false,
      hostnameLabel: 'hostname',
      mig: true,
    }).metrics();
    assert.ok(!text.includes('DCGM_FI_PROF_SM_ACTIVE'));
    assert.ok(!text.includes('Hostname='));
    const gr = text.split('\n').filter((l) => l.startsWith('DCGM_FI_PROF_GR_ENGINE_ACTIVE{'));
    assert.equal(gr.length, 3, 'GPU 0 as two MIG instances + GPU 1');
    assert.ok(gr.filter((l) => /GPU_I_PROFILE="3g.40gb",GPU_I_ID="[12]"/.test(l)).length === 2);
    assert.ok(
      text
        .split('\n')
        .filter((l) => l.startsWith('DCGM_FI_DEV_FB_USED{'))
        .every((l) => !l.includes('GPU_I_ID')),
      'device fields stay per GPU'
    );
  });

  it('FB_USED rises and FB_FREE falls by what the replica leaked (split over its GPUs), up to a full framebuffer', async () => {
    const g = gpus();
    const fb = async () => {
      const text = await dcgmRegistry('node-a', g, { smActive: true, hostnameLabel: 'Hostname', mig: false }).metrics();
      const v = (name: string) => Number(new RegExp(`${name}\\{gpu="0"[^}]*\\} (\\S+)`).exec(text)![1]);
      return { used: v('DCGM_FI_DEV_FB_USED'), free: v('DCGM_FI_DEV_FB_FREE') };
    };
    const before = await fb();
    g[0].owner!.engine.leakedBytes = 6 * 2 ** 30; // 6 GiB over 2 GPUs: 3,072 MiB on this one
    const during = await fb();
    assert.equal(during.used - before.used, 3072);
    assert.equal(before.free - during.free, 3072);
    g[0].owner!.engine.leakedBytes = 1000 * 2 ** 30;
    assert.equal((await fb()).free, 12, 'never more than the framebuffer has');
  });
});
