/**
 * @module A throw-away self-signed TLS certificate for lab servers, made with the `openssl`
 * CLI (EC P-256: fast handshakes for sweeps of hundreds of BMCs) in a temporary directory, and a
 * throw-away CA issuing certificates (a BMC whose certificate a client trusts, then replaces; a
 * controller's rack client certificates).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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

/** What {@link LabCertificateAuthority.issue} makes besides the default server certificate. */
export interface LabIssueOptions {
  /** `client`: a TLS client certificate (extendedKeyUsage clientAuth, no subjectAltName); default `server`. */
  usage?: 'server' | 'client';
  /** The whole subject in openssl `-subj` syntax (`/O=x` for one without a CN); default `/CN=<commonName>`. */
  subject?: string;
}

/** A throw-away certificate authority that issues lab server (and client) certificates. */
export interface LabCertificateAuthority {
  /** PEM of the CA's own certificate (what a client trusts). */
  readonly cert: string;
  /** Issues a certificate signed by this CA: for `localhost` and 127.0.0.1/::1, or a client certificate (`options`). */
  issue(commonName?: string, options?: LabIssueOptions): Promise<LabCertificate>;
}

const SERVER_EXTENSIONS = 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n';
const CLIENT_EXTENSIONS = 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n';

/** Creates a CA (EC P-256, `openssl` CLI) whose certificates a client trusting `cert` accepts. */
export async function labCertificateAuthority(name = 'rackside lab CA'): Promise<LabCertificateAuthority> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-lab-ca-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await run('openssl', ['req', '-x509', ...ec, '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'), '-days', '2', '-subj', `/CN=${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    const caKey = await readFile(join(dir, 'ca.key'), 'utf8');
    const caCert = await readFile(join(dir, 'ca.pem'), 'utf8');
    return {
      cert: caCert,
      issue: async (commonName = 'rackside virtual BMC', options: LabIssueOptions = {}) => {
        const work = await mkdtemp(join(tmpdir(), 'rackside-lab-leaf-'));
        try {
          const file = (f: string): string => join(work, f);
          await Promise.all([writeFile(file('ca.key'), caKey, { mode: 0o600 }), writeFile(file('ca.pem'), caCert)]);
          await run('openssl', ['req', ...ec, '-keyout', file('key.pem'), '-out', file('req.csr'), '-subj', options.subject ?? `/CN=${commonName}`]);
          await writeFile(file('ext.cnf'), options.usage === 'client' ? CLIENT_EXTENSIONS : SERVER_EXTENSIONS);
          await run('openssl', ['x509', '-req', '-in', file('req.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
            '-days', '2', '-extfile', file('ext.cnf'), '-out', file('cert.pem')]);
          return { key: await readFile(file('key.pem'), 'utf8'), cert: await readFile(file('cert.pem'), 'utf8') };
        } finally {
          await rm(work, { recursive: true, force: true });
        }
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
