/**
 * @module Address pools of the full DHCP server: subnet selection (local or by relay `giaddr`),
 * availability of an address for a client, and allocation (reservation, then the client's
 * previous address, then the requested one, then the first never-used address, then the
 * longest-expired one). Works on a snapshot of lease records and a `nowMs` passed in; returns
 * lease records to store and never touches storage. An exhausted pool returns `undefined`.
 *
 * Cost: a plain array of records is scanned (bounded by the number of records, never by the
 * size of the range). A {@link PoolState} that carries an `index` ({@link PoolLeaseIndex}, kept
 * by the lease table next to the records it indexes: `lease-cache.ts`) is answered from it
 * instead — the client's record and an address's records by key, the first never-used address
 * and the longest-expired record in amortised O(1)/O(log n) — so a rack powering on, where
 * every new client used to scan every record (7–15 % of the server's CPU under perfdhcp), costs
 * the same per client at 50 or 50,000 leases. Both paths give the same answers (a differential
 * test holds them together). Likewise the reserved addresses as numbers
 * ({@link reservedAddresses}) are built once by the caller and passed as `reserved`; absent,
 * they are computed per call. Nothing is kept between calls: same arguments, same answer.
 * @pure
 */
import type { Lease } from '../boot-lookup.js';
import { formatIpv4, parseIpv4, prefixMask } from './address.js';

/** One configured subnet: the local segment or a relayed one (`dhcp.range` in the config). */
export interface DhcpSubnet {
  /** Network address, e.g. `10.20.0.0`. */
  network: string;
  prefixLength: number;
  /** First and last address of the dynamic range, inclusive. */
  rangeStart: string;
  rangeEnd: string;
  /** Option 3. */
  router?: string;
  /** Option 6. */
  dnsServers?: readonly string[];
  /** Option 15. */
  domainName?: string;
}

/** A static address for a MAC (from a host's `bootMACAddress`); may lie outside the dynamic range. */
export interface Reservation {
  mac: string;
  address: string;
  /** Sent as option 12 when set. */
  hostName?: string;
}

/** The state one allocation decision is made against. */
export interface PoolState {
  subnet: DhcpSubnet;
  /** Our own address: never offered. */
  serverAddress: string;
  leases: readonly Lease[];
  /**
   * The index answering for exactly the records of `leases` (the lease table's); absent, they
   * are scanned. Must be in step with `leases`: same records, same answers.
   */
  index?: PoolLeaseIndex;
  reservations: readonly Reservation[];
  /** `reservations`' addresses as numbers ({@link reservedAddresses}); absent, computed per call. */
  reserved?: ReadonlySet<number>;
  nowMs: number;
}

/** Why an address can or cannot go to a client. */
export type Availability =
  | 'available'
  | 'malformed'
  | 'outside-subnet'
  | 'outside-range'
  | 'excluded'
  | 'reserved-for-other'
  | 'in-use'
  | 'quarantined';

/** Where an allocated address came from. */
export type AllocationSource = 'reservation' | 'previous' | 'requested' | 'free' | 'expired';

/**
 * What a lease table can answer without a scan. Implemented by the DHCP server's lease cache
 * (`lease-cache.ts`), over exactly the records it holds; passed as `PoolState.index` beside
 * those records.
 */
export interface PoolLeaseIndex {
  /** The `offered`/`bound` record of `mac` (as {@link findClientLease}). */
  byClient(mac: string): Lease | undefined;
  /** Every record (of any client or state) for `address`. */
  byAddress(address: string): readonly Lease[];
  /**
   * The lowest address (as a 32-bit number) in `first`…`last` that has no record at all and
   * for which `skip` is false; `undefined` when there is none.
   */
  firstUnrecorded(first: number, last: number, skip: (value: number) => boolean): number | undefined;
  /**
   * The first record, in order of expiry (longest expired first, among records with
   * `expiresAtMs <= nowMs`), that `accept` takes; `undefined` when it takes none.
   */
  findExpired(nowMs: number, accept: (lease: Lease) => boolean): Lease | undefined;
}

/** True when `address` lies in the subnet's network. */
export function subnetContains(subnet: DhcpSubnet, address: string): boolean {
  const a = parseIpv4(address);
  const n = parseIpv4(subnet.network);
  if (a === undefined || n === undefined) return false;
  const mask = prefixMask(subnet.prefixLength);
  return ((a & mask) >>> 0) === ((n & mask) >>> 0);
}

/**
 * Chooses the subnet a request belongs to: the one containing `giaddr` when relayed (RFC 2131
 * §4.3.1: "the server chooses the subnet ... from the giaddr"), else the one containing our
 * own address on the provisioning segment. `undefined` when none is configured for it.
 */
export function selectSubnet(subnets: readonly DhcpSubnet[], giaddr: string, serverAddress: string): DhcpSubnet | undefined {
  const key = giaddr !== '0.0.0.0' ? giaddr : serverAddress;
  return subnets.find((s) => subnetContains(s, key));
}

/**
 * The `offered`/`bound` record of `mac`, expired or not: from `index` when given (it must answer
 * for exactly `leases`), else by a scan of `leases`.
 */
export function findClientLease(leases: readonly Lease[], mac: string, index?: PoolLeaseIndex): Lease | undefined {
  if (index !== undefined) return index.byClient(mac);
  return leases.find((l) => l.mac === mac && l.state !== 'declined');
}

/** The reservation of `mac` that lies in `subnet`, if any. */
export function findReservation(state: PoolState, mac: string): Reservation | undefined {
  return state.reservations.find((r) => r.mac.toLowerCase() === mac && subnetContains(state.subnet, r.address));
}

/** Addresses never handed out in a subnet: network, broadcast, our own, the router. */
function isExcluded(state: PoolState, value: number): boolean {
  const { subnet } = state;
  const mask = prefixMask(subnet.prefixLength);
  const network = ((parseIpv4(subnet.network) ?? 0) & mask) >>> 0;
  if (subnet.prefixLength < 31 && (value === network || value === (network | ~mask) >>> 0)) return true;
  if (value === parseIpv4(state.serverAddress)) return true;
  return subnet.router !== undefined && value === parseIpv4(subnet.router);
}

/** Says whether `address` may be given to `mac` now, and if not, why. */
export function checkAddress(state: PoolState, mac: string, address: string): Availability {
  const value = parseIpv4(address);
  if (value === undefined) return 'malformed';
  if (!subnetContains(state.subnet, address)) return 'outside-subnet';
  if (isExcluded(state, value)) return 'excluded';
  const owner = state.reservations.find((r) => r.address === address);
  if (owner !== undefined && owner.mac.toLowerCase() !== mac) return 'reserved-for-other';
  if (owner === undefined) {
    const start = parseIpv4(state.subnet.rangeStart) ?? 1;
    const end = parseIpv4(state.subnet.rangeEnd) ?? 0;
    if (value < start || value > end) return 'outside-range';
  }
  const index = state.index;
  for (const l of index === undefined ? state.leases : index.byAddress(address)) {
    if (l.address !== address || l.expiresAtMs <= state.nowMs) continue;
    if (l.state === 'declined') return 'quarantined';
    if (l.mac !== mac) return 'in-use';
  }
  return 'available';
}

/**
 * Picks an address for `mac`: its reservation in this subnet, else its previous address, else
 * `requestedAddress` (option 50), else the first address of the range with no record at all,
 * else the range address whose record expired longest ago (ties: the lower address).
 * `undefined` means the pool is exhausted. Over a plain array the scan for a never-used address
 * stops at the first one: each address it steps over has a record, a reservation or is
 * excluded, so it takes at most `leases + reservations + 4` steps however large the range is;
 * with `state.index` it costs amortised O(1).
 */
export function allocateAddress(
  state: PoolState,
  mac: string,
  requestedAddress?: string,
): { address: string; source: AllocationSource } | undefined {
  const reservation = findReservation(state, mac);
  if (reservation !== undefined && checkAddress(state, mac, reservation.address) === 'available') {
    return { address: reservation.address, source: 'reservation' };
  }
  const previous = findClientLease(state.leases, mac, state.index);
  if (previous !== undefined && checkAddress(state, mac, previous.address) === 'available') {
    return { address: previous.address, source: 'previous' };
  }
  if (requestedAddress !== undefined && checkAddress(state, mac, requestedAddress) === 'available') {
    return { address: requestedAddress, source: 'requested' };
  }
  const rangeStart = parseIpv4(state.subnet.rangeStart);
  const rangeEnd = parseIpv4(state.subnet.rangeEnd);
  const network = parseIpv4(state.subnet.network);
  if (rangeStart === undefined || rangeEnd === undefined || network === undefined) return undefined;
  // Clamp the range to the subnet so every scanned address is a candidate (a misconfigured range cannot make the scan long).
  const mask = prefixMask(state.subnet.prefixLength);
  const first = Math.max(rangeStart, (network & mask) >>> 0);
  const last = Math.min(rangeEnd, ((network & mask) | ~mask) >>> 0);
  const excluded = excludedValues(state);
  const reserved = state.reserved ?? reservedAddresses(state.reservations);
  const index = state.index;
  if (index !== undefined) {
    const free = index.firstUnrecorded(first, last, (value) => excluded.has(value) || reserved.has(value));
    if (free !== undefined) return { address: formatIpv4(free), source: 'free' };
    const expired = index.findExpired(state.nowMs, (l) => checkAddress(state, mac, l.address) === 'available');
    return expired === undefined ? undefined : { address: expired.address, source: 'expired' };
  }
  const recorded = new Set<number>(reserved);
  for (const l of state.leases) recorded.add(parseIpv4(l.address) ?? -1);
  for (let value = first; value <= last; value++) {
    if (!recorded.has(value) && !excluded.has(value)) return { address: formatIpv4(value), source: 'free' };
  }
  const expired = state.leases.filter((l) => l.expiresAtMs <= state.nowMs).sort(byExpiry);
  for (const l of expired) {
    if (checkAddress(state, mac, l.address) === 'available') return { address: l.address, source: 'expired' };
  }
  return undefined;
}

/**
 * Order of the expired-lease fallback: longest expired first, then the lower address (so the
 * scan and an index agree on ties).
 */
export function byExpiry(a: Lease, b: Lease): number {
  return a.expiresAtMs - b.expiresAtMs || (parseIpv4(a.address) ?? 0) - (parseIpv4(b.address) ?? 0);
}

/** The excluded addresses of the state's subnet (see {@link isExcluded}) as numbers. */
function excludedValues(state: PoolState): Set<number> {
  const { subnet } = state;
  const mask = prefixMask(subnet.prefixLength);
  const network = ((parseIpv4(subnet.network) ?? 0) & mask) >>> 0;
  const out = new Set<number>();
  if (subnet.prefixLength < 31) out.add(network).add((network | ~mask) >>> 0);
  const server = parseIpv4(state.serverAddress);
  if (server !== undefined) out.add(server);
  const router = subnet.router === undefined ? undefined : parseIpv4(subnet.router);
  if (router !== undefined) out.add(router);
  return out;
}

/**
 * The reserved addresses as numbers (malformed ones left out): what `PoolState.reserved` holds.
 * The server builds it once per reservations array it is given and passes it with every
 * decision while that array is unchanged.
 */
export function reservedAddresses(reservations: readonly Reservation[]): ReadonlySet<number> {
  const set = new Set<number>();
  for (const r of reservations) {
    const value = parseIpv4(r.address);
    if (value !== undefined) set.add(value);
  }
  return set;
}

/**
 * The record to store when offering `address`: held for `offerHoldSeconds` so two clients are
 * not offered the same address (RFC 2131 §4.3.1 "SHOULD ... reserve the offered address").
 * `undefined` when the client already holds a live bound lease on it (re-DISCOVER after a
 * reboot must not shorten its lease).
 */
export function offerLease(state: PoolState, mac: string, address: string, offerHoldSeconds: number): Lease | undefined {
  const current = findClientLease(state.leases, mac, state.index);
  if (current?.state === 'bound' && current.address === address && current.expiresAtMs > state.nowMs) return undefined;
  return { mac, address, state: 'offered', expiresAtMs: state.nowMs + offerHoldSeconds * 1000 };
}

/**
 * Of a lease's time, the share from its start during which a client asking again (the next boot
 * stage, a renewal) gets the lease it holds, unchanged, instead of a new one: nothing to write,
 * so its ACK waits for no disk — ISC dhcpd's `dhcp-cache-threshold` (default 25 %) and Kea's
 * `cache-threshold`. A network boot asks three times within minutes (the firmware, iPXE, the
 * ramdisk's kernel): one synced write instead of three. The ACK carries the time left.
 */
export const LEASE_REUSE_SHARE = 0.25;

/**
 * The whole seconds left of `lease` when it can be acknowledged again as it is: bound to this
 * `address` with the same host name, durable (`settled`: no write of it queued or in flight —
 * an ACK must never tell of a binding a restart could lose), started at most
 * {@link LEASE_REUSE_SHARE} of `leaseSeconds` ago and not longer than `leaseSeconds` (a lease
 * time shortened in the config takes effect at once). Otherwise undefined: write a new lease.
 */
export function reusableLeaseSeconds(
  lease: Lease | undefined, address: string, hostName: string | undefined, nowMs: number, leaseSeconds: number, settled: boolean,
): number | undefined {
  if (!settled || lease?.state !== 'bound' || lease.address !== address || lease.hostName !== hostName) return undefined;
  const leftMs = lease.expiresAtMs - nowMs;
  if (leftMs > leaseSeconds * 1000 || leftMs < leaseSeconds * 1000 * (1 - LEASE_REUSE_SHARE)) return undefined;
  const left = Math.floor(leftMs / 1000);
  return left >= 1 ? left : undefined;
}

/** The record to store when acknowledging `address` for `leaseSeconds`. */
export function bindLease(nowMs: number, mac: string, address: string, leaseSeconds: number, hostName?: string): Lease {
  const lease: Lease = { mac, address, state: 'bound', expiresAtMs: nowMs + leaseSeconds * 1000 };
  if (hostName !== undefined) lease.hostName = hostName;
  return lease;
}

/** The quarantine record for an address a client declined (RFC 2131 §4.3.3: "MUST mark the network address as not available"). */
export function quarantineAddress(nowMs: number, mac: string, address: string, quarantineSeconds: number): Lease {
  return { mac, address, state: 'declined', expiresAtMs: nowMs + quarantineSeconds * 1000 };
}
