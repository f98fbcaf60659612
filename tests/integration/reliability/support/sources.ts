/**
 * Real source processes for the reliability suite: the bpf-exporter's CLI in replay mode (no eBPF needed, the same
 * HTTP server and event ring), with a recording of kernel events around now; Prometheus comes from
 * ../../proxy/real-servers.ts. Each is a separate process, so it can be stopped with SIGSTOP and resumed with SIGCONT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const EXPORTER_MAIN = join(import.meta.dirname, '..', '..', '..', '..', 'bpf-exporter', 'src', 'main.ts');

export interface ExporterProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A recording of `n` kernel events of pods `rag-0`/`rag-1` in the last few minutes. */
function recording(n: number): string {
  const now = Date.now();
  const types = ['tcp_retransmit', 'tcp_connect', 'tls_handshake'] as const;
  return (
    Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        ts: now - 240_000 + i * Math.floor(240_000 / n),
        type: types[i % 3],
        pid: 100 + (i % 2),
        comm: 'rag',
        pod: `rag-${i % 2}`,
        namespace: 'hopscope-demo',
        node: 'rel-node',
        durationMs: types[i % 3] === 'tcp_retransmit' ? undefined : 5 + (i % 50),
        detail: { i },
        mode: 'live',
      })
    ).join('\n') + '\n'
  );
}

export async function startExporterProcess(events = 500): Promise<ExporterProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'rel-exporter-'));
  writeFileSync(join(dir, 'events.jsonl'), recording(events));
  const child = spawn(process.execPath, ['--import', 'tsx', EXPORTER_MAIN], {
    env: {
      ...process.env,
      HOPSCOPE_BPF_PORT: '0',
      HOPSCOPE_BPF_HOST: '127.0.0.1',
      HOPSCOPE_BPF_NODE: 'rel-node',
      HOPSCOPE_BPF_REPLAY: join(dir, 'events.jsonl'),
      HOPSCOPE_BPF_REPLAY_TIMING: 'fast',
      HOPSCOPE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer): void => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`exporter did not start:\n${out}`));
    }, 60_000);
    child.stdout!.on('data', () => {
      const m = /"url":"(http:\/\/[^"]+)"[^\n]*bpf-exporter listening/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (c, s) => {
      clearTimeout(timer);
      reject(new Error(`exporter exited (${c ?? s}):\n${out}`));
    });
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
