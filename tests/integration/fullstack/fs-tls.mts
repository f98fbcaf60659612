import https from 'node:https';
import tls from 'node:tls';
import { request, Agent } from 'undici';
import { chainCert, tlsServerName } from '/work/main/loadgen/src/chain/tls';
const { key, cert } = chainCert();
const secure = tls.createSecureContext({ key, cert });
const srv = https.createServer({ key, cert, SNICallback: (sn, cb) => { console.log('sni', sn, Date.now()); setTimeout(() => cb(null, secure), 500); } }, (q, r) => r.end('ok'));
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
const port = (srv.address() as any).port;
console.log('pid', process.pid);
await new Promise((r) => setTimeout(r, 8000));
const agent = new Agent({ connect: { ca: cert, servername: tlsServerName('tool'), rejectUnauthorized: true } });
for (let i = 0; i < 3; i++) { const t = Date.now(); const res = await request(`https://127.0.0.1:${port}/`, { dispatcher: agent, reset: true }); await res.body.text(); console.log('req', Date.now() - t); }
srv.close(); srv.closeAllConnections(); await agent.close();
