/**
 * @module Interface-bound UDP sockets for the DHCP server, over rackside's small N-API addon
 * `native/udp-bind` (Linux). Node's dgram has no SO_BINDTODEVICE and no IP_PKTINFO, so a
 * dgram socket on 0.0.0.0:67 of a multi-homed head node hears DHCP broadcasts from every
 * segment and sends replies out of whichever interface the routing table picks (issue 3,
 * "multi-NIC"). A {@link BoundSocket} only receives what arrived on its interface, reports the
 * arrival interface and destination address of each datagram (IP_PKTINFO), sends only out of
 * its interface (`ipi_ifindex` on every sendmsg), and can send a reply as a link-layer frame
 * to a client's MAC (RFC 2131 §4.1 "unicast to the client's hardware address") through an
 * AF_PACKET socket — Node cannot write the ARP cache, and the client cannot answer ARP for an
 * address it does not have yet.
 */
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One received datagram with what IP_PKTINFO says about it. */
export interface BoundDatagram {
  payload: Buffer;
  sourceAddress: string;
  sourcePort: number;
  /** Index of the interface it arrived on (always the socket's own interface). */
  interfaceIndex: number;
  /** The IP header's destination: our unicast address, 255.255.255.255, or a subnet broadcast. */
  destinationAddress: string;
}

/** A UDP socket bound to one interface and port. Methods throw errors whose `code` is the errno name. */
export interface BoundSocket {
  readonly interfaceName: string;
  readonly interfaceIndex: number;
  /** The bound port (useful after binding port 0). */
  readonly port: number;
  /**
   * The receive buffer the kernel granted, comparable to the `receiveBufferBytes` asked for.
   * Without CAP_NET_ADMIN (the systemd unit grants none) it is capped by `net.core.rmem_max`.
   */
  readonly receiveBufferBytes: number;
  /**
   * Datagrams the kernel dropped since open because the receive queue was full (SO_RXQ_OVFL),
   * as of the last datagram read; keeps its last value after close.
   */
  kernelDrops(): number;
  /** Sends `payload` to `address:port` out of the socket's interface, optionally from `sourceAddress`. */
  send(payload: Buffer, address: string, port: number, sourceAddress?: string): void;
  /**
   * Sends `payload` as UDP/IPv4 in a link-layer frame to `mac` on the socket's interface (needs
   * CAP_NET_RAW; throws `EPERM` without it).
   */
  sendFrame(payload: Buffer, mac: string, sourceAddress: string, sourcePort: number, destinationAddress: string, destinationPort: number): void;
  /** Stops receiving and closes the socket; idempotent. */
  close(): void;
}

/** Options of {@link openBoundSocket}. */
export interface OpenBoundSocketOptions {
  /** Network interface name, e.g. `eth1`. */
  interface: string;
  /** UDP port to bind on 0.0.0.0 (0 picks a free one). */
  port: number;
  /** SO_RCVBUF to ask for (bursts of DISCOVERs after a rack power-on); default {@link DEFAULT_RECEIVE_BUFFER_BYTES}. */
  receiveBufferBytes?: number;
  onMessage: (datagram: BoundDatagram) => void;
  /** Errors of the receive path (the socket stays open). */
  onError: (err: Error) => void;
  /** Path of `udp_bind.node` (default: the addon built by `npm run build:native`). */
  addonPath?: string;
}

/** The functions `udp_bind.node` exports (see native/udp-bind/udp_bind.c). */
interface UdpBindAddon {
  open(o: {
    interface: string;
    port: number;
    receiveBufferBytes: number;
    onMessage: (payload: Buffer, sourceAddress: string, sourcePort: number, ifindex: number, destinationAddress: string) => void;
    onError: (code: string, message: string) => void;
  }): AddonHandle;
  close(handle: AddonHandle): void;
  send(handle: AddonHandle, payload: Buffer, address: string, port: number, sourceAddress?: string): number;
  sendFrame(handle: AddonHandle, payload: Buffer, mac: string, sourceAddress: string, sourcePort: number, destinationAddress: string, destinationPort: number): number;
  kernelDrops(handle: AddonHandle): number;
}

interface AddonHandle {
  readonly ifindex: number;
  readonly interface: string;
  readonly port: number;
  readonly receiveBufferBytes: number;
}

/**
 * The receive buffer a DHCP socket asks for: 1 MiB queues ≈ 800 DISCOVERs on veth/Ethernet
 * (each costs its skb's truesize, ≈ 1.2 KiB, against twice the buffer), a rack powering on at
 * once with the event loop busy for a moment.
 */
export const DEFAULT_RECEIVE_BUFFER_BYTES = 1 << 20;

/** Stable error code of a missing or unloadable addon. */
export const UDP_BIND_ADDON_MISSING = 'RACKSIDE_ERR_DHCP_ADDON_MISSING';

/** Where `npm run build:native` puts the addon, relative to this compiled file (dist/bootsvc/dhcp/). */
export const DEFAULT_UDP_BIND_ADDON_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../../native/udp-bind/build/Release/udp_bind.node');

const loaded = new Map<string, UdpBindAddon>();

function isAddon(value: unknown): value is UdpBindAddon {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['open', 'close', 'send', 'sendFrame', 'kernelDrops'].every((name) => typeof v[name] === 'function');
}

/**
 * Loads `udp_bind.node` once per path. Throws an Error with code
 * {@link UDP_BIND_ADDON_MISSING} saying how to build it when it is missing or not loadable.
 */
function loadAddon(path: string): UdpBindAddon {
  const cached = loaded.get(path);
  if (cached !== undefined) return cached;
  let value: unknown;
  try {
    value = createRequire(import.meta.url)(path);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] ?? err.message : String(err);
    throw Object.assign(
      new Error(
        `rackside's native addon for interface-bound DHCP sockets is not available (${reason}). ` +
          'Build it with `npm run build:native` (needs gcc, make and python3; Node headers come from nodedir).',
      ),
      { code: UDP_BIND_ADDON_MISSING, cause: err },
    );
  }
  if (!isAddon(value)) {
    throw Object.assign(new Error(`${path} is not rackside's udp_bind addon (open/close/send/sendFrame/kernelDrops missing)`), { code: UDP_BIND_ADDON_MISSING });
  }
  loaded.set(path, value);
  return value;
}

/** True when the addon can be loaded (for tests and start-up checks); never throws. */
export function isUdpBindAddonAvailable(addonPath = DEFAULT_UDP_BIND_ADDON_PATH): boolean {
  try {
    loadAddon(addonPath);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens a UDP socket on 0.0.0.0:`port` bound to `interface` (SO_REUSEADDR, SO_BROADCAST,
 * SO_BINDTODEVICE, IP_PKTINFO). Throws when the addon is missing ({@link UDP_BIND_ADDON_MISSING}),
 * the interface does not exist (`ENODEV`), the port needs privileges (`EACCES`) or binding
 * fails; the error message names the interface and port.
 */
export function openBoundSocket(options: OpenBoundSocketOptions): BoundSocket {
  const addon = loadAddon(options.addonPath ?? DEFAULT_UDP_BIND_ADDON_PATH);
  const handle = addon.open({
    interface: options.interface,
    port: options.port,
    receiveBufferBytes: options.receiveBufferBytes ?? DEFAULT_RECEIVE_BUFFER_BYTES,
    onMessage: (payload, sourceAddress, sourcePort, interfaceIndex, destinationAddress) => {
      options.onMessage({ payload, sourceAddress, sourcePort, interfaceIndex, destinationAddress });
    },
    onError: (code, message) => {
      options.onError(Object.assign(new Error(message), { code }));
    },
  });
  let open = true;
  let dropsAtClose = 0;
  return {
    interfaceName: handle.interface,
    interfaceIndex: handle.ifindex,
    port: handle.port,
    receiveBufferBytes: handle.receiveBufferBytes,
    kernelDrops() {
      return open ? addon.kernelDrops(handle) : dropsAtClose;
    },
    send(payload, address, port, sourceAddress) {
      addon.send(handle, payload, address, port, sourceAddress);
    },
    sendFrame(payload, mac, sourceAddress, sourcePort, destinationAddress, destinationPort) {
      addon.sendFrame(handle, payload, mac, sourceAddress, sourcePort, destinationAddress, destinationPort);
    },
    close() {
      if (open) dropsAtClose = addon.kernelDrops(handle);
      open = false;
      addon.close(handle);
    },
  };
}
