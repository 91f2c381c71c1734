/**
 * @module A raw ICMPv6 socket bound to one interface, over the `openIcmp6` / `sendIcmp6` /
 * `closeIcmp6` functions of rackside's native addon (`native/udp-bind/icmp6_raw.c`): Node has
 * no raw sockets, and router advertisements are ICMPv6 (RFC 4861). The socket receives only
 * Router Solicitations (an ICMP6_FILTER), arriving on its interface to ff02::2 or to one of the
 * interface's addresses, with their IP hop limit; it sends with hop limit 255 (RFC 4861 §6.1.2)
 * out of its interface.
 */
import { createRequire } from 'node:module';
import { DEFAULT_UDP_BIND_ADDON_PATH, UDP_BIND_ADDON_MISSING } from '../dhcp/bound-socket.js';

/** One received ICMPv6 message. */
export interface Icmp6Datagram {
  /** The ICMPv6 message from its type byte. */
  payload: Buffer;
  /** IPv6 source, without zone. */
  sourceAddress: string;
  /** The IP header's hop limit; -1 when the kernel gave none. */
  hopLimit: number;
}

/** A raw ICMPv6 socket; methods throw errors whose `code` is the errno name. */
export interface RawIcmp6Socket {
  readonly interfaceName: string;
  readonly interfaceIndex: number;
  /** Sends the ICMPv6 message `payload` (checksum left to the kernel) to `destination` on the interface, from `sourceAddress` when given. */
  send(payload: Buffer, destination: string, sourceAddress?: string): void;
  /** Stops receiving and closes the socket; idempotent. */
  close(): void;
}

/** Options of {@link openRawIcmp6}. */
export interface OpenRawIcmp6Options {
  interface: string;
  onMessage: (datagram: Icmp6Datagram) => void;
  onError: (err: Error) => void;
  /** Path of `udp_bind.node` (default: the addon built by `npm run build:native`). */
  addonPath?: string;
}

interface Icmp6Handle {
  readonly ifindex: number;
  readonly interface: string;
}

interface Icmp6Addon {
  openIcmp6(o: { interface: string; onMessage: (payload: Buffer, source: string, hopLimit: number) => void; onError: (code: string, message: string) => void }): Icmp6Handle;
  sendIcmp6(handle: Icmp6Handle, payload: Buffer, destination: string, sourceAddress?: string): number;
  closeIcmp6(handle: Icmp6Handle): void;
}

function loadAddon(path: string): Icmp6Addon {
  let value: unknown;
  try {
    value = createRequire(import.meta.url)(path);
  } catch (err) {
    throw Object.assign(new Error(`rackside's native addon is not available for ICMPv6 (${err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err)}); build it with \`npm run build:native\``), { code: UDP_BIND_ADDON_MISSING, cause: err });
  }
  const v = value as Partial<Record<keyof Icmp6Addon, unknown>> | null;
  if (v === null || typeof v !== 'object' || typeof v.openIcmp6 !== 'function' || typeof v.sendIcmp6 !== 'function' || typeof v.closeIcmp6 !== 'function') {
    throw Object.assign(new Error(`${path} has no openIcmp6/sendIcmp6/closeIcmp6: rebuild it with \`npm run build:native\``), { code: UDP_BIND_ADDON_MISSING });
  }
  return value as Icmp6Addon;
}

/**
 * Opens the raw ICMPv6 socket on `interface` (SO_BINDTODEVICE, joined to ff02::2, hop limits
 * 255). Throws when the addon is missing ({@link UDP_BIND_ADDON_MISSING}), the interface does
 * not exist (`ENODEV`) or the process lacks CAP_NET_RAW (`EPERM`).
 */
export function openRawIcmp6(options: OpenRawIcmp6Options): RawIcmp6Socket {
  const addon = loadAddon(options.addonPath ?? DEFAULT_UDP_BIND_ADDON_PATH);
  const handle = addon.openIcmp6({
    interface: options.interface,
    onMessage: (payload, sourceAddress, hopLimit) => { options.onMessage({ payload, sourceAddress, hopLimit }); },
    onError: (code, message) => { options.onError(Object.assign(new Error(message), { code })); },
  });
  return {
    interfaceName: handle.interface,
    interfaceIndex: handle.ifindex,
    send(payload, destination, sourceAddress) {
      addon.sendIcmp6(handle, payload, destination, sourceAddress);
    },
    close() {
      addon.closeIcmp6(handle);
    },
  };
}
