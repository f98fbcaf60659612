/**
 * Child process of durability.test.ts: opens the database given as JSON in argv[2] ({dataDir} or {databaseUrl}),
 * registers runs one after another through the runs service and prints `ack <runId>` only after each call returned
 * (the moment a proxy would answer 201). Runs until killed.
 */
import pino from 'pino';
import { openDatabase } from '../../../backend-proxy/src/db/database';
import { RunsService } from '../../../backend-proxy/src/runs/service';

const where = JSON.parse(process.argv[2]) as { dataDir?: string; databaseUrl?: string };
const prefix = process.argv[3] ?? 'durable';
const log = pino({ level: 'silent' });
const db = await openDatabase({ ...where, log });
const runs = new RunsService({ db, log });
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const runId = `${prefix}-${i}`;
  await runs.register({
    runId,
    scenario: 'durability',
    workerId: 'w1',
    startMs: Date.now(),
    target: 'http://127.0.0.1:9',
    options: { i },
  });
  process.stdout.write(`ack ${runId}\n`);
}
