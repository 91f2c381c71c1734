/**
 * @module A throw-away self-signed TLS certificate for lab servers, made with the `openssl`
 * CLI (EC P-256: fast handshakes for sweeps of hundreds of BMCs) in a temporary directory.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PEM key and certificate. */
export interface LabCertificate {
  readonly key: string;
  readonly cert: string;
}

let cached: Promise<LabCertificate> | undefined;

/** Creates a self-signed certificate for `localhost` and 127.0.0.1/::1 (one per process, cached). */
export function labCertificate(): Promise<LabCertificate> {
  cached ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rackside-lab-tls-'));
    try {
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      await run('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
        '-days', '2', '-subj', '/CN=rackside virtual BMC', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      ]);
      return { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  cached.catch(() => { cached = undefined; });
  return cached;
}
