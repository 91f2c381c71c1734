/**
 * @module The one path from a BMC host name to an IP address, for every driver: IP literals
 * pass through untouched; names go to the resolver (node:dns `lookup`, i.e. getaddrinfo and
 * /etc/hosts, or an injected function), and a failure becomes a {@link BmcHostUnresolvedError}
 * naming the host and the resolver's answer — permanent for "no such name" (ENOTFOUND,
 * ENODATA, EAI_NONAME, EAI_FAIL), transient for "cannot answer now" (EAI_AGAIN, a resolver
 * timeout). The IPMI transport resolves through {@link resolveBmcHost} before its UDP socket
 * connects; the Redfish transport hands {@link connectLookup} to its HTTP client, so both say
 * the same thing for the same name.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { unresolvedHostError } from './resolver-errors.js';

/** A resolver: the shape of node:dns/promises `lookup(name, { all: true })`. Tests inject one. */
export type HostLookup = (hostname: string, options: { readonly all: true }) => Promise<readonly LookupAddress[]>;

/** The default resolver (the system's: /etc/hosts, then DNS per /etc/nsswitch.conf). */
export const systemLookup: HostLookup = (hostname, options) => dnsLookup(hostname, options);

/** Options of {@link resolveBmcHost}. */
export interface ResolveOptions {
  /** The BMC address, named in errors. */
  readonly address: string;
  /** Resolver; default {@link systemLookup}. */
  readonly lookup?: HostLookup;
  /** Required family; default any. */
  readonly family?: 4 | 6;
  /** Preferred family when the name has both (the IPMI transport prefers 4, as its udp4 socket did); default: the resolver's order. */
  readonly prefer?: 4 | 6;
}

/** An address to connect to. */
export interface ResolvedHost {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a BMC host name (IP literals as they are); throws {@link BmcHostUnresolvedError}. */
export async function resolveBmcHost(hostname: string, options: ResolveOptions): Promise<ResolvedHost> {
  const literal = isIP(hostname);
  if (literal === 4 || literal === 6) return { address: hostname, family: literal };
  let answers: readonly LookupAddress[];
  try {
    answers = await (options.lookup ?? systemLookup)(hostname, { all: true });
  } catch (err) {
    throw unresolvedHostError(options.address, hostname, err);
  }
  const usable = answers.filter((a) => (a.family === 4 || a.family === 6) && isIP(a.address) === a.family);
  const allowed = usable.filter((a) => options.family === undefined || a.family === options.family);
  const chosen = allowed.find((a) => a.family === options.prefer) ?? allowed[0];
  if (chosen === undefined) throw unresolvedHostError(options.address, hostname, Object.assign(new Error('no usable address'), { code: 'ENODATA' }));
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/** node:net's `lookup` connect option (the callback form, with or without `all`). */
export type ConnectLookup = (
  hostname: string,
  options: { readonly family?: number | string; readonly all?: boolean },
  callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for node:net / node:tls / undici `connect` options that resolves through
 * {@link resolveBmcHost}: a failed name reaches the HTTP client as a BmcHostUnresolvedError.
 */
export function connectLookup(options: ResolveOptions): ConnectLookup {
  return (hostname, lookupOptions, callback) => {
    const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined;
    resolveBmcHost(hostname, { ...options, ...(family === undefined ? {} : { family }) }).then((host) => {
      if (lookupOptions.all === true) callback(null, [{ address: host.address, family: host.family }]);
      else callback(null, host.address, host.family);
    }, (err: unknown) => {
      callback(err instanceof Error ? err : new Error(String(err)), '', 0);
    });
  };
}
