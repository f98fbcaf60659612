/**
 * `npm start` leaves no orphans (issue 20, finding 11): the demo supervisor (scripts/demo.ts, what scripts/demo.sh
 * execs) is started with Prometheus and the exporter on free ports, then SIGKILLed, so none of
 * its own cleanup runs (Prometheus, the exporter with its bpftrace children); every part must end (their ports free, their process groups gone) within a bounded time,
 * through the reaper watching the supervisor's pipe. And a start that finds a demo port taken names the process
 * holding it and starts nothing. Whatever happens, the test kills every process group it saw.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { portFree, portHolder } from '../../../scripts/demo/port-holder';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PROMETHEUS = '/usr/bin/prometheus';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const pgidOf = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
};
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The demo supervisor, as demo.sh starts it; its output collected. */
function demo(env: Record<string, string>, only: string): ChildProcess & { out: () => string } {
  const base = { ...process.env };
  delete base.HOPSCOPE_PROXY_TOKEN;
  const c = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--only', only], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcess & { out: () => string };
  let text = '';
  c.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  c.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  c.out = () => text;
  return c;
}

async function until(
  what: string,
  ok: () => boolean | Promise<boolean>,
  ms: number,
  why: () => string = () => ''
): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not within ${ms / 1000} s: ${why()}`);
}

describe('npm start: no orphans', { skip: existsSync(PROMETHEUS) ? undefined : `${PROMETHEUS} missing` }, () => {
  const groups = new Set<number>();
  const children: ChildProcess[] = [];
  let dataDir = '';
  let blocker: Server | undefined;
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const g of groups)
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        /* gone, as it should be */
      }
    blocker?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGKILL of the supervisor: every part ends and frees its port within 20 s', async () => {
    dataDir = mkdtempSync(join(tmpdir(), `hopscope-demo-orphans-${process.pid}-`));
    // The proxy and the chain are left out: on a busy machine their start (database; one process per pod) can take
    // longer than the demo waits. Prometheus (not Node: no handler of ours) and the exporter (with its bpftrace
    // children, as root) are the parts that outlived a killed demo.
    const port = { prometheus: 0, bpf: 0 };
    for (const k of Object.keys(port) as Array<keyof typeof port>) port[k] = await freePort();
    const sup = demo(
      {
        HOPSCOPE_PROMETHEUS_PORT: String(port.prometheus),
        HOPSCOPE_PROXY_PORT: String(await freePort()),
        HOPSCOPE_BPF_PORT: String(port.bpf),
        HOPSCOPE_CONTROL_PORT: String(await freePort()),
        HOPSCOPE_DATA_DIR: dataDir,
      },
      'prometheus,bpf-exporter'
    );
    children.push(sup);
    await until(
      'the demo running',
      () => /Hopscope is running/.test(sup.out()),
      120_000,
      () => sup.out().slice(-2000)
    );
    const ports = Object.values(port);
    for (const p of ports) {
      const h = portHolder(p);
      assert.ok(h, `something listens on ${p}: ${sup.out().slice(-1000)}`);
      const g = pgidOf(h.pid);
      if (g) groups.add(g);
    }
    assert.equal(groups.size, 2, `one process group per part: ${[...groups].join(', ')}`);

    sup.kill('SIGKILL');
    await until(
      'every part stopped',
      async () => [...groups].every((g) => !groupAlive(g)) && (await Promise.all(ports.map(portFree))).every(Boolean),
      20_000,
      () => `groups alive: ${[...groups].filter(groupAlive).join(', ')}; ${sup.out().slice(-1000)}`
    );
  });

  it('a taken demo port is named with the process that holds it, and nothing starts', async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as AddressInfo).port;
    const sup = demo({ HOPSCOPE_PROMETHEUS_PORT: String(taken) }, 'prometheus');
    children.push(sup);
    const code = await new Promise<number | null>((r) => sup.once('exit', (c) => r(c)));
    assert.equal(code, 1, sup.out());
    assert.match(
      sup.out(),
      new RegExp(`port ${taken} \\(prometheus\\) is taken by pid ${process.pid} \\(.*\\).*HOPSCOPE_PROMETHEUS_PORT`)
    );
    assert.match(sup.out(), /nothing was started/);
  });
});
