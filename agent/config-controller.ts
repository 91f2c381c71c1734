/**
 * @module Decoding the `controller` section of the config (agent/config.ts): where controller
 * sync (agent/sync) pushes — one URL or a list tried in order — and the rack's credential, a
 * bearer token or a TLS client certificate (docs/controller.md, "Rack credentials").
 * @pure
 */
import { ConfigReader, optional } from './config-decode.js';

/** The decoded `controller` section. */
export interface ControllerSyncConfig {
  /** The first of {@link urls}. */
  url: string;
  /** `controller.url` as a list (a single string is a list of one): pushes fail over in order. Absent: `[url]`. */
  urls?: string[];
  token?: string;
  tls?: { ca?: string; cert?: string; key?: string };
  intervalSeconds: number;
}

/** Decodes the `controller` section; undefined when it is absent or its URL is unusable (the problem is recorded). */
export function decodeController(r: ConfigReader, value: unknown): ControllerSyncConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const c = r.mapping('controller', value, ['url', 'token', 'tls', 'intervalSeconds']);
  // A list of controllers (several processes on one database) is tried in order on failure.
  const urlsIn = Array.isArray(c.url) ? (c.url as unknown[]) : [c.url];
  if (Array.isArray(c.url) && (urlsIn.length === 0 || urlsIn.length > 16)) r.report('controller.url', 'a URL or a list of 1 to 16 URLs', `a list of ${urlsIn.length}`);
  const urls = urlsIn.map((u, i) => r.httpUrl(Array.isArray(c.url) ? `controller.url[${i}]` : 'controller.url', u, 'put the secret in controller.token'));
  const url = urls.every((u) => u !== undefined) ? urls[0] : undefined;
  if (url === undefined && c.url === undefined) r.report('controller.url', 'the controller URL (required when controller is set)', undefined);
  const token = r.string('controller.token', c.token);
  const tlsIn = c.tls === undefined ? undefined : r.mapping('controller.tls', c.tls, ['ca', 'cert', 'key']);
  const tls = tlsIn === undefined ? undefined : {
    ...optional('ca', r.absolutePath('controller.tls.ca', tlsIn.ca)),
    ...optional('cert', r.absolutePath('controller.tls.cert', tlsIn.cert)),
    ...optional('key', r.absolutePath('controller.tls.key', tlsIn.key)),
  };
  if (tlsIn !== undefined && (tlsIn.cert === undefined) !== (tlsIn.key === undefined)) {
    r.report(tlsIn.cert === undefined ? 'controller.tls.cert' : 'controller.tls.key', 'tls.cert and tls.key together', undefined);
  }
  // The controller refuses a push without a credential: a token, or a client certificate, which
  // only a TLS connection carries (docs/controller.md, "Rack credentials").
  if (url !== undefined && c.token === undefined && tlsIn?.cert === undefined) {
    r.report('controller.token', 'a rack token, or controller.tls.cert and controller.tls.key (a client certificate)', undefined);
  }
  const plainUrl = urls.find((u) => u?.startsWith('http:'));
  if (c.token === undefined && tlsIn?.cert !== undefined && plainUrl !== undefined) {
    r.report('controller.url', 'https:// controller URLs: a client certificate is sent only over TLS (or set controller.token)', plainUrl);
  }
  const intervalSeconds = r.integer('controller.intervalSeconds', c.intervalSeconds, 60, 1, 86400);
  if (url === undefined) return undefined;
  return { url, urls: urls.filter((u) => u !== undefined), ...optional('token', token), ...optional('tls', tls), intervalSeconds };
}
