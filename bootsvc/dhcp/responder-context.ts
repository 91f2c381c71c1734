/**
 * @module The inputs and outputs of the pure DHCP responder: everything one decision needs
 * (mode, our address, subnets, a lease snapshot, reservations, the boot decision, the time) and
 * what it produces (a reply packet, lease records to store, or a reason for silence). The
 * server fills the context per request and executes the result; nothing here does I/O.
 * @pure
 */
import type { BootDecision, Lease } from '../boot-lookup.js';
import type { ClientInfo } from './client-info.js';
import type { DhcpPacket } from './packet.js';
import type { DhcpSubnet, PoolLeaseIndex, Reservation } from './pool.js';

/** `full` hands out addresses and boot information; `proxy` only boot information (proxyDHCP). */
export type DhcpMode = 'full' | 'proxy';

/** What to do with MACs the agent does not know (`dhcp.unknownHosts`). */
export type UnknownHostPolicy = 'ignore' | 'discover';

/** Everything {@link respond} decides from. Times are milliseconds since the epoch. */
export interface ResponderContext {
  mode: DhcpMode;
  /** Our address on the provisioning network: option 54, `siaddr`, the TFTP and boot server. */
  serverAddress: string;
  /** The UDP port the request arrived on: 67, or 4011 for the PXE boot-server exchange. */
  serverPort: number;
  /** Configured subnets (full mode): the local one and any relayed ones. */
  subnets: readonly DhcpSubnet[];
  /** Snapshot of the lease records (full mode). */
  leases: readonly Lease[];
  /**
   * The lease table's index over exactly the records of `leases` (pool.ts `PoolState.index`);
   * absent, they are scanned.
   */
  leaseIndex?: PoolLeaseIndex;
  reservations: readonly Reservation[];
  /** `reservations`' addresses as numbers (pool.ts `reservedAddresses`); absent, computed per decision. */
  reservedAddresses?: ReadonlySet<number>;
  leaseSeconds: number;
  /**
   * Whether the store holds the record under `key` as the snapshot shows it (no write of it
   * queued or in flight). Only a settled lease is acknowledged again without a write
   * (pool.ts `reusableLeaseSeconds`); absent: none is.
   */
  leaseSettled?: (key: string) => boolean;
  /** How long an offered address is held for the client (default 60). */
  offerHoldSeconds?: number;
  /** How long a declined address stays out of the pool (default 600). */
  declineQuarantineSeconds?: number;
  /** The agent's {@link BootLookup} answer for this client; `undefined` means an unknown MAC. */
  bootDecision: BootDecision | undefined;
  unknownHosts: UnknownHostPolicy;
  /**
   * What unknown MACs boot when `unknownHosts` is `discover` (the discovery ramdisk chain for the
   * client's stage and arch). Without it they get an address only (full) or nothing (proxy).
   */
  discoveryDecision?: BootDecision;
  /**
   * True when discovery is on but refused this unknown MAC (the agent's discovery limits): it
   * gets no answer at all (`discovery-refused`), so a storm of random MACs takes no addresses.
   */
  discoveryRefused?: boolean;
  nowMs: number;
}

/** A change to apply to the {@link LeaseStore}: store a record, or delete the one under a key. */
export type LeaseChange = { op: 'put'; lease: Lease } | { op: 'delete'; key: string };

/** Why a request got no reply. */
export type IgnoreReason =
  | 'not-a-request'
  | 'bootp-unsupported'
  | 'unsupported-hardware'
  | 'unsupported-message'
  | 'malformed-request'
  | 'malformed-relay-information'
  | 'unknown-host'
  | 'discovery-refused'
  | 'not-netboot-client'
  | 'no-boot'
  | 'ipxe-loop'
  | 'http-client-needs-url'
  | 'other-server'
  | 'not-for-proxy'
  | 'no-subnet'
  | 'pool-exhausted'
  | 'no-record';

/** The outcome of one request. Every variant may carry lease changes to persist. */
export type ResponderResult =
  | {
      kind: 'reply';
      packet: DhcpPacket;
      messageType: 'offer' | 'ack' | 'nak';
      client: ClientInfo;
      /** The boot file or URL given, when any. */
      bootFile?: string;
      /** Why a NAK, or where an address came from, for the flight recorder. */
      detail?: string;
      leaseChanges: LeaseChange[];
    }
  | { kind: 'no-reply'; event: 'released' | 'declined'; client: ClientInfo; leaseChanges: LeaseChange[] }
  | { kind: 'ignore'; reason: IgnoreReason; client?: ClientInfo; leaseChanges: LeaseChange[] };

/** Builds an `ignore` result. */
export function ignore(reason: IgnoreReason, client?: ClientInfo, leaseChanges: LeaseChange[] = []): ResponderResult {
  return client === undefined ? { kind: 'ignore', reason, leaseChanges } : { kind: 'ignore', reason, client, leaseChanges };
}
