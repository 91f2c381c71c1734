/**
 * @module The boot timeline model: flight-recorder and host events (StoredEvent) sorted into
 * swimlanes — DHCP → TFTP → HTTP → ramdisk → BMC → controller — as point marks plus spans with
 * durations (DHCP discover→ACK, TFTP transfers, HTTP responses, ramdisk uptime, BMC calls,
 * controller provisioning states). Lanes are chosen by the event `source` the flight recorder
 * writes (agent/boot/boot-event-format.ts: `bootsvc:dhcp`, `bootsvc:tftp`, `bootsvc:http`,
 * `bootsvc:ramdisk`, `bmc`); everything else (the host controller) is the controller lane.
 * @pure
 */
import type { StoredEvent } from '../../store/types.js';
import { parseTimeMs } from './host-model.js';

/** Swimlane ids, top to bottom in boot order. */
export type LaneId = 'dhcp' | 'tftp' | 'http' | 'ramdisk' | 'bmc' | 'controller';

/** The lanes in drawing order with their labels. */
export const TIMELINE_LANES: readonly { id: LaneId; label: string }[] = [
  { id: 'dhcp', label: 'DHCP' },
  { id: 'tftp', label: 'TFTP' },
  { id: 'http', label: 'HTTP' },
  { id: 'ramdisk', label: 'Ramdisk' },
  { id: 'bmc', label: 'BMC' },
  { id: 'controller', label: 'Controller' },
];

/** One event drawn as a point. */
export interface TimelineMark {
  seq: number;
  lane: LaneId;
  atMs: number;
  reason: string;
  message: string;
  warning: boolean;
}

/** An interval drawn as a bar. `open` spans are still running at `nowMs`. */
export interface TimelineSpan {
  lane: LaneId;
  startMs: number;
  endMs: number;
  label: string;
  warning: boolean;
  open: boolean;
}

/** Marks and spans of one host or MAC, oldest first; `startMs`/`endMs` bound all of them. */
export interface TimelineModel {
  marks: TimelineMark[];
  spans: TimelineSpan[];
  startMs: number;
  endMs: number;
}

/** Gap after which consecutive ramdisk callbacks count as separate ramdisk sessions. */
const RAMDISK_SESSION_GAP_MS = 120_000;

/** The lane of an event, by its source (and `BMC…`/power reasons of the controller). */
export function laneOf(event: Pick<StoredEvent, 'source' | 'reason'>): LaneId {
  const source = event.source.toLowerCase();
  if (source === 'bootsvc:dhcp' || source === 'dhcp') return 'dhcp';
  if (source === 'bootsvc:tftp' || source === 'tftp') return 'tftp';
  if (source === 'bootsvc:http' || source === 'http') return 'http';
  if (source.includes('ramdisk')) return 'ramdisk';
  if (source === 'bmc' || source.startsWith('bmc:') || source === 'bootsvc:bmc') return 'bmc';
  if (event.reason.startsWith('BMC') || event.reason === 'PowerManagementError') return 'bmc';
  return 'controller';
}

/** A number field of `data`, or undefined. */
export function dataNumber(event: StoredEvent, key: string): number | undefined {
  const value = event.data?.[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string field of `data`, or undefined. */
export function dataString(event: StoredEvent, key: string): string | undefined {
  const value = event.data?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** The last path segment of a file name or URL path (`/boot/vmlinuz` → `vmlinuz`). */
export function baseName(path: string): string {
  const trimmed = path.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1) || path;
}

interface Timed {
  event: StoredEvent;
  atMs: number;
}

/** Spans of events that carry their own `durationMs` (TFTP done/error, HTTP, BMC calls). */
function durationSpans(items: readonly Timed[]): TimelineSpan[] {
  const spans: TimelineSpan[] = [];
  for (const { event, atMs } of items) {
    const lane = laneOf(event);
    const durationMs = dataNumber(event, 'durationMs');
    if (durationMs === undefined || durationMs < 0 || (lane !== 'tftp' && lane !== 'http' && lane !== 'bmc')) continue;
    const name = lane === 'tftp' ? dataString(event, 'file') : lane === 'http' ? dataString(event, 'path') : dataString(event, 'call');
    spans.push({ lane, startMs: atMs - durationMs, endMs: atMs, label: name === undefined ? event.reason : lane === 'bmc' ? name : baseName(name), warning: event.type === 'Warning', open: false });
  }
  return spans;
}

/** DHCP exchanges: a DISCOVER (or REQUEST) to the ACK/NAK of the same transaction id. */
function dhcpSpans(items: readonly Timed[]): TimelineSpan[] {
  const spans: TimelineSpan[] = [];
  const started = new Map<string, number>();
  for (const { event, atMs } of items) {
    if (laneOf(event) !== 'dhcp') continue;
    const key = String(dataNumber(event, 'xid') ?? event.mac ?? '');
    if (event.reason === 'DHCPDiscover' || (event.reason === 'DHCPRequest' && !started.has(key))) started.set(key, atMs);
    if (event.reason === 'DHCPAck' || event.reason === 'DHCPNak') {
      const startMs = started.get(key);
      if (startMs === undefined) continue;
      started.delete(key);
      const address = dataString(event, 'address');
      const label = event.reason === 'DHCPNak' ? 'NAK' : address === undefined ? 'lease' : `lease ${address}`;
      spans.push({ lane: 'dhcp', startMs, endMs: atMs, label, warning: event.reason === 'DHCPNak', open: false });
    }
  }
  return spans;
}

/** Ramdisk sessions: runs of ramdisk callbacks with no gap longer than two minutes. */
function ramdiskSpans(items: readonly Timed[]): TimelineSpan[] {
  const spans: TimelineSpan[] = [];
  let current: TimelineSpan | undefined;
  for (const { event, atMs } of items) {
    if (laneOf(event) !== 'ramdisk') continue;
    if (current !== undefined && atMs - current.endMs <= RAMDISK_SESSION_GAP_MS) {
      current.endMs = atMs;
      current.warning ||= event.type === 'Warning';
      continue;
    }
    current = { lane: 'ramdisk', startMs: atMs, endMs: atMs, label: 'ramdisk up', warning: event.type === 'Warning', open: false };
    spans.push(current);
  }
  return spans.filter((s) => s.endMs > s.startMs);
}

/** The target state of a `ProvisioningStateChanged` event (`"available → provisioning"`). */
export function stateChangeTarget(event: StoredEvent): string | undefined {
  if (event.reason !== 'ProvisioningStateChanged') return undefined;
  const to = dataString(event, 'to');
  if (to !== undefined) return to;
  const parts = event.message.split('→');
  return parts.length > 1 ? (parts[parts.length - 1] ?? '').trim() : undefined;
}

/** Controller spans: each provisioning state from its change event to the next one (the last is open until `nowMs`). */
function controllerSpans(items: readonly Timed[], nowMs: number): TimelineSpan[] {
  const changes = items.flatMap(({ event, atMs }) => {
    const to = stateChangeTarget(event);
    return to === undefined ? [] : [{ to, atMs }];
  });
  return changes.map((change, i) => {
    const next = changes[i + 1];
    const endMs = next?.atMs ?? Math.max(nowMs, change.atMs);
    return { lane: 'controller', startMs: change.atMs, endMs, label: change.to === '' ? 'new' : change.to, warning: false, open: next === undefined };
  });
}

/** Builds the timeline of `events` (any order; duplicates by `seq` kept once) as seen at `nowMs`. */
export function buildTimeline(events: readonly StoredEvent[], nowMs: number): TimelineModel {
  const bySeq = new Map<number, StoredEvent>();
  for (const e of events) bySeq.set(e.seq, e);
  const items: Timed[] = [...bySeq.values()]
    .flatMap((event) => {
      const atMs = parseTimeMs(event.time);
      return atMs === undefined ? [] : [{ event, atMs }];
    })
    .sort((a, b) => a.atMs - b.atMs || a.event.seq - b.event.seq);
  const marks: TimelineMark[] = items.map(({ event, atMs }) => ({
    seq: event.seq, lane: laneOf(event), atMs, reason: event.reason, message: event.message, warning: event.type === 'Warning',
  }));
  const spans = [...dhcpSpans(items), ...durationSpans(items), ...ramdiskSpans(items), ...controllerSpans(items, nowMs)];
  const times = [...marks.map((m) => m.atMs), ...spans.flatMap((s) => [s.startMs, s.endMs])];
  const startMs = times.length === 0 ? nowMs : Math.min(...times);
  const endMs = times.length === 0 ? nowMs : Math.max(...times);
  return { marks, spans, startMs, endMs };
}
