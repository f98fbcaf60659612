/**
 * A stand-in Kubernetes API server for the exporter's informer: it answers the pod list and the watches with
 * responses recorded from real API servers (tests/fixtures/kubernetes/, each file names its source), and logs every
 * request so a test can check what the exporter asked for. The API server itself cannot run here; this replays what
 * one said.
 */
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Recorded {
  response_status_code: number;
  response_body: string;
}
export interface Recording {
  source: Record<string, unknown>;
  list: Recorded;
  watch: Recorded;
}

export function recording(name: string): Recording {
  return JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/kubernetes', name), 'utf8')) as Recording;
}

export interface Scenario {
  list: Recorded;
  /** The k-th watch request gets the k-th body; `end`: the server then closes it (as at its timeoutSeconds). Past the
   *  last one, a watch is held open with nothing to say. */
  watches: Array<{ body: string; end?: boolean }>;
}

export interface SeenRequest {
  path: string;
  query: URLSearchParams;
  authorization?: string;
}

export async function startKubeReplay(
  s: Scenario,
  tls?: { key: Buffer; cert: Buffer }
): Promise<{ url: string; requests: SeenRequest[]; close(): Promise<void> }> {
  const requests: SeenRequest[] = [];
  const open = new Set<ServerResponse>();
  let watches = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const u = new URL(req.url ?? '/', 'http://x');
    requests.push({ path: u.pathname, query: u.searchParams, authorization: req.headers.authorization });
    if (u.pathname !== '/api/v1/pods') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
    }
    if (u.searchParams.get('watch') !== 'true') {
      res.writeHead(s.list.response_status_code, { 'content-type': 'application/json' });
      return void res.end(s.list.response_body);
    }
    const w = s.watches[watches++];
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    open.add(res);
    res.on('close', () => open.delete(res));
    if (!w) return;
    res.write(w.body);
    if (w.end) res.end();
  };
  const server = tls ? createHttps({ key: tls.key, cert: tls.cert }, handler) : createHttp(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const r of open) r.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
