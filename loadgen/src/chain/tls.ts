/**
 * A self-signed certificate for the chain's TLS links, made at start with openssl (ECDSA P-256, SAN *.hopscope.local).
 * Clients send SNI `<hop>.hopscope.local` and trust exactly this certificate, so the handshake is a real, verified one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChainCert {
  key: Buffer;
  cert: Buffer;
}

let cached: ChainCert | undefined;

export function chainCert(): ChainCert {
  if (cached) return cached;
  // Split mode: the control process hands its certificate to every replica process, so they all trust one another.
  if (process.env.HOPSCOPE_CHAIN_TLS_KEY && process.env.HOPSCOPE_CHAIN_TLS_CERT) {
    cached = {
      key: Buffer.from(process.env.HOPSCOPE_CHAIN_TLS_KEY),
      cert: Buffer.from(process.env.HOPSCOPE_CHAIN_TLS_CERT),
    };
    return cached;
  }
  const dir = mkdtempSync(join(tmpdir(), 'lg-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '7',
        '-subj',
        '/CN=hopscope.local',
        '-addext',
        'subjectAltName=DNS:*.hopscope.local,DNS:hopscope.local',
      ],
      { stdio: 'ignore' }
    );
    cached = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
    return cached;
  } catch (err) {
    throw new Error(`cannot create the chain's TLS certificate with openssl: ${(err as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const tlsServerName = (hop: string): string => `${hop}.hopscope.local`;
