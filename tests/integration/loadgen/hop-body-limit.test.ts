/**
 * The chain's hops read request bodies with a limit (loadgen/src/chain/read-body.ts): a body past
 * HOP_BODY_LIMIT_BYTES is a 413 `payload_too_large`, whether its Content-Length says so up front or it comes chunked,
 * and the gateway keeps answering normal requests afterwards.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { HOP_BODY_LIMIT_BYTES } from '../../../loadgen/src/chain/read-body';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';

const chat = (content: string): string =>
  JSON.stringify({ model: 'hopscope-llama-8b-v1', max_tokens: 4, messages: [{ role: 'user', content }] });

/** POST the body in 64 KiB chunks, with or without Content-Length (chunked); the status and error code answered. */
function post(url: string, body: string, chunked: boolean): Promise<{ status: number; code?: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: {
          'content-type': 'application/json',
          ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = JSON.parse(text).error?.code;
          } catch {
            /* a chat answer */
          }
          resolve({ status: res.statusCode ?? 0, code });
        });
      }
    );
    // The server may close the connection while the rest of a too-large body is still being written.
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(err)));
    const buf = Buffer.from(body);
    for (let i = 0; i < buf.length; i += 65536) req.write(buf.subarray(i, i + 65536));
    req.end();
  });
}

describe('hop request body limit', () => {
  let chain: RunningChain;
  before(async () => {
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.01,
      logLevel: 'silent',
      tracing: false,
      cudaStandIn: false,
    });
  });
  after(async () => {
    await chain?.stop();
  });

  it('a body past the limit is a 413 (Content-Length or chunked); a normal request still answers', async () => {
    const huge = chat('x'.repeat(HOP_BODY_LIMIT_BYTES + 1024));
    for (const chunked of [false, true]) {
      const r = await post(chain.gatewayUrl, huge, chunked);
      assert.deepEqual(r, { status: 413, code: 'payload_too_large' }, `chunked=${chunked}`);
    }
    const ok = await post(chain.gatewayUrl, chat('How does the KV cache affect latency?'), false);
    assert.equal(ok.status, 200);
  });
});
