/**
 * The load driver against a scripted SSE server with known timings (TTFT 150 ms, then a token every 40 ms):
 * TTFT, ITL and TPOT come out as scripted; baggage marks the traffic; refused connections and timeouts are counted
 * without stopping the run; thresholds set the exit code; bad profiles are refused before anything is sent.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../loadgen/src/cli';
import { runLoad, type LoadOptions, type Summary } from '../../../loadgen/src/load/driver';
import { freePort } from './support';

const TTFT = 150,
  GAP = 40,
  TOKENS = 6;
const root = join(import.meta.dirname, '..', '..', '..');

type Figs = { p50: number; mean: number };
/** The summary's figures, with absent ones (null) as NaN so comparisons fail rather than pass. */
function figures(s: Summary): Record<'ttftMs' | 'itlMs' | 'tpotMs' | 'latencyMs', Figs> {
  const f = (x: Summary['ttftMs']): Figs => ({ p50: x.p50 ?? NaN, mean: x.mean ?? NaN });
  return { ttftMs: f(s.ttftMs), itlMs: f(s.itlMs), tpotMs: f(s.tpotMs), latencyMs: f(s.latencyMs) };
}

function base(target: string, over: Partial<LoadOptions> = {}): LoadOptions {
  return {
    target,
    path: '/v1/chat/completions',
    method: 'POST',
    profile: { kind: 'constant', rps: 8, durationS: 1, arrivals: 'uniform' },
    stream: true,
    models: ['m1'],
    backend: 'none',
    agentRatio: 0,
    maxTokens: 16,
    seed: 1,
    runId: 'run-test',
    timeoutMs: 5000,
    connections: 32,
    maxInFlight: 1000,
    slo: {},
    traceparent: false,
    ...over,
  };
}

describe('load driver on a scripted SSE server', () => {
  let server: http.Server;
  let url: string;
  const seen: Array<{ baggage?: string; body: any }> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        const body = raw ? JSON.parse(raw) : {};
        seen.push({ baggage: req.headers.baggage as string | undefined, body });
        if (req.url === '/hang') return; // never answers
        if (!body.stream) {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ choices: [{ message: { content: 'x' } }], usage: { completion_tokens: 3 } }));
          }, 50);
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // Role chunk at once (no content: must not count as the first token), then tokens on a fixed schedule.
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { role: 'assistant', content: '' } }] })}\n\n`);
        let i = 0;
        const tick = () => {
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `t${i} ` } }] })}\n\n`);
          if (++i < TOKENS) setTimeout(tick, GAP);
          else {
            res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: TOKENS } })}\n\n`);
            res.end('data: [DONE]\n\n');
          }
        };
        setTimeout(tick, TTFT);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      })
  );

  it('measures TTFT, ITL and TPOT as scripted, marks traffic with baggage', async () => {
    seen.length = 0;
    const s = await runLoad(base(url));
    const { ttftMs, itlMs, tpotMs, latencyMs } = figures(s);
    assert.equal(s.sent, 8);
    assert.equal(s.succeeded, 8);
    assert.equal(s.errors.total, 0);
    // Lower bounds are exact (the server cannot be early); upper bounds leave room for a loaded machine.
    assert.ok(ttftMs.p50 >= TTFT - 2 && ttftMs.p50 < TTFT + 150, `TTFT p50 ${ttftMs.p50}`);
    assert.ok(itlMs.p50 >= GAP - 5 && itlMs.p50 < GAP + 60, `ITL p50 ${itlMs.p50}`);
    assert.equal(s.itlMs.count, 8 * (TOKENS - 1), 'one ITL per gap between content chunks');
    assert.ok(tpotMs.p50 >= GAP - 5 && tpotMs.p50 < GAP + 60, `TPOT p50 ${tpotMs.p50}`);
    assert.ok(latencyMs.p50 >= TTFT + (TOKENS - 1) * GAP - 5, `latency p50 ${latencyMs.p50}`);
    // TPOT = (latency − TTFT)/(tokens − 1): consistent with the other figures.
    assert.ok(Math.abs(tpotMs.mean - (latencyMs.mean - ttftMs.mean) / (TOKENS - 1)) < 5);
    assert.equal(s.outputTokens, 8 * TOKENS);
    assert.ok(seen.every((x) => x.baggage === 'hopscope.run_id=run-test,hopscope.load_test=true'));
    assert.ok(
      seen.every(
        (x) => Array.isArray(x.body.messages) && x.body.messages.at(-1).role === 'user' && x.body.stream === true
      )
    );
  });

  it('non-streaming: latency and usage tokens, no TTFT', async () => {
    const s = await runLoad(base(url, { stream: false }));
    assert.equal(s.succeeded, 8);
    assert.equal(s.ttftMs.count, 0);
    assert.equal(s.outputTokens, 24);
    assert.ok(figures(s).latencyMs.p50 >= 48);
  });

  it('a target that refuses connections: counted as errors, the run continues, the summary says so', async () => {
    const port = await freePort();
    const s = await runLoad(
      base(`http://127.0.0.1:${port}`, { profile: { kind: 'constant', rps: 20, durationS: 0.5, arrivals: 'uniform' } })
    );
    assert.equal(s.sent, 10);
    assert.equal(s.errors.byKind.ECONNREFUSED, 10);
    assert.equal(s.succeeded, 0);
    assert.ok(
      s.notes.some((n) => /refused 10 connection attempt/.test(n)),
      s.notes.join('; ')
    );
  });

  it('timeouts are counted as timeouts', async () => {
    const s = await runLoad(
      base(url, {
        path: '/hang',
        timeoutMs: 200,
        profile: { kind: 'constant', rps: 10, durationS: 0.3, arrivals: 'uniform' },
      })
    );
    assert.equal(s.timeouts, s.sent);
    assert.equal(s.errors.byKind.timeout, s.sent);
  });

  it('thresholds decide the exit code; the JSON summary is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-cli-'));
    try {
      let out = '';
      const pass = await main(
        [
          '--target',
          url,
          '--backend',
          'none',
          '--rps',
          '5',
          '--duration',
          '0.6s',
          '--quiet',
          '--report',
          'none',
          '--metrics',
          'none',
          '--json',
          join(dir, 's.json'),
          '--threshold',
          'ttft_p99_ms<5000',
          '--threshold',
          'error_rate<0.01',
          '--slo',
          'ttft_ms<=5000',
        ],
        (x) => {
          out += x;
        },
        () => {}
      );
      assert.equal(pass, 0, out);
      const json = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8'));
      assert.equal(json.thresholds.length, 2);
      assert.ok(json.thresholds.every((t: { pass: boolean }) => t.pass));
      assert.equal(json.goodput.ratio, 1);
      assert.match(out, /TTFT ms p50 \/ p99/);
      const fail = await main(
        [
          '--target',
          url,
          '--backend',
          'none',
          '--rps',
          '5',
          '--duration',
          '0.6s',
          '--quiet',
          '--report',
          'none',
          '--metrics',
          'none',
          '--json',
          join(dir, 's2.json'),
          '--threshold',
          `ttft_p50_ms<${TTFT - 10}`,
        ],
        () => {},
        () => {}
      );
      assert.equal(fail, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the hopscope-load bin: --help, and a bad profile exits 2 before sending anything', () => {
    const help = spawnSync(process.execPath, [join(root, 'loadgen', 'bin', 'hopscope-load.mjs'), '--help'], {
      encoding: 'utf8',
    });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: hopscope-load/);
    const before = seen.length;
    const bad = spawnSync(
      process.execPath,
      [
        join(root, 'loadgen', 'bin', 'hopscope-load.mjs'),
        '--target',
        url,
        '--profile',
        'ramp',
        '--rps',
        '10',
        '--start-rps=-1',
      ],
      { encoding: 'utf8' }
    );
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /start-rps must be > 0/);
    assert.equal(seen.length, before, 'nothing was sent');
  });
});
