/**
 * @module rackside's own certificate authority for boot HTTPS (`http.tls: auto`,
 * docs/https-boot.md), kept in `<stateDir>/boot-ca/`: `ca.key` (0600) and `ca.crt` are made once
 * and reused across restarts; `server.key` (0600) and `server.crt` are issued from it for the
 * names the boot HTTPS listener is reached at, and issued again when those names change or the
 * certificate nears its end. Made with the `openssl` CLI (OpenSSL 3: `req -x509 -CA`).
 *
 * RSA 2048 and SHA-256 throughout: EDK2's TLS (OVMF 2022.11, CryptoPkg's OpenSSL) is built
 * without elliptic curves, so an ECDSA certificate fails its handshake. An IP address is put in
 * the subjectAltName both as `IP:` and as `DNS:`: firmware that matches the URL's host as a name
 * (older EDK2 TlsLib) and firmware that matches it as an address both accept it.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { access, chmod, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Days a CA certificate is valid (it is enrolled in firmware, so long-lived). */
const CA_DAYS = 3650;
/** Days a server certificate is valid; it is issued again with 30 days left. */
const SERVER_DAYS = 397;
const RENEW_BEFORE_MS = 30 * 86_400_000;

/** The CA and server certificate files of {@link ensureBootCertificate}. */
export interface BootCertificate {
  dir: string;
  caCertPath: string;
  caKeyPath: string;
  certPath: string;
  keyPath: string;
  /** The CA certificate, PEM (what firmware enrols). */
  caPem: string;
  /** The server certificate followed by the CA's, PEM (what the listener presents). */
  chainPem: string;
  keyPem: string;
  /** True when this call made a new CA (a first start, or a state directory without one). */
  caCreated: boolean;
  /** True when this call issued a new server certificate. */
  issued: boolean;
}

/** The directory of the boot CA under the state directory. */
export function bootCaDir(stateDir: string): string {
  return join(stateDir, 'boot-ca');
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

/** Writes the CA key and certificate under temporary names, then renames the certificate last: a directory with `ca.crt` has both. */
async function createCa(dir: string, commonName: string): Promise<void> {
  const key = join(dir, 'ca.key.new');
  const cert = join(dir, 'ca.crt.new');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-sha256', '-nodes', '-keyout', key, '-out', cert, '-days', String(CA_DAYS),
    '-subj', `/CN=${commonName}`, '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await chmod(key, 0o600);
  await rename(key, join(dir, 'ca.key'));
  await rename(cert, join(dir, 'ca.crt'));
}

/** The subjectAltName value for `names` (addresses as IP and DNS entries, see the module comment). */
export function subjectAltName(names: readonly string[]): string {
  const entries: string[] = [];
  for (const name of names) {
    if (isIP(name) !== 0) entries.push(`IP:${name}`);
    entries.push(`DNS:${name}`);
  }
  return [...new Set(entries)].join(',');
}

async function issueServer(dir: string, names: readonly string[]): Promise<void> {
  const key = join(dir, 'server.key.new');
  const cert = join(dir, 'server.crt.new');
  await run('openssl', ['req', '-x509', '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'), '-newkey', 'rsa:2048', '-sha256', '-nodes',
    '-keyout', key, '-out', cert, '-days', String(SERVER_DAYS), '-subj', `/CN=${names[0] ?? 'rackside'}`,
    '-addext', `subjectAltName=${subjectAltName(names)}`, '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment', '-addext', 'extendedKeyUsage=serverAuth']);
  await chmod(key, 0o600);
  await rename(key, join(dir, 'server.key'));
  await rename(cert, join(dir, 'server.crt'));
}

/** True when the server certificate at `path` exists, is signed by `caPem`, names exactly `names` and is not near its end. */
async function serverUsable(path: string, caPem: string, names: readonly string[], nowMs: number): Promise<boolean> {
  const pem = await readFile(path, 'utf8').catch(() => undefined);
  if (pem === undefined) return false;
  const cert = new X509Certificate(pem);
  if (!cert.verify(new X509Certificate(caPem).publicKey)) return false;
  if (Date.parse(cert.validTo) - nowMs < RENEW_BEFORE_MS) return false;
  const want = subjectAltName(names).split(',').map((e) => e.replace(/^IP:/, 'IP Address:')).sort();
  const have = (cert.subjectAltName ?? '').split(', ').sort();
  return want.join(',') === have.join(',');
}

/**
 * Makes (or reuses) the boot CA under `stateDir` and a server certificate from it for `names`
 * (the provisioning addresses and host name; the first is the subject's CN). Rejects when
 * `openssl` fails or `names` is empty.
 */
export async function ensureBootCertificate(stateDir: string, names: readonly string[], options: { commonName?: string; nowMs?: number } = {}): Promise<BootCertificate> {
  if (names.length === 0) throw new TypeError('a boot server certificate needs at least one name');
  const dir = bootCaDir(stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const caCertPath = join(dir, 'ca.crt');
  const caCreated = !(await exists(caCertPath));
  if (caCreated) {
    await rm(join(dir, 'server.crt'), { force: true });
    await createCa(dir, options.commonName ?? 'rackside boot CA');
  }
  const caPem = await readFile(caCertPath, 'utf8');
  const certPath = join(dir, 'server.crt');
  const issued = !(await serverUsable(certPath, caPem, names, options.nowMs ?? Date.now()));
  if (issued) await issueServer(dir, names);
  const serverPem = await readFile(certPath, 'utf8');
  const keyPath = join(dir, 'server.key');
  return {
    dir, caCertPath, caKeyPath: join(dir, 'ca.key'), certPath, keyPath, caPem,
    chainPem: `${serverPem.trimEnd()}\n${caPem.trimEnd()}\n`, keyPem: await readFile(keyPath, 'utf8'), caCreated, issued,
  };
}

/** The boot CA certificate (PEM) under `stateDir`, or undefined when none was made yet. */
export async function readBootCa(stateDir: string): Promise<string | undefined> {
  return readFile(join(bootCaDir(stateDir), 'ca.crt'), 'utf8').catch(() => undefined);
}
