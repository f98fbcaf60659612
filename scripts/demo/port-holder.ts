/**
 * Which process listens on a TCP port (Linux, from /proc): the demo names it when a port it needs is taken, so a
 * demo left running (or anything else) is found at once instead of through Prometheus' "address already in use".
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/** Whether `port` can be listened on at 127.0.0.1 now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Socket inodes listening on `port` (IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT" in hex; st 0A = LISTEN; the inode is field 10.
      if (f.length > 9 && f[1].endsWith(`:${hex}`) && f[3] === '0A') out.add(f[9]);
    }
  }
  return out;
}

/** The pid and command line of the process listening on `port`, or undefined when it cannot be seen. */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  const inodes = listeningInodes(port);
  if (!inodes.size) return undefined;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1])) {
        let command = '';
        try {
          command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
        } catch {
          /* gone meanwhile */
        }
        return { pid: Number(pid), command: command.slice(0, 200) };
      }
    }
  }
  return undefined;
}

/** A message for each port in `ports` that is taken, naming its holder where /proc shows it. */
export async function takenPorts(ports: Array<{ port: number; part: string; env: string }>): Promise<string[]> {
  const out: string[] = [];
  for (const { port, part, env } of ports) {
    if (await portFree(port)) continue;
    const h = portHolder(port);
    out.push(
      h
        ? `port ${port} (${part}) is taken by pid ${h.pid} (${h.command || 'unknown command'}): a demo left running? stop it with \`kill ${h.pid}\`, or set ${env}`
        : `port ${port} (${part}) is taken by a process this user cannot see: stop it, or set ${env}`
    );
  }
  return out;
}
