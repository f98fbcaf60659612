/** hopscope-bpf-exporter: the per-node eBPF exporter (see --help). */
import { pino } from 'pino';
import { ConfigError, ENV_HELP, loadConfig } from './config';
import { ALL_PROBES } from './probes';
import { startExporter } from './server';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`Usage: tsx bpf-exporter/src/main.ts

Hopscope bpf-exporter: bpftrace probes → kernel events joined to pods, served on
  GET /health  /metrics  /events?from&to&pod&pid&type&traceId&class&limit[&after]
  GET /events/stream?class&type&pod&pid[&after]  (SSE; id: = event seq, resume with Last-Event-ID)
  POST /register {pid, pod, namespace?, node?, service?, labels?}   DELETE /register/:pid
With HOPSCOPE_BPF_TOKEN, /register and /events* need Authorization: Bearer <token>; without one it binds
loopback only. Needs root, bpftrace and tracefs; otherwise it still serves /health (saying why) and empty /events.
Protocol, Kubernetes mode and kernel needs: bpf-exporter/README.md.

Probes:
${ALL_PROBES.map((p) => `  ${p.name.padEnd(17)} ${p.description}${p.optIn ? ' (opt-in)' : ''}`).join('\n')}

${ENV_HELP}`);
  process.exit(0);
}

let cfg;
try {
  cfg = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`bpf-exporter: ${err.message}`);
    process.exit(2);
  }
  throw err;
}
const log = pino({ level: cfg.logLevel });
const exporter = await startExporter(cfg, log);
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal: sig }, 'stopping: detaching probes');
    exporter.stop().then(
      () => process.exit(0),
      () => process.exit(1)
    );
  });
}
