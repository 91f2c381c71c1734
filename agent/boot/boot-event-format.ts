/**
 * @module How a bootsvc {@link BootEvent} reads in the event log: its source
 * (`bootsvc:dhcp`, `bootsvc:tftp`, `bootsvc:http`, `bootsvc:ramdisk`, `bmc`), a CamelCase reason
 * (`DHCPDiscover`, `TFTPTransferDone`, `HTTPRequest` …), Normal or Warning, a one-line message
 * an operator can read on the status page, and the event's fields as `data`.
 * @pure
 */
import type { BootEvent, DhcpEventMessage, RamdiskEventType, TftpEventPhase } from '../../bootsvc/index.js';

/** A boot event as the store keeps it (without seq, time, host). */
export interface FormattedBootEvent {
  source: string;
  reason: string;
  type: 'Normal' | 'Warning';
  message: string;
  data: Record<string, unknown>;
}

const DHCP_REASONS: Readonly<Record<DhcpEventMessage, string>> = {
  discover: 'DHCPDiscover',
  offer: 'DHCPOffer',
  request: 'DHCPRequest',
  ack: 'DHCPAck',
  nak: 'DHCPNak',
  decline: 'DHCPDecline',
  release: 'DHCPRelease',
  inform: 'DHCPInform',
  ignored: 'DHCPIgnored',
};

const TFTP_REASONS: Readonly<Record<TftpEventPhase, string>> = {
  rrq: 'TFTPReadRequest',
  oack: 'TFTPOptionAck',
  done: 'TFTPTransferDone',
  error: 'TFTPTransferError',
};

const RAMDISK_REASONS: Readonly<Record<RamdiskEventType, string>> = {
  heartbeat: 'RamdiskHeartbeat',
  inventory: 'RamdiskInventory',
  progress: 'RamdiskProgress',
  log: 'RamdiskLog',
  command: 'RamdiskCommand',
  error: 'RamdiskError',
};

/** The event's fields without the ones the stored event carries itself. */
/**
 * Boot HTTP prefix of the config drives (agent/provisioner/local/image-prep.ts
 * `CONFIG_DRIVE_MOUNT`; a unit test keeps the two equal). A drive's name is unguessable because
 * boot HTTP hands its user data to whoever names it, so events never carry that part.
 */
export const CONFIG_DRIVE_PREFIX = '/configdrive/';

/**
 * `path` as events show it: a config drive's `/configdrive/<uid>-<random>.img` keeps the host's
 * uid and loses the random part (events are read without a token and pushed to the controller).
 */
export function redactBootPath(path: string): string {
  if (!path.startsWith(CONFIG_DRIVE_PREFIX)) return path;
  const uid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=-)/i.exec(path.slice(CONFIG_DRIVE_PREFIX.length))?.[0];
  return `${CONFIG_DRIVE_PREFIX}${uid === undefined ? '' : `${uid}-`}[redacted]`;
}

function dataOf(event: BootEvent): Record<string, unknown> {
  const { kind: _kind, atMs: _atMs, mac: _mac, ...rest } = event;
  return event.kind === 'http' ? { ...rest, path: redactBootPath(event.path) } : rest;
}

function durationText(ms: number | undefined): string {
  if (ms === undefined) return '';
  return ms < 1000 ? ` in ${Math.round(ms)} ms` : ` in ${(ms / 1000).toFixed(2)} s`;
}

function dhcpMessage(e: Extract<BootEvent, { kind: 'dhcp' }>): string {
  const client = [e.arch === undefined ? undefined : `${e.arch}${e.firmware === undefined || e.firmware === 'unknown' ? '' : ` ${e.firmware.toUpperCase()}`}`, e.vendorClass, e.userClass === undefined ? undefined : `user class ${e.userClass}`, e.giaddr === undefined ? undefined : `via relay ${e.giaddr}`]
    .filter((s): s is string => s !== undefined)
    .join(', ');
  const suffix = client === '' ? '' : ` (${client})`;
  switch (e.message) {
    case 'discover':
    case 'request':
    case 'inform':
    case 'release':
    case 'decline':
      return `DHCP${e.message.toUpperCase()} from ${e.mac}${e.address === undefined ? '' : ` for ${e.address}`}${suffix}`;
    case 'offer':
    case 'ack':
      return `DHCP${e.message.toUpperCase()} ${e.address ?? '(no address)'} to ${e.mac}${e.bootFile === undefined ? ', no boot file' : `, boot file ${e.bootFile}`}`;
    case 'nak':
      return `DHCPNAK to ${e.mac}${e.detail === undefined ? '' : `: ${e.detail}`}`;
    case 'ignored':
      return `ignored a DHCP request from ${e.mac}${e.detail === undefined ? '' : `: ${e.detail}`}${suffix}`;
  }
}

function tftpMessage(e: Extract<BootEvent, { kind: 'tftp' }>): string {
  switch (e.phase) {
    case 'rrq': {
      const opts = e.options === undefined ? '' : ` (${Object.entries(e.options).map(([k, v]) => `${k} ${v}`).join(', ')})`;
      return `TFTP read request for ${e.file} from ${e.clientAddress}${opts}`;
    }
    case 'oack':
      return `TFTP options acknowledged for ${e.file}${e.blockSizeBytes === undefined ? '' : `: blksize ${e.blockSizeBytes}`}${e.windowSize === undefined ? '' : `, windowsize ${e.windowSize}`}`;
    case 'done':
      return `TFTP sent ${e.file} (${e.bytes ?? 0} bytes${durationText(e.durationMs)}${e.retransmits ? `, ${e.retransmits} retransmits` : ''})`;
    case 'error':
      return `TFTP transfer of ${e.file} failed${e.errorCode === undefined ? '' : ` (code ${e.errorCode})`}: ${e.error ?? 'unknown error'}`;
  }
}

/** Maps a boot event to the stored form (see the module comment). */
export function formatBootEvent(event: BootEvent): FormattedBootEvent {
  const data = dataOf(event);
  switch (event.kind) {
    case 'dhcp': {
      const warn = event.message === 'nak' || event.message === 'decline';
      return { source: 'bootsvc:dhcp', reason: DHCP_REASONS[event.message], type: warn ? 'Warning' : 'Normal', message: dhcpMessage(event), data };
    }
    case 'tftp':
      return { source: 'bootsvc:tftp', reason: TFTP_REASONS[event.phase], type: event.phase === 'error' ? 'Warning' : 'Normal', message: tftpMessage(event), data };
    case 'http': {
      const expectedMiss = event.servedAs === 'probe';
      const warn = !event.completed || (event.status >= 400 && !expectedMiss);
      const range = event.range === undefined ? '' : `, range ${event.range}`;
      const aborted = event.completed ? '' : ', aborted by the client';
      // `over TLS`: the status page's timeline shows which boots came over boot HTTPS (docs/https-boot.md).
      const tls = event.tls === true ? ' over TLS' : '';
      const message = `${event.method} ${redactBootPath(event.path)}${tls} → ${event.status} (${event.bytes} bytes${range}${aborted})${durationText(event.durationMs)}${event.detail === undefined ? '' : `: ${event.detail}`}`;
      return { source: 'bootsvc:http', reason: 'HTTPRequest', type: warn ? 'Warning' : 'Normal', message, data };
    }
    case 'ramdisk':
      return { source: 'bootsvc:ramdisk', reason: RAMDISK_REASONS[event.type], type: event.type === 'error' ? 'Warning' : 'Normal', message: `ramdisk ${event.type}${event.detail === undefined ? '' : `: ${event.detail}`}`, data };
    case 'bmc':
      return { source: 'bmc', reason: event.ok ? 'BMCCall' : 'BMCCallFailed', type: event.ok ? 'Normal' : 'Warning', message: `BMC ${event.call} ${event.ok ? 'ok' : 'failed'}${durationText(event.durationMs)}${event.detail === undefined ? '' : `: ${event.detail}`}`, data };
  }
}
