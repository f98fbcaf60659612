/**
 * A pod cannot blind the TLS probe with dummy files (issue 20, finding 7), on a real kernel with real bpftrace (root):
 * a registered Python process maps 16 dummy files named libssl.so.3 (before the real one in its maps) and the real
 * OpenSSL 3 library (Python's ssl module), plus one libssl.so.3 under a path with a space and a colon. The dummies
 * export no SSL symbol: they are refused as such and do not fill the per-kind cap; the odd path is refused for its
 * characters; the real library is attached and the process's handshakes are reported with library libssl.so.3.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { MAX_FILES_PER_KIND } from '../../../bpf-exporter/src/core/uprobe-files';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { child, has, probeSkipReason, sh, waitForEvents } from './helpers';
import { getJson, waitFor } from './http';

const skip =
  probeSkipReason() ??
  (has('python3') ? undefined : 'python3 missing (the workload)') ??
  (has('openssl') ? undefined : 'openssl missing (certificate)');

interface Probe {
  name: string;
  attached: boolean;
  uprobes?: { attached: Array<{ file: string; path: string }>; refused: Array<{ path: string; reason: string }> };
}

/** Maps the files named on the command line, loads OpenSSL 3, then on "go" does one TLS handshake with itself. */
const WORKLOAD = `
import mmap, socket, ssl, sys, threading
cert, key, files = sys.argv[1], sys.argv[2], sys.argv[3:]
held = []
for p in files:
    with open(p, 'rb') as f:
        held.append(mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ))
print('ready', flush=True)
sys.stdin.readline()
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)
sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); sctx.load_cert_chain(cert, key)
cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); cctx.check_hostname = False; cctx.verify_mode = ssl.CERT_NONE
def serve():
    c, _ = srv.accept(); s = sctx.wrap_socket(c, server_side=True); s.recv(1); s.close()
t = threading.Thread(target=serve); t.start()
c = cctx.wrap_socket(socket.create_connection(srv.getsockname())); c.send(b'x'); c.close(); t.join()
print('done', flush=True)
sys.stdin.readline()
`;

describe('bpf-exporter: dummy libssl.so.3 files do not blind the TLS probe', { skip }, () => {
  let dir = '';
  let exp: Exporter;
  const children: Array<{ kill(): boolean }> = [];
  const tlsProbe = async (): Promise<Probe> =>
    (await getJson<{ probes: Probe[] }>(`${exp.url}/health`)).body.probes.find((p) => p.name === 'tls_handshake')!;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `hopscope-bpf-hostile-${process.pid}-`));
    exp = await startExporter(
      loadConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_NODE: 'bx-node',
        HOPSCOPE_BPF_PROBES: 'tls_handshake',
        HOPSCOPE_BPF_SCAN_MS: '1000',
        HOPSCOPE_BPF_EVENT_BUDGET: '100000',
      }),
      pino({ level: 'warn' })
    );
    await exp.pipeline.settled(60_000);
  });
  after(async () => {
    for (const c of children) c.kill();
    await exp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(`${MAX_FILES_PER_KIND} dummies and an odd path are refused; the real libssl.so.3 is attached and its handshakes seen`, async () => {
    sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ]);
    const place = (sub: string): string => {
      mkdirSync(join(dir, sub), { recursive: true });
      // 2 MiB (sparse): too big for the small gaps between the libraries already mapped, so the kernel places the
      // dummies below them, and /proc/<pid>/maps lists them before the real libssl.so.3 (the order discovery reads).
      writeFileSync(join(dir, sub, 'libssl.so.3'), `not a library (${sub})\n`);
      truncateSync(join(dir, sub, 'libssl.so.3'), 2 * 1024 * 1024);
      return join(dir, sub, 'libssl.so.3');
    };
    const dummies = Array.from({ length: MAX_FILES_PER_KIND }, (_, i) => place(`dummy${i}`));
    const odd = place('odd dir:x');
    const py = child('python3', ['-c', WORKLOAD, join(dir, 'cert.pem'), join(dir, 'key.pem'), ...dummies, odd]);
    children.push(py);
    await py.waitLine(/^ready/);
    const order = readFileSync(`/proc/${py.pid}/maps`, 'utf8')
      .split('\n')
      .map((l) => l.split(/\s+/).slice(5).join(' '))
      .filter((p) => p.endsWith('/libssl.so.3'));
    const realAt = order.findIndex((p) => !p.startsWith(dir));
    assert.ok(
      order.slice(0, realAt).filter((p) => dummies.includes(p)).length >= MAX_FILES_PER_KIND,
      `the dummies come first in the maps (what would fill the cap without the symbol check): ${order.join(', ')}`
    );
    const r = await fetch(`${exp.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pid: py.pid, pod: 'rag-0', namespace: 'bx-ns' }),
    });
    assert.equal(r.status, 201);
    const tls = await waitFor(
      'tls_handshake attached to a libssl.so.3',
      async () => {
        const p = await tlsProbe();
        return p.attached && p.uprobes!.attached.some((f) => f.file === 'libssl') ? p : undefined;
      },
      60_000
    );
    const libssl = tls.uprobes!.attached.filter((f) => f.file === 'libssl');
    assert.equal(libssl.length, 1, JSON.stringify(libssl));
    assert.ok(!libssl[0].path.startsWith(dir), `the real library, not a dummy: ${libssl[0].path}`);
    const refused = tls.uprobes!.refused;
    for (const d of dummies)
      assert.ok(
        refused.some((x) => x.path === d && /exports none/.test(x.reason)),
        `${d} refused for its symbols: ${JSON.stringify(refused)}`
      );
    assert.ok(
      refused.some((x) => x.path === odd && /characters other than/.test(x.reason)),
      JSON.stringify(refused)
    );
    assert.ok(!refused.some((x) => /over the cap/.test(x.reason)), 'the dummies did not fill the cap');

    py.stdin!.write('go\n');
    await py.waitLine(/^done/);
    const events = await waitForEvents(exp.url, `pid=${py.pid}&type=tls_handshake`, () => true, 15_000, 2);
    assert.ok(
      events.every((e) => e.detail.library === 'libssl.so.3' && e.pod === 'rag-0'),
      JSON.stringify(events)
    );
    assert.deepEqual(events.map((e) => e.detail.role).sort(), ['client', 'server'], JSON.stringify(events));
  });
});
