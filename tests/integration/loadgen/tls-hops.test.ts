/**
 * Several TLS hops behind one caller: each call presents its own hop's server name (SNI), so a `tls_slow_handshake`
 * on the second TLS hop a caller talks to still slows its calls. (A TLS agent shared by the caller's hops kept the
 * first hop's name: agent → llm, then agent → tool said "llm-…", and a fault on tool never fired.)
 * It times agent runs, so it runs with no other test file beside it (hopscope-test: alone).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { chat } from './support';

describe('chain with several TLS hops', () => {
  let chain: RunningChain;
  const agentRun = (i: number) =>
    chat(chain.gatewayUrl, { messages: [{ role: 'user', content: `tls hops ${i}` }] }, { 'x-hopscope-route': 'agent' });
  const fault = async (target: string): Promise<string> => {
    const r = await fetch(`${chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target, kind: 'tls_slow_handshake', magnitude: 400 }),
    });
    assert.equal(r.status, 201);
    return ((await r.json()) as { id: string }).id;
  };

  before(async () => {
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      tracing: false,
      vectorCacheHitRate: 0,
      samplerAdaptive: false,
      hopTimeoutMs: 3000,
      tlsHops: ['llm-vllm', 'llm-tgi', 'tool'],
    });
  });
  after(async () => {
    await chain?.stop();
  });

  it('tls_slow_handshake on tool slows the agent runs though the agent first talks TLS to an LLM', async () => {
    const before: number[] = [];
    for (let i = 0; i < 3; i++) before.push((await agentRun(i)).ms);
    const id = await fault('tool');
    const during: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await agentRun(10 + i);
      assert.equal(r.status, 200, r.text);
      during.push(r.ms);
    }
    await fetch(`${chain.controlUrl}/faults/${id}`, { method: 'DELETE' });
    // Every agent run calls tool at least once over a fresh TLS connection: ≥ 400 ms more (a loaded machine only adds,
    // to both sides: the fastest run with the fault against the fastest without).
    const runs = `agent runs ${before.map(Math.round)} → ${during.map(Math.round)} ms`;
    assert.ok(Math.min(...during) >= 400, runs);
    assert.ok(Math.min(...during) - Math.min(...before) >= 300, runs);
  });
});
