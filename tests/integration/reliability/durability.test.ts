/**
 * What the proxy acknowledged survives `kill -9` of the proxy, on both engines (embedded PGlite in a data dir, a real
 * PostgreSQL): load-test runs are registered, their finish reports sent ten at a time, and the proxy CLI is killed
 * with SIGKILL while finishes are in flight. Restarted on the same database (PGlite: the dead process's lock and WAL
 * left behind), every acknowledged finish is there with its report, no run is half-finished, and the finishes that
 * got no answer are taken when the load generator resends them (a retry is idempotent). Three kills per engine.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunRecord } from '../../../contract';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';
import { finish, latencies, registration } from '../db/run-fixtures';
import { figure } from './support/figures';
import { startProxyProcess, type ProxyProcess } from './support/proxy-process';

const RUNS = 30;
const KILLS = 3;
const json = { 'content-type': 'application/json' };

async function post(url: string, body: unknown): Promise<number> {
  const r = await fetch(url, {
    method: 'POST',
    headers: json,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  await r.text();
  return r.status;
}

/** Registers RUNS runs, sends their finishes ten at a time and SIGKILLs the proxy after `killAfter` acknowledgements. */
async function killMidFinish(
  proxy: ProxyProcess,
  prefix: string,
  killAfter: number
): Promise<{ ids: string[]; acked: Set<string> }> {
  const ids = Array.from({ length: RUNS }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) assert.equal(await post(`${proxy.url}/api/runs`, registration(id)), 201, id);
  const acked = new Set<string>();
  let next = 0;
  let killed: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < ids.length && !killed) {
        const id = ids[next++];
        try {
          const status = await post(
            `${proxy.url}/api/runs/${id}/finish`,
            finish('w1', latencies(200, 300, ids.indexOf(id) + 1))
          );
          if (status === 200) acked.add(id);
        } catch {
          /* killed mid-request: no answer */
        }
        if (acked.size >= killAfter) killed ??= proxy.kill9();
      }
    })
  );
  await (killed ?? proxy.kill9());
  assert.equal(proxy.exited()?.signal, 'SIGKILL');
  return { ids, acked };
}

async function runEngine(name: string, engineEnv: Record<string, string>): Promise<Record<string, number>> {
  // The fixtures' runs start in June 2025 (run-fixtures.ts): keep them past the restart's retention pass (90 days by
  // default), which would otherwise delete the ended ones as it should.
  const env = { ...engineEnv, HOPSCOPE_RETENTION_DAYS: '36500' };
  let acknowledged = 0;
  let unansweredApplied = 0;
  let resent = 0;
  for (let k = 0; k < KILLS; k++) {
    const proxy = await startProxyProcess(env);
    const { ids, acked } = await killMidFinish(proxy, `dur-${name}-${k}`, 8 + 4 * k);
    acknowledged += acked.size;
    const again = await startProxyProcess(env);
    try {
      for (const id of ids) {
        const r = await fetch(`${again.url}/api/runs/${id}`);
        assert.equal(r.status, 200, `${name}: registered run ${id} is there after kill -9 (${await r.clone().text()})`);
        const run = RunRecord.parse(await r.json());
        const done = run.status !== 'running';
        if (acked.has(id)) {
          assert.equal(run.status, 'passed', `${name}: acknowledged finish of ${id} kept`);
        } else if (done) unansweredApplied++;
        // Never half-written: a finished run has its client summary, a running one none.
        assert.equal(
          done,
          run.summary !== null && run.summary !== undefined,
          `${name}: ${id} is ${run.status} with summary ${JSON.stringify(run.summary)?.slice(0, 80)}`
        );
        if (done) assert.equal(run.summary?.sent, 200, `${name}: ${id}'s summary is the one sent`);
      }
      // The load generator resends what got no answer (and an acknowledged one once more: a retry is idempotent).
      for (const id of [...ids.filter((i) => !acked.has(i)), [...acked][0]]) {
        assert.equal(
          await post(`${again.url}/api/runs/${id}/finish`, finish('w1', latencies(200, 300, ids.indexOf(id) + 1))),
          200,
          `resend ${id}`
        );
        resent++;
      }
      for (const id of ids)
        assert.equal(RunRecord.parse(await (await fetch(`${again.url}/api/runs/${id}`)).json()).status, 'passed', id);
    } finally {
      await again.stop();
    }
  }
  return { kills: KILLS, runs: KILLS * RUNS, acknowledged, lost: 0, unansweredButApplied: unansweredApplied, resent };
}

describe('kill -9 of the proxy mid-finish: what it acknowledged is there after a restart', () => {
  const dirs: string[] = [];
  let pg: PostgresServer | undefined;
  after(async () => {
    await pg?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('embedded PGlite (HOPSCOPE_DATA_DIR)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rel-pglite-'));
    dirs.push(dir);
    const f = await runEngine('pglite', {
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_EXPORTER_URLS: 'none',
      HOPSCOPE_DATA_DIR: join(dir, 'data'),
    });
    figure('durability (pglite)', f);
  });

  it('PostgreSQL (HOPSCOPE_DATABASE_URL)', { skip: postgresSkipReason() }, async () => {
    pg = await startPostgres();
    const url = await pg.createDatabase('reliability');
    const f = await runEngine('postgres', {
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_EXPORTER_URLS: 'none',
      HOPSCOPE_DATABASE_URL: url,
    });
    figure('durability (postgres)', f);
  });
});
