/**
 * @module Decoding the `http` section of the config (agent/config.ts): boot HTTP's listener,
 * extra root and sendfile switch, and boot HTTPS (docs/https-boot.md) — `tls` (`auto`: a server
 * certificate from rackside's own boot CA, agent/boot/boot-ca.ts; or the operator's
 * `{ cert, key }`), `tlsPort` (default 8443) and `tlsBoot`. `tlsPort` or `tlsBoot: on` without
 * `tls` would do nothing: errors.
 * @pure
 */
import { ConfigReader, optional, type ListenAddress } from './config-decode.js';

/**
 * Boot HTTPS: the port of the TLS listener beside `http.listen`, and the operator's certificate
 * and key, or neither (`http.tls: auto`: issued from rackside's own CA).
 */
export interface BootHttpTls {
  port: number;
  cert?: string;
  key?: string;
}

/**
 * The decoded `http` section. `sendfile`: `on` (default) sends cached file bodies with
 * sendfile(2) through native/sendfile when it is built — small ones from the event loop, those
 * over 1 MiB from its sender threads; `off` reads and writes every body in Node (a way out
 * should a network path misbehave). `tlsBoot: on` hands UEFI HTTP boot clients of x64 hosts
 * their unified kernel image over the HTTPS listener (agent/boot/unified-images.ts).
 */
export interface HttpConfig {
  listen: ListenAddress;
  root?: string;
  sendfile: 'on' | 'off';
  tls?: BootHttpTls;
  tlsBoot: 'on' | 'off';
}

function decodeTls(r: ConfigReader, value: unknown, portIn: unknown): BootHttpTls | undefined {
  if (value === undefined || value === null) {
    if (portIn !== undefined) r.report('http.tlsPort', 'no http.tlsPort without http.tls (there is no HTTPS listener to put on it)', portIn);
    return undefined;
  }
  const port = r.integer('http.tlsPort', portIn, 8443, 1, 65535);
  if (value === 'auto') return { port };
  if (typeof value === 'string') {
    r.report('http.tls', '`auto` or a mapping { cert, key }', value);
    return undefined;
  }
  const t = r.mapping('http.tls', value, ['cert', 'key']);
  const cert = r.absolutePath('http.tls.cert', t.cert);
  const key = r.absolutePath('http.tls.key', t.key);
  if (t.cert === undefined) r.report('http.tls.cert', 'the server certificate chain (PEM) — required when http.tls is a mapping', undefined);
  if (t.key === undefined) r.report('http.tls.key', 'the server private key (PEM) — required when http.tls is a mapping', undefined);
  if (cert === undefined || key === undefined) return undefined;
  return { port, cert, key };
}

/** Decodes `http` (problems go to `r`); `anyHost` is the wildcard address of the default listener (`0.0.0.0` or `[::]`). */
export function decodeHttp(r: ConfigReader, value: unknown, anyHost: string): HttpConfig {
  const httpIn = r.mapping('http', value, ['listen', 'root', 'sendfile', 'tls', 'tlsPort', 'tlsBoot']);
  const tlsBoot = r.oneOf('http.tlsBoot', httpIn.tlsBoot, ['on', 'off'], 'off');
  // `tlsBoot: on` hands out images over the HTTPS listener: without http.tls it would do nothing.
  if (tlsBoot === 'on' && (httpIn.tls === undefined || httpIn.tls === null)) r.report('http.tlsBoot', 'http.tls set as well (tlsBoot hands out unified images over the HTTPS listener)', httpIn.tlsBoot);
  return {
    listen: r.listen('http.listen', httpIn.listen, `${anyHost}:8081`), ...optional('root', r.absolutePath('http.root', httpIn.root)),
    sendfile: r.oneOf('http.sendfile', httpIn.sendfile, ['on', 'off'], 'on'),
    ...optional('tls', decodeTls(r, httpIn.tls, httpIn.tlsPort)),
    tlsBoot,
  };
}
