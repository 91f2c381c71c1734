/**
 * @module The IPv4 (and IPv6) addresses configured on one interface, whatever its carrier. Node's
 * `os.networkInterfaces()` (libuv's getifaddrs walk) leaves out every interface that is not both
 * IFF_UP and IFF_RUNNING, so a provisioning bridge whose ports have no carrier yet (no cable, or
 * guests not started) looks address-less although its address is configured and bindable. This
 * asks iproute2 (`ip -j -4 addr show dev NAME`), and falls back to getifaddrs when `ip` cannot run.
 */
import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';

/** An IPv4 address and its prefix length. */
export interface InterfaceAddress {
  address: string;
  prefixLength: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The IPv4 addresses of `ip -j -4 addr show` output (a JSON array of links, each with an
 * `addr_info` list of `{family, local, prefixlen}`). Pure; throws a SyntaxError on text that is not JSON.
 */
export function parseIpAddrJson(text: string): InterfaceAddress[] {
  return addrInfoEntries(text)
    .flatMap((a) => (a.family === 'inet' && typeof a.local === 'string' && typeof a.prefixlen === 'number' ? [{ address: a.local, prefixLength: a.prefixlen }] : []));
}

/** Every `addr_info` entry of every link in `ip -j addr show` output; throws a SyntaxError on text that is not JSON. */
function addrInfoEntries(text: string): Record<string, unknown>[] {
  const links: unknown = JSON.parse(text);
  if (!Array.isArray(links)) return [];
  return links.filter(isRecord).flatMap((link) => (Array.isArray(link.addr_info) ? (link.addr_info as unknown[]) : [])).filter(isRecord);
}

/**
 * Runs `ip -j -<family> addr show dev NAME` and parses it; an unknown device gives [] ("Device …
 * does not exist", exit 1, as getifaddrs says), any other failure `fallback()`. Never rejects.
 */
function ipAddrShow<T>(family: '4' | '6', name: string, parse: (text: string) => T[], fallback: () => T[]): Promise<T[]> {
  return new Promise((resolve) => {
    execFile('ip', ['-j', `-${family}`, 'addr', 'show', 'dev', name], { timeout: 5_000 }, (err, stdout, stderr) => {
      if (err !== null) {
        resolve(/does not exist/.test(stderr) ? [] : fallback());
        return;
      }
      try {
        resolve(parse(stdout));
      } catch {
        resolve(fallback());
      }
    });
  });
}

function fromGetifaddrs(name: string): InterfaceAddress[] {
  return (networkInterfaces()[name] ?? [])
    .filter((a) => a.family === 'IPv4')
    .map((a) => ({ address: a.address, prefixLength: Number((a.cidr ?? '/32').split('/')[1] ?? 32) }));
}

/**
 * The IPv4 addresses configured on interface `name` (empty for an unknown interface), including
 * those of an interface without carrier. Never rejects.
 */
export function interfaceIpv4Addresses(name: string): Promise<InterfaceAddress[]> {
  return ipAddrShow('4', name, parseIpAddrJson, () => fromGetifaddrs(name));
}

/** An IPv6 address on an interface, with what `ip -6 addr` says of its state. */
export interface Interface6Address extends InterfaceAddress {
  /** `link` for fe80::/10, `global` (or `site`/`host`) otherwise. */
  scope: string;
  /** Duplicate address detection still runs: the address cannot be bound yet (RFC 4862 §5.4). */
  tentative: boolean;
  /** Duplicate address detection found another node with it: the address is unusable. */
  dadFailed: boolean;
}

/** The IPv6 addresses of `ip -j -6 addr show` output (`addr_info` entries of family `inet6`). Pure; throws a SyntaxError on text that is not JSON. */
export function parseIpAddrJson6(text: string): Interface6Address[] {
  return addrInfoEntries(text)
    .flatMap((a) => (a.family === 'inet6' && typeof a.local === 'string' && typeof a.prefixlen === 'number'
      ? [{ address: a.local, prefixLength: a.prefixlen, scope: typeof a.scope === 'string' ? a.scope : 'global', tentative: a.tentative === true, dadFailed: a.dadfailed === true }]
      : []));
}

/**
 * The IPv6 addresses configured on interface `name` (empty for an unknown interface or one with
 * IPv6 off), tentative ones included, from iproute2, else getifaddrs. Never rejects.
 */
export function interfaceIpv6Addresses(name: string): Promise<Interface6Address[]> {
  const fallback = (): Interface6Address[] => (networkInterfaces()[name] ?? []).filter((a) => a.family === 'IPv6').map((a) => ({
    address: a.address.split('%')[0] ?? a.address, prefixLength: Number((a.cidr ?? '/128').split('/')[1] ?? 128),
    scope: a.address.toLowerCase().startsWith('fe80:') ? 'link' : 'global', tentative: false, dadFailed: false,
  }));
  return ipAddrShow('6', name, parseIpAddrJson6, fallback);
}
