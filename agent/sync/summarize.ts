/**
 * @module Turns a BareMetalHost and a stored event into their wire summaries. Fields are picked
 * one by one (an allow-list), so credentials, `userData`/`networkData`/`metaData` references, BMC
 * addresses, event `data` and annotations can never leak; image URLs lose user-info, query
 * (pre-signed URL signatures) and fragment. Free text is cut to {@link WIRE_LIMITS}.
 * @pure
 */
import type { BareMetalHost, HardwareDetails, OperationHistory } from '../host/types.js';
import type { StoredEvent } from '../store/types.js';
import {
  OPERATION_NAMES,
  WIRE_LIMITS,
  type EventSummary,
  type HardwareSummary,
  type HostSummary,
  type OperationSummary,
} from '../../wire/index.js';

/** Cuts `text` to at most `max` characters, marking a cut with `…`. */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** URL schemes an image can have (metal3: http/https, `oci://` references, `file://` on the head node). */
const IMAGE_URL_SCHEMES = new Set(['http:', 'https:', 'oci:', 'file:']);

/**
 * The image URL as it may leave the rack: user-info, query and fragment removed; `null` for an
 * empty, unparsable or unknown-scheme URL (such a string could hold anything, so it is not sent).
 */
export function sanitizeImageUrl(url: string | undefined): string | null {
  if (url === undefined || url === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!IMAGE_URL_SCHEMES.has(parsed.protocol)) return null;
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  const clean = parsed.toString();
  return clean.length > WIRE_LIMITS.url ? null : clean;
}

/** Hardware in numbers, or null before the host was inspected. */
export function summarizeHardware(hardware: HardwareDetails | undefined): HardwareSummary | null {
  if (hardware === undefined) return null;
  const disks = hardware.storage ?? [];
  const short = (s: string | undefined) => (s === undefined || s === '' ? null : truncateText(s, WIRE_LIMITS.name));
  const whole = (n: number | undefined) => (n === undefined || !Number.isSafeInteger(n) || n < 0 ? null : n);
  return {
    cpuArch: hardware.cpu.arch === undefined || hardware.cpu.arch === '' ? null : truncateText(hardware.cpu.arch, 64),
    cpuCount: whole(hardware.cpu.count),
    ramMebibytes: whole(hardware.ramMebibytes),
    diskCount: disks.length,
    diskTotalBytes: disks.reduce((sum, d) => sum + (whole(d.sizeBytes) ?? 0), 0),
    nicCount: hardware.nics?.length ?? 0,
    manufacturer: short(hardware.systemVendor.manufacturer),
    productName: short(hardware.systemVendor.productName),
  };
}

/** Normalizes a timestamp to the wire's RFC 3339 form, or null when empty or unparsable. */
function wireTime(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** The most recently started operation of `history` with its duration; null if none has started. */
export function summarizeLastOperation(history: OperationHistory | undefined): OperationSummary | null {
  if (history === undefined) return null;
  let best: OperationSummary | null = null;
  let bestStartMs = -Infinity;
  for (const name of OPERATION_NAMES) {
    const metric = history[name] as OperationHistory[typeof name] | undefined;
    const start = wireTime(metric?.start);
    if (start === null) continue;
    const startMs = Date.parse(start);
    if (startMs <= bestStartMs) continue;
    const end = wireTime(metric?.end);
    const endMs = end === null ? NaN : Date.parse(end);
    const finished = end !== null && endMs >= startMs;
    best = { name, start, end: finished ? end : null, durationSeconds: finished ? (endMs - startMs) / 1000 : null };
    bestStartMs = startMs;
  }
  return best;
}

/** The host's wire summary (allow-listed fields only; see the module comment). */
export function summarizeHost(host: BareMetalHost): HostSummary {
  const { metadata, spec, status } = host;
  const provisionedUrl = status.provisioning.image.url;
  return {
    name: truncateText(metadata.name, WIRE_LIMITS.name),
    namespace: truncateText(metadata.namespace, WIRE_LIMITS.name),
    uid: truncateText(metadata.uid, WIRE_LIMITS.name),
    resourceVersion: truncateText(metadata.resourceVersion, 32),
    state: status.provisioning.state,
    operationalStatus: status.operationalStatus,
    poweredOn: status.poweredOn,
    online: spec.online,
    errorType: status.errorType ?? '',
    errorMessage: truncateText(status.errorMessage, WIRE_LIMITS.text),
    errorCount: Number.isSafeInteger(status.errorCount) && status.errorCount >= 0 ? status.errorCount : 0,
    hardware: summarizeHardware(status.hardware),
    lastOperation: summarizeLastOperation(status.operationHistory),
    imageUrl: sanitizeImageUrl(provisionedUrl === '' ? spec.image?.url : provisionedUrl),
    deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== '',
    lastUpdated: wireTime(status.lastUpdated),
  };
}

/** The event's wire summary: everything but the free-form `data`, texts cut to the wire limits. */
export function summarizeEvent(event: StoredEvent): EventSummary {
  return {
    seq: event.seq,
    time: wireTime(event.time) ?? '1970-01-01T00:00:00.000Z',
    type: event.type,
    reason: truncateText(event.reason, WIRE_LIMITS.name),
    message: truncateText(event.message, WIRE_LIMITS.text),
    host: event.host === undefined ? null : truncateText(event.host, WIRE_LIMITS.name),
    mac: event.mac === undefined ? null : truncateText(event.mac, 64),
    source: truncateText(event.source, WIRE_LIMITS.name),
  };
}

/**
 * The default event filter: events about a host, and every Warning. Per-packet flight-recorder
 * entries without a host stay on the rack.
 */
export function isSyncedEvent(event: StoredEvent): boolean {
  return event.host !== undefined || event.type === 'Warning';
}
