/**
 * What a proxy acknowledged survives its SIGKILL mid-write: a child process registers runs as fast as it can and
 * prints each acknowledged id; the test kills it with SIGKILL and reopens the database (for PGlite: the same data
 * dir, whose lock and WAL the dead process left behind). For PostgreSQL, also a SIGKILL of the server itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { getRun } from '../../../backend-proxy/src/db/runs-repo';
import { RunsService } from '../../../backend-proxy/src/runs/service';
import { forEachEngine, quietLog, type Fresh } from './engines';

/** Starts the writer, waits for `minAcks` acknowledgements (and a little more writing), SIGKILLs it mid-write. */
function writeThenKill(where: Fresh['where'], prefix: string, minAcks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'durable-writer.ts'), JSON.stringify(where), prefix],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    );
    const acked: string[] = [];
    let buf = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith('ack ')) acked.push(line.slice(4));
      }
      if (!killed && acked.length >= minAcks) {
        killed = true;
        child.kill('SIGKILL'); // between two writes or in the middle of one: either way nothing acknowledged may go
      }
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer made ${acked.length} acks in 120 s: ${stderr}`));
    }, 120_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited by itself (${code}): ${stderr}`));
      else resolve(acked);
    });
  });
}

forEachEngine((e) => {
  test('a run acknowledged before the writing proxy is SIGKILLed is there after reopening', async () => {
    const { db, where } = await e.fresh();
    await db.close(); // the child is the proxy now (for PGlite: the only process on the dir)
    const acked = await writeThenKill(where, 'k', 150);
    assert.ok(acked.length >= 150);
    const reopened = await e.open(where);
    const missing: string[] = [];
    for (const id of acked) if (!(await getRun(reopened, id))) missing.push(id);
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged runs lost`);
    // It is a usable database afterwards: the service works on it.
    const runs = new RunsService({ db: reopened, log: quietLog });
    assert.equal((await runs.get(acked.at(-1)!)).status, 'running');
    assert.equal((await runs.list({ limit: 1000 })).total >= acked.length, true);
  });

  if (e.kind === 'postgres') {
    test('PostgreSQL itself SIGKILLed after acknowledging: crash recovery keeps every acknowledged run', async () => {
      const { db, where } = await e.fresh();
      const runs = new RunsService({ db, log: quietLog });
      const acked: string[] = [];
      for (let i = 0; i < 100; i++) {
        await runs.register({
          runId: `pk-${i}`,
          scenario: 'durability',
          workerId: 'w1',
          startMs: Date.now(),
          target: 'http://127.0.0.1:9',
          options: {},
        });
        acked.push(`pk-${i}`);
      }
      e.server!.kill9();
      await e.server!.start();
      const reopened = await e.open(where);
      const found = (
        await reopened.query<{ run_id: string }>(`SELECT run_id FROM runs WHERE run_id LIKE 'pk-%'`)
      ).rows.map((r) => r.run_id);
      assert.deepEqual(found.sort(), [...acked].sort());
      // The first pool's connections died with the server; it recovers by itself.
      assert.equal((await runs.get('pk-0')).runId, 'pk-0');
    });
  }
});
