/**
 * One proxy per embedded data dir: PGlite is one in-process PostgreSQL with no locking of its own that another
 * process would respect, so two proxies on one dir would corrupt it. A lock file holds the owner's pid, host and a
 * nonce, and is touched every few seconds; a lock is stale (taken over) when its pid is gone on this host, or when
 * nobody touched it for STALE_MS (an owner on another host, e.g. a pod that shared the volume and died).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DatabaseLockedError } from './errors';

export const LOCK_FILE = 'hopscope-proxy.lock';
const TOUCH_MS = 5_000;
const STALE_MS = 30_000;

interface LockInfo {
  pid: number;
  host: string;
  nonce: string;
  since: string;
}

/** Lock files this process holds: its own pid in a lock it does not hold is a previous life's (a container's pid 1). */
const heldHere = new Set<string>();

export interface DataDirLock {
  readonly file: string;
  /** Removes the lock, if it is still ours. */
  release(): void;
  /** Set when a stale lock was taken over (its previous owner did not shut down cleanly). */
  readonly tookOver?: LockInfo;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): LockInfo | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockInfo;
  } catch {
    return undefined; // half-written or unreadable: judged by its age alone
  }
}

function isStale(file: string, info: LockInfo | undefined): boolean {
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(file).mtimeMs;
  } catch {
    return true; // gone meanwhile
  }
  if (info && info.host === hostname()) return info.pid === process.pid ? !heldHere.has(file) : !alive(info.pid);
  return ageMs > STALE_MS;
}

/** Writes the lock to a temp file and hard-links it into place: atomic, fails if a lock exists. */
function tryCreate(file: string, info: LockInfo): boolean {
  const tmp = `${file}.${process.pid}.${info.nonce}`;
  const fd = openSync(tmp, 'wx');
  try {
    writeSync(fd, JSON.stringify(info));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

export function lockDataDir(dir: string): DataDirLock {
  const file = join(dir, LOCK_FILE);
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(8).toString('hex'),
    since: new Date().toISOString(),
  };
  let tookOver: LockInfo | undefined;
  if (!tryCreate(file, info)) {
    const other = readLock(file);
    if (!isStale(file, other)) {
      const who = other ? `pid ${other.pid} on ${other.host}, since ${other.since}` : 'an unreadable lock file';
      throw new DatabaseLockedError(
        `the data dir ${dir} is in use by another proxy (${who}): one proxy per data dir. Stop that proxy, give this one ` +
          'its own HOPSCOPE_DATA_DIR, or share one PostgreSQL between proxies (HOPSCOPE_DATABASE_URL).'
      );
    }
    tookOver = other;
    try {
      unlinkSync(file);
    } catch {
      /* another starter removed it first */
    }
    if (!tryCreate(file, info))
      throw new DatabaseLockedError(
        `the data dir ${dir} was taken by another proxy starting at the same time: one proxy per data dir`
      );
  }
  heldHere.add(file);
  const timer = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(file, now, now);
    } catch {
      /* removed under us: nothing to refresh */
    }
  }, TOUCH_MS);
  timer.unref();
  return {
    file,
    tookOver,
    release() {
      clearInterval(timer);
      heldHere.delete(file);
      if (readLock(file)?.nonce === info.nonce) {
        try {
          unlinkSync(file);
        } catch {
          /* already gone */
        }
      }
    },
  };
}
