/**
 * @module The seams boot services need from the agent, declared here by their consumer
 * (docs/architecture.md, rule 1; smee's `BackendReader`): {@link BootLookup} answers "what
 * should MAC m with client arch a boot now?" with a {@link BootTarget}, {@link LeaseStore} persists DHCP leases (the
 * agent implements it over its LevelDB `leases` sublevel). Also the small vocabulary both sides
 * share: client architecture, firmware kind, boot transport. Nothing here knows about hosts'
 * lifecycle; the agent maps its hosts onto these answers.
 * @pure
 */
import type { BootTarget } from './ipxe/boot-plan.js';

/** CPU architecture of a booting client, from option 93 or the vendor class (RFC 4578 §2.1). */
export type ClientArch = 'x86' | 'x86_64' | 'arm32' | 'arm64' | 'riscv32' | 'riscv64' | 'loongarch64' | 'unknown';

/** Firmware family: legacy PC BIOS, UEFI, or not a network-boot client at all. */
export type FirmwareKind = 'bios' | 'uefi' | 'unknown';

/** How the client fetches its boot file: TFTP (PXE) or HTTP (UEFI HTTP boot, `HTTPClient`). */
export type BootTransport = 'tftp' | 'http';

/** A boot question: who is asking, with what firmware, at which stage of the chain. */
export interface BootQuery {
  /** Lower-case colon MAC of the booting interface (`52:54:00:12:34:56`). */
  mac: string;
  arch: ClientArch;
  /** The IANA processor architecture type the decision was derived from (option 93), if any. */
  archType?: number;
  firmware: FirmwareKind;
  transport: BootTransport;
  /** True when the request came from iPXE itself (user class `iPXE` or option 175): the second stage. */
  isIpxe: boolean;
  /** The first user class (option 77), e.g. `iPXE`. */
  userClass?: string;
  /** SMBIOS/firmware UUID from option 97. */
  uuid?: string;
  /** The relay address (`giaddr`) when the request was relayed from another segment. */
  relayAddress?: string;
}

/**
 * What a client should boot now, as the DHCP server hands it out; derived inside bootsvc from the
 * agent's {@link BootTarget} by `decideBoot` (ipxe/boot-files.ts), never by the agent.
 * - `ipxe-script`: chain through iPXE. The firmware stage gets `loader` (a TFTP file name such
 *   as `ipxe.efi`, or an `http://` URL for UEFI HTTP boot); iPXE itself gets `scriptUrl`
 *   (`http://<agent>/boot/<mac>.ipxe`). The responder never hands iPXE its own loader again.
 * - `boot-file`: give every stage this file (TFTP name or `http://` URL): shim for Secure Boot,
 *   GRUB for arm64.
 * - `local-disk`: do not network-boot; the firmware falls through to the next boot device.
 * - `none`: known host with nothing to boot now (same DHCP behaviour as `local-disk`).
 */
export type BootDecision =
  | { kind: 'ipxe-script'; loader: string; scriptUrl: string }
  | { kind: 'boot-file'; bootFile: string }
  | { kind: 'local-disk' }
  | { kind: 'none' };

/**
 * A boot question as the asking server knows it: always the MAC; DHCP also knows the client's
 * architecture, firmware and stage, a boot-file fetch (iPXE script, GRUB config) only the MAC.
 */
export type BootTargetQuery = Pick<BootQuery, 'mac'> & Partial<Omit<BootQuery, 'mac'>>;

/**
 * The one seam the boot services ask: "what should this MAC, with this client architecture, boot
 * now?". Implemented by the agent from its hosts and provisioner; DHCP derives its first-stage
 * file from the answer (`decideBoot`), boot HTTP and the TFTP hook render the iPXE script or GRUB
 * config from it, so the two can never disagree. Called once per DHCP request, TFTP hook or
 * boot-script fetch, so it must be cheap and must not block on BMCs; it must return the same
 * answer while nothing changed.
 */
export interface BootLookup {
  /**
   * The target of `query.mac` (lower-case colon form), or `undefined` when the MAC belongs to no
   * known host (the `unknownHosts` policy then decides). Rejections are treated as "unknown" by
   * callers after being logged; they never crash a listener.
   */
  target(query: BootTargetQuery): Promise<BootTarget | undefined>;
}

/** State of a lease record: offered and held briefly, bound, or an address quarantined after DECLINE. */
export type LeaseState = 'offered' | 'bound' | 'declined';

/** One DHCP lease record as persisted. Times are milliseconds since the epoch. */
export interface Lease {
  /** Client MAC, lower-case colon form. For `declined` records, the client that declined. */
  mac: string;
  address: string;
  state: LeaseState;
  /** End of the lease, the offer hold, or the quarantine. A record past it frees its address. */
  expiresAtMs: number;
  /** Host name the client sent (option 12), for operators. */
  hostName?: string;
}

/**
 * The key a lease record is stored under: the MAC for `offered`/`bound` records (one per client),
 * `declined:<address>` for quarantine records (one per address, so a client that declines two
 * addresses keeps both quarantined).
 */
export function leaseKey(lease: Pick<Lease, 'mac' | 'address' | 'state'>): string {
  return lease.state === 'declined' ? `declined:${lease.address}` : lease.mac;
}

/**
 * Persistent lease storage, so a client keeps its address across agent restarts (issue 3).
 * Implemented by the agent over LevelDB; a `put` resolves once the record is durable.
 * Keys are {@link leaseKey}s.
 */
export interface LeaseStore {
  /** The record stored under `key` (a MAC for a client's lease). */
  get(key: string): Promise<Lease | undefined>;
  /** Stores `lease` under `leaseKey(lease)`, replacing what was there. */
  put(lease: Lease): Promise<void>;
  /** Removes the record under `key`; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Every record, in key order; the DHCP server loads these once and keeps them in memory. */
  list(): Promise<Lease[]>;
}
