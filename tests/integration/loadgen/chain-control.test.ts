/**
 * The control API's guards: a cap on active faults (429 beyond), a bearer token (required to bind beyond loopback;
 * when set, every route but /healthz and /targets needs it), and no nftables table outliving the chain that made it —
 * removed on an uncaught error, on SIGTERM without a handler, and, after a SIGKILL, by the next chain at start.
 */
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_ACTIVE_FAULTS } from '../../../loadgen/src/chain/faults/registry';
import { tcpRetransmitAvailable } from '../../../loadgen/src/chain/faults/tcp-retransmit';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { waitFor } from './support';

const quiet = {
  gatewayPort: 0,
  controlPort: 0,
  timeScale: 0.05,
  logLevel: 'silent' as const,
  tracing: false,
  cudaStandIn: false,
};
const json = { 'content-type': 'application/json' };

describe('fault cap', () => {
  let chain: RunningChain;
  before(async () => {
    chain = await startChain(quiet);
  });
  after(async () => {
    await chain?.stop();
  });

  it(`at most ${MAX_ACTIVE_FAULTS} active faults: 429 with a clear message beyond, room again once one ends`, async () => {
    const post = () =>
      fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 1 }),
      });
    const ids: string[] = [];
    for (let i = 0; i < MAX_ACTIVE_FAULTS; i++) {
      const r = await post();
      assert.equal(r.status, 201);
      ids.push(((await r.json()) as { id: string }).id);
    }
    const over = await post();
    assert.equal(over.status, 429);
    const body = (await over.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'too_many_faults');
    assert.match(body.error.message, new RegExp(`at most ${MAX_ACTIVE_FAULTS} faults`));
    assert.match(body.error.message, /DELETE \/faults\/:id/);
    assert.equal((await fetch(`${chain.controlUrl}/faults/${ids[0]}`, { method: 'DELETE' })).status, 200);
    assert.equal((await post()).status, 201, 'an ended fault frees its place');
    // Concurrent requests cannot overshoot the cap either.
    const burst = await Promise.all(Array.from({ length: 5 }, post));
    assert.deepEqual(
      burst.map((r) => r.status),
      [429, 429, 429, 429, 429]
    );
    chain.faults.endAll();
  });
});

describe('control token', () => {
  it('refuses to start beyond loopback without a token, naming HOPSCOPE_CHAIN_TOKEN', async () => {
    await assert.rejects(
      startChain({ ...quiet, host: '0.0.0.0' }),
      /refusing to bind the control API to 0\.0\.0\.0 without a token.*HOPSCOPE_CHAIN_TOKEN/s
    );
  });

  it('with a token: every route but /healthz and /targets needs Authorization: Bearer <token>', async () => {
    const token = 'test-token-0123456789';
    const chain = await startChain({ ...quiet, controlToken: token });
    try {
      const call = (path: string, init: RequestInit = {}) => fetch(`${chain.controlUrl}${path}`, init);
      const fault = { method: 'POST', body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 5 }) };
      const none = await call('/faults', { ...fault, headers: json });
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="hopscope-chain"');
      assert.match(((await none.json()) as { error: { message: string } }).error.message, /Authorization: Bearer/);
      assert.equal(
        (await call('/faults', { ...fault, headers: { ...json, authorization: 'Bearer wrong-token' } })).status,
        401
      );
      assert.equal(
        (await call('/faults', { ...fault, headers: { ...json, authorization: `Basic ${token}` } })).status,
        401
      );
      for (const path of ['/faults', '/topology', '/config', '/faults/kinds'])
        assert.equal((await call(path)).status, 401, `${path} needs the token`);
      const ok = await call('/faults', { ...fault, headers: { ...json, authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 201);
      assert.equal(
        (await call('/faults', { headers: { authorization: `bearer ${token}` } })).status,
        200,
        'the scheme is case-insensitive'
      );
      assert.equal((await call('/healthz')).status, 200, '/healthz is open');
      assert.equal((await call('/targets')).status, 200, '/targets (Prometheus service discovery) is open');
      // The hops themselves are not behind the control token.
      assert.equal((await fetch(`${chain.gatewayUrl}/healthz`)).status, 200);
    } finally {
      await chain.stop();
    }
  });
});

const nftSkip = async (): Promise<string | false> => {
  const ok = await tcpRetransmitAvailable();
  return ok === true ? false : ok;
};

describe('nftables tables never outlive the chain', async () => {
  const skip = await nftSkip();
  const tables = (): string => execFileSync('nft', ['list', 'tables']).toString();
  /** A chain in a child process that makes a tcp_retransmit table, prints it, then does what `then` says (`go()`: a line on its stdin). */
  const childWithTable = async (then: string) => {
    const code = `
      import { startChain } from ${JSON.stringify(join(import.meta.dirname, '../../../loadgen/src/chain/start.ts'))};
      const chain = await startChain(${JSON.stringify(quiet)});
      const r = await fetch(chain.controlUrl + '/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'rag', kind: 'tcp_retransmit', magnitude: 5 }) });
      const f = await r.json();
      console.log('table ' + /nft table (\\S+)/.exec(f.note)[1]);
      ${then}`;
    const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '',
      err = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.stderr.on('data', (d) => {
      err += d;
    });
    c.stdin.on('error', () => {
      /* it died first: what the test checks next says so */
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      c.once('exit', (code, signal) => r({ code, signal }))
    );
    const table = await waitFor(
      "the child's table",
      async () => /table (lg-hopscope-\d+-\d+)/.exec(out)?.[1],
      30_000
    ).catch((e) => {
      c.kill('SIGKILL');
      throw new Error(`${(e as Error).message}: ${err.slice(-500)}`);
    });
    return {
      child: c,
      table,
      exited,
      stderr: () => err,
      go: () => {
        c.stdin.end('go\n');
      },
    };
  };

  it('an uncaught error: the table goes with the process', { skip }, async () => {
    // It throws only once told to (not on a timer), so the table is looked at while the chain surely runs.
    const { table, exited, go } = await childWithTable(
      `process.stdin.once('data', () => setTimeout(() => { throw new Error('boom'); }, 0));`
    );
    assert.ok(tables().includes(table), 'the table exists while the chain runs');
    go();
    const end = await exited;
    assert.equal(end.code, 1, 'it died of the error');
    assert.ok(!tables().includes(table), `${table} removed on exit`);
  });

  it(
    'SIGTERM with no handler of its own: the table is removed and the process still dies of the signal',
    { skip },
    async () => {
      const { child, table, exited } = await childWithTable(`setInterval(() => {}, 1000);`);
      assert.ok(tables().includes(table));
      child.kill('SIGTERM');
      const end = await exited;
      assert.equal(end.signal, 'SIGTERM');
      assert.ok(!tables().includes(table), `${table} removed on SIGTERM`);
    }
  );

  it(
    "SIGKILL leaves the table; the next chain removes it at start (its pid is gone), and leaves live chains' tables",
    { skip },
    async () => {
      const { child, table, exited } = await childWithTable(`setInterval(() => {}, 1000);`);
      const live = await childWithTable(`setInterval(() => {}, 1000);`);
      try {
        child.kill('SIGKILL');
        await exited;
        assert.ok(tables().includes(table), 'nothing runs on SIGKILL: the table is still there');
        const chain = await startChain(quiet);
        await chain.stop();
        assert.ok(!tables().includes(table), `${table} removed by the next chain's control API`);
        assert.ok(tables().includes(live.table), "a running chain's table is left alone");
      } finally {
        live.child.kill('SIGTERM');
        await live.exited;
      }
      assert.ok(!tables().includes(live.table));
    }
  );
});
