/**
 * @module Certificates for the controller's client-certificate tests, made with the `openssl`
 * CLI in a temporary folder (removed after the test): a rack CA, a server certificate for
 * 127.0.0.1 (IP SAN), client certificates whose subject CN is a rack name, and a second,
 * untrusted CA with its own "rack1" certificate. Also an HTTPS push that presents a client
 * certificate (fetch cannot). Without openssl the test skips, or fails under
 * RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import { REQUIRE_INTEGRATION } from '../../helpers/netns.js';
import type { PushAnswer } from './fleet-fixtures.js';

/** PEM file paths of one key pair. */
export interface CertFiles {
  cert: string;
  key: string;
}

/** The test PKI. */
export interface RackPki {
  dir: string;
  /** The CA that issues the server and rack certificates (the controller's `tls.clientCA`). */
  ca: string;
  server: CertFiles;
  /** A client certificate with subject CN = NAME, issued by {@link ca}. */
  rack(name: string): Promise<CertFiles>;
  /** A client certificate with subject CN = NAME, issued by a CA the controller does not trust. */
  rogue(name: string): Promise<CertFiles>;
  /** A client certificate issued by {@link ca} with the subject `subject` (openssl `-subj` syntax, e.g. `/O=x` for no CN). */
  withSubject(file: string, subject: string): Promise<CertFiles>;
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
}

function makeCa(dir: string, name: string, cn: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, `${name}.key`),
    '-out', join(dir, `${name}.pem`), '-days', '2', '-subj', `/CN=${cn}`]);
}

/** A P-256 key and a certificate for `subject` (`-subj` syntax) signed by CA `ca`, with `extensions`. */
async function issue(dir: string, ca: string, name: string, subject: string, extensions: string): Promise<CertFiles> {
  const file = (suffix: string) => join(dir, `${name}${suffix}`);
  await writeFile(file('.ext'), extensions);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', file('.key'), '-out', file('.csr'), '-subj', subject]);
  openssl(['x509', '-req', '-in', file('.csr'), '-CA', join(dir, `${ca}.pem`), '-CAkey', join(dir, `${ca}.key`), '-CAcreateserial', '-days', '2',
    '-out', file('.pem'), '-extfile', file('.ext')]);
  return { cert: file('.pem'), key: file('.key') };
}

const CLIENT_EXT = 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n';

/** The PKI for test `t` (removed after it); undefined (and `t` skipped) without openssl, unless required. */
export async function rackPkiFor(t: TestContext): Promise<RackPki | undefined> {
  if (!hasOpenssl()) {
    if (REQUIRE_INTEGRATION) throw new Error('openssl is required (RACKSIDE_REQUIRE_INTEGRATION=1) but was not found');
    t.skip('openssl CLI not found');
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-rack-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  makeCa(dir, 'ca', 'rackside rack CA');
  makeCa(dir, 'rogue-ca', 'some other CA');
  const server = await issue(dir, 'ca', 'server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n');
  return {
    dir, ca: join(dir, 'ca.pem'), server,
    rack: (name) => issue(dir, 'ca', `rack-${name}`, `/CN=${name}`, CLIENT_EXT),
    rogue: (name) => issue(dir, 'rogue-ca', `rogue-${name}`, `/CN=${name}`, CLIENT_EXT),
    withSubject: (file, subject) => issue(dir, 'ca', file, subject, CLIENT_EXT),
  };
}

/** What an HTTPS request presents. */
export interface TlsClient {
  /** The CA that verifies the server. */
  ca: string;
  client?: CertFiles;
  token?: string;
}

/** An HTTPS request to `url` with `tls`; resolves status and body text (never throws on an HTTP status). */
export async function httpsRequest(url: string, tls: TlsClient, method = 'GET', body?: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const options = {
    method, ca: await readFile(tls.ca), timeout: 30_000,
    ...(tls.client === undefined ? {} : { cert: await readFile(tls.client.cert), key: await readFile(tls.client.key) }),
    headers: { ...headers, ...(tls.token === undefined ? {} : { authorization: `Bearer ${tls.token}` }) },
  };
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error(`${url}: no answer within 30 s`)); });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs `push` gzip-compressed to `baseUrl`'s push endpoint over HTTPS with `tls`. */
export async function postPushTls(baseUrl: string, tls: TlsClient, push: unknown): Promise<PushAnswer> {
  const res = await httpsRequest(`${baseUrl}/api/v1/racks/push`, tls, 'POST', gzipSync(Buffer.from(JSON.stringify(push))),
    { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    body = { text: res.text };
  }
  return { status: res.status, body };
}
