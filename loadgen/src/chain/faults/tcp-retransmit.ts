/**
 * tcp_retransmit: an nftables rule drops a share of the packets sent to the target hop's ports on loopback, so the
 * kernel really retransmits (visible to a retransmit probe). Needs root and nft; otherwise the fault is refused with
 * "unavailable here: <reason>". One table per fault, named `lg-hopscope-<pid>-<n>`, removed when the fault ends or the
 * chain stops, and also when this process dies another way: on exit (an uncaught error included) and on SIGTERM, SIGINT
 * or SIGHUP (synchronously, then the signal goes on as it would have). What only SIGKILL can leave behind, the next
 * chain's control API removes at start (tables whose pid is gone).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const tables = new Set<string>();
let seq = 0;

/** `true` when this machine can inject retransmits, else the reason it cannot. */
export async function tcpRetransmitAvailable(): Promise<true | string> {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (nftables rules)';
  try {
    await run('nft', ['list', 'tables'], { timeout: 5000 });
    return true;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    return e.code === 'ENOENT'
      ? 'the nft binary is not installed (Debian package nftables)'
      : `nft does not work here: ${(e.stderr ?? e.message).trim()}`;
  }
}

let sweptStale = false;

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes tables left by chain processes that died without cleaning up (their pid is gone); returns their names. */
export async function removeStaleTables(): Promise<string[]> {
  sweptStale = true;
  const { stdout } = await run('nft', ['list', 'tables'], { timeout: 5000 }).catch(() => ({ stdout: '' }));
  const removed: string[] = [];
  for (const m of stdout.matchAll(/table inet (lg-hopscope-(\d+)-\d+)/g)) {
    if (Number(m[2]) === process.pid || pidAlive(Number(m[2]))) continue;
    if (
      await run('nft', ['delete', 'table', 'inet', m[1]]).then(
        () => true,
        () => false
      )
    )
      removed.push(m[1]);
  }
  return removed;
}

async function sweepStaleTables(): Promise<void> {
  if (!sweptStale) await removeStaleTables();
}

/** Synchronous: exit handlers and signal handlers cannot wait. */
function removeAllSync(): void {
  for (const t of [...tables]) {
    tables.delete(t);
    try {
      execFileSync('nft', ['delete', 'table', 'inet', t], { stdio: 'ignore', timeout: 5000 });
    } catch {
      /* already gone */
    }
  }
}

let hooked = false;
/** Once a table exists: remove every table when the process exits or is told to stop, whoever handles that. */
function hookProcessEnd(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeAllSync);
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      removeAllSync();
      // Nobody else handles it: die of the signal, as without this listener.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.once(sig, onSignal);
  }
}

/** Installs the drop rule; returns the table name (to remove later). */
export async function startRetransmits(ports: number[], percent: number): Promise<string> {
  await sweepStaleTables();
  const table = `lg-hopscope-${process.pid}-${seq++}`;
  const p = Math.max(1, Math.min(50, Math.round(percent)));
  hookProcessEnd();
  await run('nft', ['add', 'table', 'inet', table]);
  tables.add(table);
  try {
    // Input hook: a packet dropped there was already sent, so the sender's TCP retransmits it (a real loss, seen by
    // tcp:tcp_retransmit_skb). Dropped on output it would be a local send error, requeued without a retransmit.
    await run('nft', ['add', 'chain', 'inet', table, 'in', '{ type filter hook input priority 0; policy accept; }']);
    await run('nft', [
      'add',
      'rule',
      'inet',
      table,
      'in',
      'ip',
      'daddr',
      '127.0.0.1',
      'tcp',
      'dport',
      `{ ${ports.join(', ')} }`,
      'numgen',
      'random',
      'mod',
      '100',
      '<',
      String(p),
      'counter',
      'drop',
    ]);
  } catch (err) {
    await stopRetransmits(table);
    throw err;
  }
  return table;
}

export async function stopRetransmits(table: string): Promise<void> {
  tables.delete(table);
  await run('nft', ['delete', 'table', 'inet', table]).catch(() => {});
}

/** Packets the rule dropped so far (for tests and the fault note). */
export async function droppedPackets(table: string): Promise<number> {
  try {
    const { stdout } = await run('nft', ['list', 'table', 'inet', table]);
    const m = /counter packets (\d+)/.exec(stdout);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Removes every table this process made (on shutdown). */
export async function stopAllRetransmits(): Promise<void> {
  await Promise.all([...tables].map(stopRetransmits));
}
