/**
 * A real PostgreSQL (Debian's, `postgresql` in scripts/setup.sh) in a temp dir on a free loopback port, for tests and
 * benchmarks. fsync stays on, so durability tests mean something. PostgreSQL refuses to run as root: as root, its
 * binaries run as the `postgres` OS user (runuser) in a temp dir owned by it. The unix socket lives in the temp dir.
 * `postgresSkipReason()` says why it cannot run here (tests skip with that reason).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { freePort } from './real-servers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresServer {
  port: number;
  dir: string;
  /** The URL of a database on it (default: `postgres`). */
  url(database?: string): string;
  /** A fresh, empty database; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Clean stop (`pg_ctl stop -m fast`) and start again on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGKILL to the postmaster and every backend (a crash); start() then runs crash recovery. */
  kill9(): void;
  /** Stops it and removes the temp dir. */
  close(): Promise<void>;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (process.env.HOPSCOPE_PG_BIN) return process.env.HOPSCOPE_PG_BIN;
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** Undefined when a PostgreSQL server can be started here; otherwise why not. */
export function postgresSkipReason(): string | undefined {
  if (!binDir()) return 'PostgreSQL is not installed (apt-get install postgresql; scripts/setup.sh does it)';
  if (isRoot() && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'running as root but there is no postgres OS user to run PostgreSQL as';
  return undefined;
}

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
function pgRun(bin: string, args: string[]): string {
  const exe = join(binDir()!, bin);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(p));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

export async function startPostgres(): Promise<PostgresServer> {
  const reason = postgresSkipReason();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-pg-'));
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  // --no-sync only skips initdb's own final sync (speed); the server below runs with fsync on.
  pgRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=100 -c shared_buffers=32MB`;
  const start = async (): Promise<void> => {
    pgRun('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', opts, 'start']);
  };
  const stop = async (): Promise<void> => {
    if (existsSync(join(data, 'postmaster.pid'))) pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();
  const url = (database = 'postgres'): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let n = 0;
  return {
    port,
    dir,
    url,
    async createDatabase(prefix = 'hopscope') {
      const name = `${prefix}_${process.pid}_${++n}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    stop,
    start,
    kill9() {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const kids = childrenOf(pid);
      for (const p of [pid, ...kids]) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      // pg_ctl start refuses while the old postmaster.pid names a live process; wait for the kills to land.
      const t0 = Date.now();
      while ([pid, ...kids].some((p) => existsSync(`/proc/${p}`)) && Date.now() - t0 < 5000)
        spawnSync('sleep', ['0.05']);
    },
    async close() {
      try {
        await stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
