/**
 * @module The vocabulary of the PXE-storm simulator: the phases a simulated firmware client goes
 * through (DHCP as firmware → TFTP of the first stage → DHCP as iPXE → HTTP script → HTTP kernel
 * → HTTP initrd), what one client records per phase, and the options and result of a storm.
 * Times are epoch milliseconds with sub-millisecond precision (`performance.timeOrigin +
 * performance.now()`), so results from several client processes can be merged.
 * @pure
 */

/** The phases of one simulated boot, in order. */
export const PHASES = ['dhcp1', 'tftp', 'dhcp2', 'script', 'kernel', 'initrd'] as const;

/** One phase of a simulated boot: `dhcp1` (firmware DORA), `tftp` (first stage), `dhcp2` (iPXE DORA), `script`, `kernel`, `initrd` (HTTP). */
export type PhaseName = (typeof PHASES)[number];

/** The firmware a client pretends to be: `efi` (option 93 = 7, x64 UEFI) or `bios` (option 93 = 0). */
export type FirmwareArch = 'efi' | 'bios';

/** What one phase of one client did. */
export interface PhaseRecord {
  /** When the phase started (first packet or connection attempt), epoch ms. */
  startMs: number;
  /** When it ended (last ACK or byte), epoch ms. */
  endMs: number;
  /** Payload bytes received (TFTP and HTTP phases). */
  bytes?: number;
  /**
   * Packets sent again after a timeout: DISCOVERs and REQUESTs for DHCP, ACKs (and the RRQ) for
   * TFTP; 0 for HTTP, where TCP retransmits below the simulator.
   */
  retransmissions: number;
  /** Free-form detail: the leased address, the negotiated TFTP blksize/windowsize, the URL. */
  detail?: string;
}

/** Why a client failed: the phase it was in and a one-line reason. */
export interface ClientFailure {
  phase: PhaseName;
  reason: string;
}

/** The outcome of one simulated firmware boot. */
export interface ClientResult {
  /** Index of the client in its storm (0-based, global across worker processes). */
  index: number;
  mac: string;
  arch: FirmwareArch;
  /** The address leased in `dhcp1`, when it got that far. */
  address?: string;
  /** The phases that started, in order; a failed phase has its record up to the failure. */
  phases: Partial<Record<PhaseName, PhaseRecord>>;
  /** Absent when the whole boot succeeded. */
  failure?: ClientFailure;
}

/** Per-attempt timeouts of the simulated firmware (bounded retries everywhere). */
export interface FirmwareTimeouts {
  /**
   * Waits for an answer after each DISCOVER (and each REQUEST), one entry per transmission;
   * PXE 2.1 §2.2.1 firmware waits 4, 8, 16 and 32 s. Default `[4000, 8000, 16000, 32000]`.
   */
  dhcpWaitsMs: readonly number[];
  /**
   * The same for iPXE's own DHCP: iPXE doubles its wait from 1 s up to 10 s
   * (`DHCP_DISC_START_TIMEOUT_SEC`, `DHCP_DISC_END_TIMEOUT_SEC` in config/dhcp.h). Default
   * `[1000, 2000, 4000, 8000]`.
   */
  ipxeDhcpWaitsMs: readonly number[];
  /** Wait for the next TFTP packet before sending the last packet again; default 4000 (EDK2 `PXEBC_MTFTP_TIMEOUT`). */
  tftpTimeoutMs: number;
  /** Times a TFTP packet is sent again before the transfer fails; default 6 (EDK2 `PXEBC_MTFTP_RETRIES`). */
  tftpRetries: number;
  /** No byte on an HTTP connection for this long fails the request; default 30 000. */
  httpIdleMs: number;
  /** The whole boot of one client must end within this; default 600 000. */
  clientMs: number;
}

/** The defaults of {@link FirmwareTimeouts}. */
export const DEFAULT_TIMEOUTS: Readonly<FirmwareTimeouts> = {
  dhcpWaitsMs: [4000, 8000, 16000, 32000],
  ipxeDhcpWaitsMs: [1000, 2000, 4000, 8000],
  tftpTimeoutMs: 4000,
  tftpRetries: 6,
  httpIdleMs: 30_000,
  clientMs: 600_000,
};

/** Sizes a client checks what it received against (bytes); a phase whose size differs fails. */
export interface ExpectedSizes {
  firstStage?: number;
  kernel?: number;
  initrd?: number;
}

/** How a storm runs (see `runStorm`). */
export interface StormOptions {
  /** Number of clients in this process. */
  clients: number;
  /** Global index of the first client (MACs and UUIDs derive from it); default 0. */
  firstIndex?: number;
  /** The first three bytes of every client MAC, e.g. `02:00:00` (the default). */
  macPrefix?: string;
  /** How indexes become MACs (see `clientMac`); default `scattered`. */
  macOrder?: 'sequential' | 'scattered';
  /** Firmware of every client, or `mixed` (even indexes EFI, odd BIOS); default `efi`. */
  arch?: FirmwareArch | 'mixed';
  /** TFTP `blksize` to ask for; default 1468 (fits a 1500-byte MTU, RFC 2348). */
  blksize?: number;
  /** TFTP `windowsize` to ask for (RFC 7440); 1 sends no windowsize option (lock-step RFC 1350); default 4. */
  windowsize?: number;
  /**
   * Client `i` starts at `i × rampMs / clients` after the storm starts (a rack powering on over
   * `rampMs`); default 0: all at once.
   */
  rampMs?: number;
  /** Stop after this phase (e.g. `dhcp2` for a DHCP-only storm); default `initrd`. */
  lastPhase?: PhaseName;
  timeouts?: Partial<FirmwareTimeouts>;
  expected?: ExpectedSizes;
  /** Called after each client ends (progress reports). */
  onClientDone?: (result: ClientResult) => void;
}

/** What a storm returns. */
export interface StormResult {
  /** When the first client sent its first DISCOVER, epoch ms. */
  startedMs: number;
  /** When the last client ended (last initrd byte, or its failure), epoch ms. */
  endedMs: number;
  clients: ClientResult[];
  /**
   * The simulator's own event-loop delay over the storm (ms, Node's histogram at 10 ms
   * resolution, so ≈ 10 when idle): high values mean the clients themselves were slow to
   * react, and the figures are bounded by the simulator, not the server.
   */
  clientEventLoop?: { p99Ms: number; maxMs: number };
}
