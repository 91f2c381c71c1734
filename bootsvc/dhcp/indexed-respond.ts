/**
 * @module {@link respond} over an indexed lease table, so a decision costs what the client's own
 * records cost rather than a scan of every lease (`perfdhcp` with thousands of clients made the
 * full scans the server's main CPU cost). The responder reads leases in a few ways only: the
 * client's record (`findClientLease`), the records of one address (`checkAddress` on the
 * reservation, the previous address, option 50 or `ciaddr`), and — when a DISCOVER needs a new
 * address — every record (the free scan and the expired-lease fallback). So a decision is first
 * made against the client's records plus the records of every address it can touch; a DISCOVER
 * whose answer came from anywhere but the reservation, the previous or the requested address
 * (a free or expired address, pool exhaustion, a refusal) is decided again against the full
 * table. The result is the one `respond` gives with the full table; a differential test holds
 * the two together.
 * @pure
 */
import type { Lease } from '../boot-lookup.js';
import { ZERO_ADDRESS } from './address.js';
import { formatMacAddress } from './address.js';
import { DhcpMessageType } from './options.js';
import { getMessageType, getRequestedAddress } from './option-values.js';
import type { DhcpPacket } from './packet.js';
import type { PoolLeaseIndex } from './pool.js';
import { respond } from './responder.js';
import type { ResponderContext, ResponderResult } from './responder-context.js';

/** What {@link respondIndexed} needs from the lease table. */
export interface LeaseIndex {
  /** Every record (built lazily; the slow path). */
  all(): readonly Lease[];
  /** The `offered`/`bound` record of `mac`, if any. */
  byClient(mac: string): Lease | undefined;
  /** Every record (of any client or state) for `address`. */
  byAddress(address: string): readonly Lease[];
  /**
   * The allocation index over exactly the records `all()` returns (pool.ts `PoolLeaseIndex`),
   * passed with them when the full table is decided over; absent, allocation scans them.
   */
  readonly pool?: PoolLeaseIndex;
}

/** The context {@link respondIndexed} takes: the lease records and their index come from the {@link LeaseIndex}. */
export type IndexedResponderContext = Omit<ResponderContext, 'leases' | 'leaseIndex'>;

/** Allocation sources that only looked at records of addresses in the candidate set. */
const LOCAL_SOURCES = new Set(['reservation', 'previous', 'requested']);

/** The records a decision about `request` from `mac` can read, short of a free-address search. */
function candidates(request: DhcpPacket, mac: string, ctx: IndexedResponderContext, index: LeaseIndex): Lease[] {
  const own = index.byClient(mac);
  const addresses = new Set<string>();
  if (own !== undefined) addresses.add(own.address);
  const requested = getRequestedAddress(request.options);
  if (requested !== undefined) addresses.add(requested);
  if (request.ciaddr !== ZERO_ADDRESS) addresses.add(request.ciaddr);
  for (const r of ctx.reservations) if (r.mac.toLowerCase() === mac) addresses.add(r.address);
  const out = new Set<Lease>();
  if (own !== undefined) out.add(own);
  for (const a of addresses) for (const l of index.byAddress(a)) out.add(l);
  return [...out];
}

/** Decides like `respond(request, { ...ctx, leases: index.all() })`, usually without reading `all()`. */
export function respondIndexed(request: DhcpPacket, ctx: IndexedResponderContext, index: LeaseIndex): ResponderResult {
  if (ctx.mode !== 'full') return respond(request, { ...ctx, leases: [] });
  const mac = formatMacAddress(request.chaddr.subarray(0, Math.min(request.hlen, 16)));
  const first = respond(request, { ...ctx, leases: candidates(request, mac, ctx, index) });
  if (getMessageType(request.options) !== DhcpMessageType.discover) return first;
  if (first.kind === 'reply' && first.detail !== undefined && LOCAL_SOURCES.has(first.detail)) return first;
  const full: ResponderContext = { ...ctx, leases: index.all() };
  if (index.pool !== undefined) full.leaseIndex = index.pool;
  return respond(request, full);
}
