/**
 * A hop's request body, read with a size limit: a body past the limit is a 413 (HopError `payload_too_large`) as soon
 * as its Content-Length says so or, for a chunked body, once the bytes read pass it; nothing past the limit is kept.
 * The largest request the chain itself sends (a chat with its RAG context and agent history) is a few tens of KiB.
 */
import type { IncomingMessage } from 'node:http';
import { HopError } from './errors';

/** 1 MiB: far above any request of the chain, far below what would hurt a hop's memory. */
export const HOP_BODY_LIMIT_BYTES = 1024 * 1024;

function tooLarge(limit: number): HopError {
  return new HopError(413, 'payload_too_large', `request body is larger than ${limit} bytes`);
}

/** The parsed JSON body (undefined when empty); 413 past `limit` bytes, 400 for invalid JSON. */
export async function readJsonBody(req: IncomingMessage, limit = HOP_BODY_LIMIT_BYTES): Promise<any> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  // Events, not for-await: leaving a for-await early destroys the request, and with it the socket the 413 goes out on.
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const got: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size <= limit) return void got.push(c);
      // Keep nothing more: the rest is discarded, and the 413 closes the connection (hop-server's error path).
      req.off('data', onData);
      got.length = 0;
      req.resume();
      reject(tooLarge(limit));
    };
    req.on('data', onData);
    req.once('end', () => resolve(got));
    req.once('error', reject);
  });
  if (!chunks.length) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new HopError(400, 'bad_json', 'request body is not valid JSON');
  }
}
