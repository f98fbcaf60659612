/**
 * The pod's CPU as every Prometheus client library exposes it: `process_cpu_seconds_total` ("Total user and system
 * CPU time spent in seconds.", prom-client lib/metrics/processCpuTotal.js, the same name in client_python and
 * client_golang's process collector). Registered only where the process is the pod (split mode): in the single-process
 * chain every pod shares one process, and its CPU would be charged to each.
 */
import { Counter, type Registry } from 'prom-client';

export function registerProcessCpu(registry: Registry): void {
  let last = 0;
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers: [registry],
    collect() {
      const u = process.cpuUsage();
      const total = (u.user + u.system) / 1e6;
      this.inc(Math.max(0, total - last));
      last = total;
    },
  });
}
