/**
 * @module The typed events every boot service reports for the flight recorder
 * (docs/architecture.md, "Boot flow" step 6): one union, {@link BootEvent}, covering DHCP messages, TFTP transfers, boot HTTP
 * requests, ramdisk callbacks and BMC calls. Servers take an `onEvent?: BootEventListener` option
 * and call it synchronously after each step; the agent turns the events into stored, per-MAC
 * timeline entries (agent/boot/flight-recorder.ts). Listeners must not throw and must be cheap;
 * servers still guard each call so a faulty listener never breaks a transfer.
 * @pure
 */

/** Fields every boot event may carry. */
export interface BootEventBase {
  /** When it happened (milliseconds since the epoch); the recorder stamps its own clock when absent. */
  atMs?: number;
  /** Lower-case colon MAC of the client, when the service knows it. */
  mac?: string;
  /** The client's IP address as seen by the service (UDP/TCP source), when any. */
  clientAddress?: string;
}

/** DHCP message kinds the DHCP server reports: what arrived, what was sent, or why it stayed silent. */
export type DhcpEventMessage = 'discover' | 'offer' | 'request' | 'ack' | 'nak' | 'decline' | 'release' | 'inform' | 'ignored';

/** One DHCP message received or sent (RFC 2131), with the client's boot identity (RFC 4578, RFC 3004). */
export interface DhcpBootEvent extends BootEventBase {
  kind: 'dhcp';
  message: DhcpEventMessage;
  mac: string;
  /** Transaction id, to pair a request with its reply. */
  xid?: number;
  /** Client architecture name (`x86_64`, `arm64` …) from option 93 or the vendor class. */
  arch?: string;
  /** The IANA processor architecture type (option 93). */
  archType?: number;
  /** `bios`, `uefi` or `unknown`. */
  firmware?: string;
  /** Option 60, e.g. `PXEClient:Arch:00007:UNDI:003016` or `HTTPClient:Arch:00016`. */
  vendorClass?: string;
  /** First user class (option 77), e.g. `iPXE`. */
  userClass?: string;
  /** The relay address when the message was relayed (RFC 2131 §4.1). */
  giaddr?: string;
  /** The address offered/acknowledged (yiaddr), requested (option 50) or declined. */
  address?: string;
  /** The boot file or URL handed out (`file` / option 67). */
  bootFile?: string;
  /** The UDP port the request arrived on: 67, or 4011 for the PXE boot-server exchange. */
  serverPort?: number;
  /** Why a NAK was sent or a request ignored (the responder's IgnoreReason), or other context. */
  detail?: string;
}

/** Phases of one TFTP read (RFC 1350; options RFC 2347–2349, RFC 7440). */
export type TftpEventPhase = 'rrq' | 'oack' | 'done' | 'error';

/** One step of a TFTP read transfer. */
export interface TftpBootEvent extends BootEventBase {
  kind: 'tftp';
  phase: TftpEventPhase;
  clientAddress: string;
  clientPort?: number;
  /** The file name as requested. */
  file: string;
  /** Options the client asked for (`rrq`) or we acknowledged (`oack`), as sent on the wire. */
  options?: Record<string, string>;
  blockSizeBytes?: number;
  windowSize?: number;
  /** Bytes of file data delivered (`done`, `error`). */
  bytes?: number;
  durationMs?: number;
  /** Blocks sent again after a timeout. */
  retransmits?: number;
  /** TFTP error code (RFC 1350 §5) and message, for `error`. */
  errorCode?: number;
  error?: string;
}

/** One boot HTTP request, reported when its response ended (finished or aborted). */
export interface HttpBootEvent extends BootEventBase {
  kind: 'http';
  method: string;
  /** The request path as received (query string excluded). */
  path: string;
  status: number;
  /** Body bytes written to the socket. */
  bytes: number;
  /** The `Range` header as received, when any. */
  range?: string;
  /** The `Content-Range` sent, when any (206 or 416). */
  contentRange?: string;
  durationMs: number;
  clientAddress: string;
  userAgent?: string;
  /** False when the client went away before the response ended. */
  completed: boolean;
  /** True when the request came over TLS (the boot HTTPS listener, docs/https-boot.md). */
  tls?: boolean;
  /** What the path was served as: `ipxe-script`, `grub-config`, `asset`, `file`, `probe` (fast not-found), `refused` … */
  servedAs?: string;
  /** Why a request was refused (400/403), when it was. */
  detail?: string;
}

/** Kinds of callbacks from the in-ramdisk agent (`/ramdisk/v1/…`). */
export type RamdiskEventType = 'heartbeat' | 'inventory' | 'progress' | 'log' | 'command' | 'error';

/** A callback from the in-ramdisk agent. */
export interface RamdiskBootEvent extends BootEventBase {
  kind: 'ramdisk';
  type: RamdiskEventType;
  mac: string;
  /** Human-readable summary (step name, progress text, error). */
  detail?: string;
  data?: Record<string, unknown>;
}

/** A call the agent made to a host's BMC (power, boot device, virtual media). */
export interface BmcBootEvent extends BootEventBase {
  kind: 'bmc';
  /** Host name (BMC calls are per host; the MAC is filled from the host when known). */
  host: string;
  /** The call, e.g. `power-on`, `set-boot-device pxe`, `insert-media`. */
  call: string;
  ok: boolean;
  durationMs?: number;
  detail?: string;
}

/** Everything the boot services report, discriminated by `kind`. */
export type BootEvent = DhcpBootEvent | TftpBootEvent | HttpBootEvent | RamdiskBootEvent | BmcBootEvent;

/** Receives boot events; called synchronously by the services, must not block. */
export type BootEventListener = (event: BootEvent) => void;

/**
 * Calls `listener` with `event`, swallowing (and returning) anything it throws, so a faulty
 * recorder never breaks a DHCP reply, TFTP transfer or HTTP response.
 */
export function emitBootEvent(listener: BootEventListener | undefined, event: BootEvent): unknown {
  if (listener === undefined) return undefined;
  try {
    listener(event);
    return undefined;
  } catch (err: unknown) {
    return err;
  }
}
