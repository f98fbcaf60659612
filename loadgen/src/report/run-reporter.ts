/**
 * The run's life on the proxy: registered at start (POST /api/runs; a reused id is refused unless joining), a
 * heartbeat every 5 s while it runs (a run without any is marked aborted by the proxy), and the finish at the end
 * (POST /api/runs/:runId/finish), retried while the proxy or its database is down and spooled to a file when it
 * still cannot be delivered. The proxy being unreachable never stops the run: it is said once.
 */
import { unlinkSync } from 'node:fs';
import type { RunFinish, RunHeartbeat, RunRegistration } from '../../../contract/runs';
import { UsageError } from '../load/errors';
import { answerMessage, ProxyClient, ProxyUnavailable, type ProxyAnswer } from './proxy-client';
import { resendTarget } from './resend-target';
import { readSpool, writeSpool } from './spool';

export interface ReporterOptions {
  client: ProxyClient;
  registration: RunRegistration;
  warn: (msg: string) => void;
  spoolDir: string;
  heartbeatMs?: number;
  /** How long the finish is retried before it is spooled. */
  retryForMs?: number;
  /** How long registration is tried at start (the run does not wait longer for the proxy). */
  registerForMs?: number;
}

export interface FinishOutcome {
  delivered: boolean;
  spoolFile?: string;
  message?: string;
}

const runPath = (runId: string, tail = ''): string => `/api/runs/${encodeURIComponent(runId)}${tail}`;
const ok = (a: ProxyAnswer): boolean => a.status >= 200 && a.status < 300;

export class RunReporter {
  registered = false;
  private timer?: NodeJS.Timeout;
  private heartbeatFailing = false;
  private beating?: Promise<void>;

  constructor(private readonly o: ReporterOptions) {}

  private get url(): string {
    return this.o.client.baseUrl;
  }

  /** Refusals that are the user's to fix end the run before it starts (UsageError); anything else is a warning. */
  async register(): Promise<void> {
    const reg = this.o.registration;
    let a: ProxyAnswer;
    try {
      a = await this.o.client.send('POST', '/api/runs', reg, performance.now() + (this.o.registerForMs ?? 3000));
    } catch (err) {
      if (!(err instanceof ProxyUnavailable)) throw err;
      this.o.warn(`${err.message}; the run goes on, and its record is sent at the end`);
      return;
    }
    if (ok(a)) {
      this.registered = true;
      return;
    }
    if (a.status === 409) {
      throw new UsageError(
        `run id ${reg.runId} is already used on the proxy (${answerMessage(a)}): choose another --run-id, or add --join to add this worker to that run`
      );
    }
    if (a.status === 401 || a.status === 403) {
      throw new UsageError(
        `the proxy at ${this.url} refused the token (${answerMessage(a)}): set HOPSCOPE_PROXY_TOKEN to the proxy's token, or --report none`
      );
    }
    this.o.warn(
      `the proxy at ${this.url} did not register the run (${answerMessage(a)}); the run goes on, and its record is sent at the end`
    );
  }

  /**
   * Registration after a failed first try: the very same body, which the proxy takes as a retry when the first try
   * landed without our hearing the answer (an identical registration of the same worker is idempotent).
   */
  private async registerAgain(deadline: number): Promise<ProxyAnswer> {
    const a = await this.o.client.send('POST', '/api/runs', this.o.registration, deadline);
    if (ok(a)) this.registered = true;
    return a;
  }

  startHeartbeats(live: () => Omit<RunHeartbeat, 'workerId'>): void {
    const beat = async (): Promise<void> => {
      try {
        if (!this.registered) {
          const r = await this.registerAgain(performance.now() + 1000);
          if (!ok(r)) throw new Error(answerMessage(r));
        }
        const a = await this.o.client.call('POST', runPath(this.o.registration.runId, '/heartbeat'), {
          workerId: this.o.registration.workerId,
          ...live(),
        } satisfies RunHeartbeat);
        if (a.status === 404) this.registered = false;
        if (!ok(a)) throw new Error(answerMessage(a));
        if (this.heartbeatFailing) {
          this.heartbeatFailing = false;
          this.o.warn(`heartbeats reach the proxy at ${this.url} again`);
        }
      } catch (err) {
        if (!this.heartbeatFailing) {
          this.heartbeatFailing = true;
          this.o.warn(
            `heartbeat to the proxy failed (${(err as Error).message}); the run goes on, retrying every ${(this.o.heartbeatMs ?? 5000) / 1000} s`
          );
        }
      }
    };
    this.timer = setInterval(() => {
      if (!this.beating)
        this.beating = beat().finally(() => {
          this.beating = undefined;
        });
    }, this.o.heartbeatMs ?? 5000);
  }

  async stopHeartbeats(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
  }

  /** Delivers the finish, or spools it; never throws for the proxy's sake. */
  async finish(f: RunFinish, retryForMs = this.o.retryForMs ?? 30_000): Promise<FinishOutcome> {
    await this.stopHeartbeats();
    const deadline = performance.now() + retryForMs;
    // Said once: the first retry, and how long we keep trying.
    let said = false;
    const onRetry = (why: string, waitMs: number): void => {
      if (said) return;
      said = true;
      this.o.warn(
        `finish not delivered yet (${why}); retrying in ${(waitMs / 1000).toFixed(1)} s, for up to ${(retryForMs / 1000).toFixed(0)} s`
      );
    };
    let reason: string;
    try {
      reason = await deliver(this.o.client, this.o.registration, f, deadline, onRetry, this.registered);
      if (!reason) return { delivered: true };
    } catch (err) {
      if (!(err instanceof ProxyUnavailable)) throw err;
      reason = err.message;
    }
    try {
      const spoolFile = writeSpool(this.o.spoolDir, {
        proxyUrl: this.url,
        registration: this.o.registration,
        finish: f,
        reason,
      });
      return { delivered: false, spoolFile, message: reason };
    } catch (err) {
      return { delivered: false, message: `${reason}; and ${(err as Error).message}` };
    }
  }
}

/**
 * POSTs the finish (registering first when needed, or when the proxy does not know the run). Returns '' when
 * delivered, else why not; throws ProxyUnavailable when the deadline passed.
 */
async function deliver(
  client: ProxyClient,
  reg: RunRegistration,
  f: RunFinish,
  deadline: number,
  onRetry?: (why: string, ms: number) => void,
  registered = false
): Promise<string> {
  // The same body as the first try: a retry of an identical registration is idempotent on the proxy.
  const register = async (): Promise<string> => {
    const a = await client.send('POST', '/api/runs', reg, deadline, onRetry);
    return ok(a) ? '' : `the proxy did not register the run (${answerMessage(a)})`;
  };
  if (!registered) {
    const why = await register();
    if (why) return why;
  }
  let a = await client.send('POST', runPath(reg.runId, '/finish'), f, deadline, onRetry);
  if (a.status === 404 && registered) {
    const why = await register();
    if (why) return why;
    a = await client.send('POST', runPath(reg.runId, '/finish'), f, deadline, onRetry);
  }
  return ok(a) ? '' : `the proxy refused the finish (${answerMessage(a)})`;
}

/** `hopscope-load --resend FILE`: delivers a spooled run; the file is removed once delivered. */
export async function resendSpool(
  file: string,
  opts: { proxyUrl: string; reportGiven: boolean; token?: string; retryForMs?: number; warn: (m: string) => void }
): Promise<FinishOutcome> {
  const rec = readSpool(file);
  // The token goes only to the configured proxy, never to one only the file names (resend-target.ts).
  const client = new ProxyClient(resendTarget(rec.proxyUrl, opts.proxyUrl, opts.reportGiven), opts.token);
  try {
    const why = await deliver(
      client,
      rec.registration,
      rec.finish,
      performance.now() + (opts.retryForMs ?? 30_000),
      (w, ms) => opts.warn(`not delivered yet (${w}); retrying in ${(ms / 1000).toFixed(1)} s`)
    );
    if (why) return { delivered: false, spoolFile: file, message: why };
  } catch (err) {
    if (!(err instanceof ProxyUnavailable)) throw err;
    return { delivered: false, spoolFile: file, message: err.message };
  }
  try {
    unlinkSync(file);
  } catch {
    /* delivered all the same */
  }
  return { delivered: true };
}
