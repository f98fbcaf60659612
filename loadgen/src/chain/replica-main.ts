/**
 * One hop replica in its own process (split mode; forked by split.ts). Runs exactly one pod, registers its pid with
 * the bpf-exporter as that pod, mirrors faults and settings from the control process, and reports LLM engine figures.
 */
import { loadChainConfig, type ChainConfig } from '../config';
import { makeLogger } from '../log';
import type { FromReplica, ToReplica } from './split';
import { startChain } from './start';

const pod = process.env.HOPSCOPE_SPLIT_POD;
if (!pod || !process.send) {
  console.error('replica-main.ts is started by the chain in split mode (HOPSCOPE_SPLIT_POD and an IPC channel)');
  process.exit(2);
}
const cfg: ChainConfig = loadChainConfig(JSON.parse(process.env.HOPSCOPE_SPLIT_CONFIG ?? '{}') as ChainConfig);
const log = makeLogger(cfg.logLevel, `chain:${pod}`);
const send = (m: FromReplica) => {
  if (process.connected) process.send!(m);
};
const chain = await startChain({
  ...cfg,
  logger: log,
  only: [pod],
  endpoints: JSON.parse(process.env.HOPSCOPE_SPLIT_ENDPOINTS ?? '{}'),
  control: false,
});
process.on('message', (m: ToReplica) => {
  if (m.type === 'fault-start') chain.faults.mirror(m.fault);
  else if (m.type === 'fault-end') chain.faults.end(m.id);
  else if (m.type === 'settings') chain.settings.vectorCacheHitRate = m.vectorCacheHitRate;
  else if (m.type === 'flush') void chain.forceFlush().finally(() => send({ type: 'flushed', id: m.id }));
});
const llm = chain.llm.get(pod);
if (llm) {
  setInterval(() => {
    const e = llm.engine;
    send({
      type: 'engine',
      pod,
      stats: {
        busyMsTotal: e.busyMsTotal,
        lastBatchSize: e.lastBatchSize,
        kvUsage: e.kvUsage,
        opts: { maxNumSeqs: e.opts.maxNumSeqs },
        leakedBytes: e.leakedBytes,
      },
    });
  }, 500).unref();
}
send({ type: 'ready', pod, gpuDriverPid: chain.gpuDriverPids[pod] });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await chain.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// The control process went away: do not linger.
process.on('disconnect', () => void stop());
