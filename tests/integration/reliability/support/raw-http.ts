/**
 * A raw HTTP/1.1 client over a TCP socket: sends exactly the bytes it is given (malformed request lines, invalid
 * headers, lying Content-Length, broken chunking…), which node's own clients refuse to produce, and reads the answer
 * until the server closes (every request says `Connection: close`) or a deadline passes.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  /** HTTP status; 0 when the server closed without an answer (a parser error may do that, a crash too). */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  ms: number;
  /** The deadline passed before the server closed the connection. */
  timedOut: boolean;
  error?: string;
}

/**
 * `halfClose`: end our side after the bytes (for requests that promise more body than they send, so the server
 * sees the end instead of waiting for the rest). Off by default: node drops a half-closed request's answer.
 */
export function rawRequest(
  port: number,
  bytes: Buffer | string,
  timeoutMs = 15_000,
  halfClose = false
): Promise<RawAnswer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (extra: Partial<RawAnswer> = {}): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseAnswer(Buffer.concat(chunks)), ms: performance.now() - t0, timedOut: false, ...extra });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    socket.on('connect', () => {
      // The server may answer (413, 431, 400) and close before it has read everything: that is not our error.
      socket.write(bytes, () => {
        if (halfClose) socket.end();
      });
    });
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      // Stop reading once a complete answer arrived (a server may keep the socket open to drain an unread body).
      if (complete(Buffer.concat(chunks))) finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // EPIPE/ECONNRESET after an answer is the server refusing the rest of a body; before one, it is reported.
      finish(chunks.length ? {} : { error: err.code ?? err.message });
    });
    socket.on('close', () => finish());
  });
}

function complete(buf: Buffer): boolean {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = buf.subarray(0, end).toString('latin1');
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (len) return buf.length - end - 4 >= Number(len[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return buf.subarray(end).includes('\r\n0\r\n\r\n');
  return /^HTTP\/1\.[01] (1\d\d|204|304)/.test(head);
}

function parseAnswer(buf: Buffer): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: buf };
  const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = buf.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  return { status: m ? Number(m[1]) : 0, headers, body };
}

function dechunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < raw.length) {
    const eol = raw.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(i, eol).toString(), 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** A well-formed request's bytes: `Connection: close`, Host and Content-Length added unless given. */
export function requestBytes(
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: Buffer | string
): Buffer {
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const h: Record<string, string> = { host: '127.0.0.1', connection: 'close', ...headers };
  if (b && !Object.keys(h).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding'))
    h['content-length'] = String(b.length);
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
  return b ? Buffer.concat([Buffer.from(head, 'latin1'), b]) : Buffer.from(head, 'latin1');
}
