/**
 * @module How a host last booted, by transport: whether the files its firmware fetched came over
 * boot HTTPS, plain HTTP or TFTP, and whether its ramdisk then called the agent over TLS
 * (docs/https-boot.md). Folded from the flight recorder's stored events
 * (agent/boot/boot-event-format.ts: `bootsvc:http` data carries `method`, `path`, `status`,
 * `completed` and `tls`; `bootsvc:tftp` data carries `phase` and `file`). Shared by the agent's
 * index behind `GET /api/v1/boot/transports` (agent/boot/boot-transports.ts), the status page and
 * the unit tests.
 * @pure
 */
import type { StoredEvent } from '../../store/types.js';

/** How bytes reached the host. */
export type BootTransport = 'https' | 'http' | 'tftp';

/** One fetch that tells the transport: the path (redacted as stored) and when it finished. */
export interface BootTransportStep {
  transport: BootTransport;
  path: string;
  /** RFC 3339 time of the event. */
  at: string;
}

/** What is known about one MAC's last boot. */
export interface HostBootTransport {
  /** Lower-case colon MAC. */
  mac: string;
  /** Host name when the MAC is a host's boot MAC. */
  host?: string;
  /** The last file of the boot chain the firmware or a boot loader fetched (script, loader, kernel, unified image, initrd). */
  boot?: BootTransportStep;
  /** The last call of the ramdisk to the agent (`/ramdisk/v1/…`) or OS image read, when any. */
  ramdisk?: BootTransportStep;
}

/**
 * Paths the running ramdisk fetches or posts, not the firmware's boot chain: its API, the host's
 * config drive (user data) and cached OS images (agent/boot/boot-event-format.ts, image-prep.ts).
 */
const RAMDISK_PREFIXES = ['/ramdisk/v1/', '/configdrive/', '/images/'];

/** Which part of a boot a stored event is, or undefined when it tells nothing about transport. */
export function bootTransportStep(event: Pick<StoredEvent, 'source' | 'time' | 'data'>): { part: 'boot' | 'ramdisk'; step: BootTransportStep } | undefined {
  const data = event.data ?? {};
  if (event.source === 'bootsvc:tftp') {
    if (data.phase !== 'done' || typeof data.file !== 'string') return undefined;
    return { part: 'boot', step: { transport: 'tftp', path: data.file, at: event.time } };
  }
  if (event.source !== 'bootsvc:http') return undefined;
  const { path, status, method } = data;
  if (typeof path !== 'string' || typeof status !== 'number' || data.completed !== true) return undefined;
  // A refused, missing or HEAD request moved nothing the host booted.
  if (status >= 300 || (method !== 'GET' && method !== 'POST' && method !== 'PUT')) return undefined;
  const step: BootTransportStep = { transport: data.tls === true ? 'https' : 'http', path, at: event.time };
  if (RAMDISK_PREFIXES.some((prefix) => path.startsWith(prefix))) return { part: 'ramdisk', step };
  return method === 'GET' ? { part: 'boot', step } : undefined;
}

/**
 * Folds one event into a MAC's record (a new object when it changed, the same one otherwise).
 * A new boot chain forgets the previous boot's ramdisk calls, so `ramdisk` is always about the
 * ramdisk the last boot started.
 */
export function foldBootTransport(record: HostBootTransport, event: Pick<StoredEvent, 'source' | 'time' | 'data' | 'host'>): HostBootTransport {
  const found = bootTransportStep(event);
  if (found === undefined) return record;
  const host = event.host ?? record.host;
  const base: HostBootTransport = { mac: record.mac, ...(host === undefined ? {} : { host }) };
  if (found.part === 'ramdisk') return { ...base, ...(record.boot === undefined ? {} : { boot: record.boot }), ramdisk: found.step };
  // Another file of the same chain (kernel after script) keeps the ramdisk record only if it is newer.
  const keepRamdisk = record.ramdisk !== undefined && record.ramdisk.at > found.step.at;
  return { ...base, boot: found.step, ...(keepRamdisk && record.ramdisk !== undefined ? { ramdisk: record.ramdisk } : {}) };
}

/** Summary for a badge: `https` only when the boot chain and (when it has called) the ramdisk were both over TLS. */
export interface BootTransportSummary {
  /** `https`, `http`, `tftp`, `mixed` (HTTPS boot, plain ramdisk calls) or `unknown` (nothing recorded). */
  kind: BootTransport | 'mixed' | 'unknown';
  /** Short badge text (`HTTPS`, `HTTP`, `TFTP + HTTP` …). */
  label: string;
  /** One sentence for a tooltip or the host view. */
  detail: string;
}

/** The summary of a record (see {@link BootTransportSummary}). */
export function summarizeBootTransport(record: HostBootTransport | undefined): BootTransportSummary {
  const boot = record?.boot;
  if (boot === undefined) return { kind: 'unknown', label: 'boot: ?', detail: 'No boot recorded since the oldest event the agent keeps.' };
  const ramdisk = record?.ramdisk;
  const bootText = `last boot fetched ${boot.path} over ${boot.transport.toUpperCase()}`;
  const ramdiskText = ramdisk === undefined ? '' : `; its ramdisk called ${ramdisk.path} over ${ramdisk.transport.toUpperCase()}`;
  const detail = `${bootText[0]?.toUpperCase() ?? ''}${bootText.slice(1)}${ramdiskText}.`;
  if (boot.transport === 'https' && ramdisk !== undefined && ramdisk.transport !== 'https') return { kind: 'mixed', label: 'HTTPS boot, clear callbacks', detail };
  return { kind: boot.transport, label: boot.transport === 'https' ? 'HTTPS' : boot.transport.toUpperCase(), detail };
}
