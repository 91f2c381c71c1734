/**
 * @module Certificates for the controller's client-certificate tests, from the lab's throw-away
 * CAs (test/lab/redfish/tls.ts, `openssl` CLI), as files in a temporary folder (removed after
 * the test): a rack CA, a server certificate for 127.0.0.1, client certificates whose subject
 * CN is a rack name, and a second,
 * untrusted CA with its own "rack1" certificate. Also an HTTPS push that presents a client
 * certificate (fetch cannot). Without openssl the test skips, or fails under
 * RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import { labCertificateAuthority, type LabCertificate, type LabIssueOptions } from '../../lab/redfish/tls.js';
import { requireTools } from '../../unit/images/helpers.js';
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

/** Writes `issued` as `<name>.pem` and `<name>.key` in `dir`. */
async function saved(dir: string, name: string, issued: LabCertificate): Promise<CertFiles> {
  const files = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  await writeFile(files.cert, issued.cert);
  await writeFile(files.key, issued.key, { mode: 0o600 });
  return files;
}

/** The PKI for test `t` (removed after it); undefined (and `t` skipped) without openssl, unless required. */
export async function rackPkiFor(t: TestContext): Promise<RackPki | undefined> {
  if (!requireTools(t, { openssl: 'openssl' })) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-rack-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [authority, rogueAuthority] = await Promise.all([labCertificateAuthority('rackside rack CA'), labCertificateAuthority('some other CA')]);
  await writeFile(join(dir, 'ca.pem'), authority.cert);
  const client = (subject: string): LabIssueOptions => ({ usage: 'client', subject });
  return {
    dir, ca: join(dir, 'ca.pem'), server: await saved(dir, 'server', await authority.issue('127.0.0.1')),
    rack: async (name) => saved(dir, `rack-${name}`, await authority.issue(name, client(`/CN=${name}`))),
    rogue: async (name) => saved(dir, `rogue-${name}`, await rogueAuthority.issue(name, client(`/CN=${name}`))),
    withSubject: async (file, subject) => saved(dir, file, await authority.issue('', client(subject))),
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
