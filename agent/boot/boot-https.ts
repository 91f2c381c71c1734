/**
 * @module Boot HTTPS from the config (docs/https-boot.md): the TLS listener's certificate — the
 * operator's files (`http.tls: { cert, key }`) or one issued from rackside's own boot CA
 * (`http.tls: auto`, boot-ca.ts) for the provisioning addresses and the head node's host name —
 * and the base URL hosts reach it at.
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import { ensureBootCertificate } from './boot-ca.js';

/** The TLS listener options boot HTTP takes (bootsvc/http/boot-http-server.ts `tls`). */
export interface BootHttpsListener {
  cert: string;
  key: string;
  port: number;
  host: string;
  publicUrl: string;
  /** Where the certificate came from, for the log. */
  source: 'operator' | 'boot CA';
  /**
   * What a ramdisk booted over HTTPS verifies this listener with (unified-images.ts): the boot CA
   * (`http.tls: auto`), or the operator's certificate chain itself (curl trusts a certificate of
   * the chain as its anchor: OpenSSL's partial-chain verification, on by default since curl 7.68).
   */
  trustPem: string;
}

/** The host part of the boot URLs: `http.listen`'s address, else the provisioning address (IPv4, then IPv6), else loopback. */
export function publicHost(config: Config): string {
  const listen = config.http.listen.host;
  if (listen !== '0.0.0.0' && listen !== '' && listen !== '::') return listen;
  return config.provisioning.address ?? config.provisioning.address6 ?? '127.0.0.1';
}

/** `scheme://host:port`, an IPv6 literal host in brackets (RFC 3986 §3.2.2). */
export function baseUrlOf(scheme: 'http' | 'https', host: string, port: number): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Boot HTTPS's base URL as hosts reach it (`https://<provisioning address>:<http.tlsPort>`), or undefined without `http.tls`. */
export function bootHttpsBaseUrl(config: Config): string | undefined {
  const tls = config.http.tls;
  return tls === undefined ? undefined : baseUrlOf('https', publicHost(config), tls.port);
}

/** The names the boot CA's server certificate is issued for: the URL's host, the provisioning addresses, the host name. */
export function bootCertificateNames(config: Config, hostName: string = hostname()): string[] {
  const names = [publicHost(config), config.provisioning.address, config.provisioning.address6, hostName];
  return [...new Set(names.filter((n): n is string => n !== undefined && n !== '' && n !== '0.0.0.0' && n !== '::'))];
}

/**
 * The TLS listener of boot HTTP, or undefined without `http.tls`. Rejects when the operator's
 * files cannot be read or the boot CA cannot be made (`openssl` missing or failing).
 */
export async function bootHttpsListener(config: Config): Promise<BootHttpsListener | undefined> {
  const tls = config.http.tls;
  const publicUrl = bootHttpsBaseUrl(config);
  if (tls === undefined || publicUrl === undefined) return undefined;
  const base = { port: tls.port, host: config.http.listen.host, publicUrl };
  if (tls.cert !== undefined && tls.key !== undefined) {
    const cert = await readFile(tls.cert, 'utf8');
    return { ...base, cert, key: await readFile(tls.key, 'utf8'), source: 'operator', trustPem: cert };
  }
  const issued = await ensureBootCertificate(config.agent.stateDir, bootCertificateNames(config), { commonName: `rackside boot CA (${config.agent.id})` });
  return { ...base, cert: issued.chainPem, key: issued.keyPem, source: 'boot CA', trustPem: issued.caPem };
}
