/**
 * Named leases: at most one holder at a time (e.g. `alerts-evaluator`: only one proxy of several on one PostgreSQL
 * evaluates and pushes alerts). Expiry is judged by the database's clock, so proxies with skewed clocks agree; one
 * atomic upsert takes a free or expired lease or renews one's own. The token grows each time the lease changes hands
 * (a fencing token). Works the same on PGlite (one proxy: it always holds) and PostgreSQL.
 */
import type pino from 'pino';
import type { Database, Queryable } from './types';

export interface LeaseState {
  name: string;
  holder: string;
  token: number;
  /** Epoch ms by the database's clock. */
  expiresAtMs: number;
}

export interface LeaseAttempt {
  held: boolean;
  /** Who holds it now (us when held), null when nobody does. */
  lease: LeaseState | null;
}

type Row = { name: string; holder: string; token: number; expires_ms: number };
const state = (r: Row): LeaseState => ({ name: r.name, holder: r.holder, token: r.token, expiresAtMs: r.expires_ms });
const RETURNING = `RETURNING name, holder, token, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms`;

export function checkLeaseArgs(name: string, holder: string, ttlMs: number): void {
  if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(name))
    throw new RangeError(`lease name "${name}": 1-100 letters, digits, _ . : -`);
  if (!holder || holder.length > 200) throw new RangeError('lease holder: 1-200 characters');
  if (!Number.isInteger(ttlMs) || ttlMs < 100 || ttlMs > 3_600_000)
    throw new RangeError(`lease ttl ${ttlMs} ms: a whole number 100..3600000`);
}

/** Takes the lease when it is free or expired, renews it when `holder` has it; otherwise says who has it. */
export async function acquireLease(q: Queryable, name: string, holder: string, ttlMs: number): Promise<LeaseAttempt> {
  checkLeaseArgs(name, holder, ttlMs);
  const won = await q.query<Row>(
    `INSERT INTO leases AS l (name, holder, token, acquired_at, expires_at)
     VALUES ($1, $2, 1, clock_timestamp(), clock_timestamp() + $3::double precision * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET
       holder = EXCLUDED.holder,
       token = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at >= clock_timestamp() THEN l.token ELSE l.token + 1 END,
       acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at >= clock_timestamp() THEN l.acquired_at ELSE EXCLUDED.acquired_at END,
       expires_at = EXCLUDED.expires_at
     WHERE l.holder = EXCLUDED.holder OR l.expires_at < clock_timestamp()
     ${RETURNING}`,
    [name, holder, ttlMs]
  );
  if (won.rows[0]) return { held: true, lease: state(won.rows[0]) };
  return { held: false, lease: await currentLease(q, name) };
}

/** A write fenced by a lease its writer no longer holds (another proxy took it over): nothing was written. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor(
    readonly lease: string,
    readonly holder: string,
    readonly token: number
  ) {
    super(`lease ${lease} is no longer held by ${holder} with token ${token}: the write was refused`);
  }
}

/** Who may write under a lease: its holder with the fencing token it holds. */
export interface LeaseFence {
  lease: string;
  holder: string;
  token: number;
}

/**
 * Inside a write's transaction, first: the lease row as `holder` holds it with `token` and unexpired, locked FOR
 * SHARE (a takeover, an UPDATE of that row, waits until this transaction ends, so the successor's writes come after),
 * else LeaseLostError (the caller's transaction rolls back: a stale holder writes nothing).
 */
export async function assertFence(q: Queryable, f: LeaseFence): Promise<void> {
  const r = await q.query(
    `SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at >= clock_timestamp() FOR SHARE`,
    [f.lease, f.holder, f.token]
  );
  if (!r.rowCount) throw new LeaseLostError(f.lease, f.holder, f.token);
}

/** Gives the lease up (only if `holder` has it), so another proxy takes it at once instead of after the ttl. */
export async function releaseLease(q: Queryable, name: string, holder: string): Promise<boolean> {
  const r = await q.query(
    `UPDATE leases SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE name = $1 AND holder = $2 AND expires_at >= clock_timestamp() RETURNING name`,
    [name, holder]
  );
  return r.rowCount > 0;
}

/** The unexpired holder of `name`, or null. */
export async function currentLease(q: Queryable, name: string): Promise<LeaseState | null> {
  const r = await q.query<Row>(
    `SELECT name, holder, token, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms FROM leases WHERE name = $1 AND expires_at >= clock_timestamp()`,
    [name]
  );
  return r.rows[0] ? state(r.rows[0]) : null;
}

export interface LeaseKeeperOptions {
  db: Database;
  name: string;
  /** This proxy, e.g. `${hostname()}:${pid}`. */
  holder: string;
  ttlMs: number;
  log: pino.Logger;
  /** Called when this proxy gains or loses the lease. */
  onChange?: (held: boolean, lease: LeaseState | null) => void;
}

/**
 * Keeps trying to hold a lease: renews every ttl/3. `held()` is the local view and errs on the safe side: it turns
 * false when a renewal fails, and in any case one ttl after the last successful renewal was *sent* (so it ends no
 * later than the database's expiry). Work guarded by it (evaluate, push) runs on at most one proxy at a time.
 */
export class LeaseKeeper {
  private deadline = 0;
  private last: LeaseState | null = null;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<boolean>;
  private wasHeld = false;

  constructor(private readonly o: LeaseKeeperOptions) {
    checkLeaseArgs(o.name, o.holder, o.ttlMs);
  }

  held(): boolean {
    return performance.now() < this.deadline;
  }

  /** The fencing token while held. */
  get token(): number | null {
    return this.held() ? (this.last?.token ?? null) : null;
  }

  /** One attempt to take or renew; concurrent callers share it. */
  tick(): Promise<boolean> {
    this.ticking ??= this.attempt().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(
      () => {
        void this.tick();
      },
      Math.max(50, Math.floor(this.o.ttlMs / 3))
    );
    this.timer.unref();
  }

  /** Stops renewing and releases the lease if held. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    if (this.held()) {
      this.deadline = 0;
      await releaseLease(this.o.db, this.o.name, this.o.holder).catch((err: unknown) =>
        this.o.log.warn(
          { err: (err as Error).message, lease: this.o.name },
          'lease: release failed; it expires by itself'
        )
      );
      this.changed(false, null);
    }
  }

  private async attempt(): Promise<boolean> {
    const sentAt = performance.now();
    try {
      const a = await acquireLease(this.o.db, this.o.name, this.o.holder, this.o.ttlMs);
      this.last = a.lease;
      this.deadline = a.held ? sentAt + this.o.ttlMs : 0;
      this.changed(a.held, a.lease);
      return a.held;
    } catch (err) {
      this.deadline = 0;
      this.o.log.warn(
        { err: (err as Error).message, lease: this.o.name },
        'lease: could not renew; not holding it until the database answers'
      );
      this.changed(false, null);
      return false;
    }
  }

  private changed(held: boolean, lease: LeaseState | null): void {
    if (held === this.wasHeld) return;
    this.wasHeld = held;
    this.o.log.info(
      { lease: this.o.name, holder: this.o.holder, held, by: lease?.holder },
      held ? 'lease: acquired' : 'lease: lost'
    );
    this.o.onChange?.(held, lease);
  }
}
