/**
 * @module The flight recorder (docs/architecture.md, "Boot flow" step 6): turns bootsvc's typed {@link BootEvent}s
 * into stored events — `mac` (lower-case), `host` (the host whose `spec.bootMACAddress` it is),
 * `source`/`reason`/`message`/`data` from boot-event-format.ts — so the status page and
 * `GET /api/v1/boot/<mac>/timeline` can say why a host is stuck.
 *
 * - **MACs for address-only events** (TFTP, most HTTP): learned from DHCP ACKs (yiaddr → MAC) and
 *   from HTTP requests that name a MAC, kept in a bounded most-recently-used map.
 * - **Rate limits** so a DHCP storm or a looping client cannot flood the capped log: a token
 *   bucket per client (MAC, else address) and one global bucket. Dropped events are counted and
 *   summarized in one `BootEventsSuppressed` warning once the client's bucket refills.
 * - **Repeats**: the same request failing the same way again (a 404 loop) is stored once, then
 *   summarized by `BootFailureRepeated` events as the run grows (repeated-failures.ts).
 * - **Batching**: `record()` is synchronous and cheap; events are appended in batches shortly
 *   after (one `appendEvents` per batch). A store failure is logged and the batch dropped: the
 *   recorder is diagnostics and never blocks or breaks the boot services.
 */
import { hostMacIndex } from '../store/host-mac-index.js';
import type { BootEvent } from '../../bootsvc/index.js';
import type { Logger } from '../log.js';
import type { StoredEvent, Store } from '../store/types.js';
import { formatBootEvent } from './boot-event-format.js';
import { outcomeOf, RepeatTracker, repeatedFailureMessage } from './repeated-failures.js';

/** The store methods the recorder uses. */
export type FlightRecorderStore = Pick<Store, 'appendEvents' | 'hostSnapshot'>;

/** Options of {@link FlightRecorder}. */
export interface FlightRecorderOptions {
  store: FlightRecorderStore;
  /** Events one client may burst (default 120) and its steady rate per second (default 10). */
  perClientBurst?: number;
  perClientPerSecond?: number;
  /** The same for all clients together (defaults 1000 and 200). */
  globalBurst?: number;
  globalPerSecond?: number;
  /** Clients (buckets, address → MAC entries) remembered at most (default 4096). */
  maxTrackedClients?: number;
  /** Events waiting for the store at most; beyond that they are dropped and counted (default 10000). */
  maxPending?: number;
  /** Identical failures of one request in a row that make a `BootFailureRepeated` summary (default 3). */
  repeatThreshold?: number;
  /** Batch window (default 50 ms). */
  flushDelayMs?: number;
  nowMs?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

/** Counters since start. */
export interface FlightRecorderStats {
  recorded: number;
  suppressed: number;
  /** Dropped because the pending queue was full. */
  overflowed: number;
  /** Lost to store failures. */
  failed: number;
  /** Identical repeated failures not stored one by one (summarized by `BootFailureRepeated`). */
  repeated: number;
  pending: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
  suppressed: number;
}

type PendingEvent = Omit<StoredEvent, 'seq' | 'host'> & { host?: string };

/** Events stored per `appendEvents` call (each call is synchronous work on the event loop until the store's write). */
const WRITE_SLICE = 50;

/** A bounded map that forgets the least recently used entry first. */
class RecentMap<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) this.map.delete(oldest.value);
    }
  }
}

/** Records boot events into the store's event log (see the module comment). */
export class FlightRecorder {
  private readonly store: FlightRecorderStore;
  private readonly nowMs: () => number;
  private readonly buckets: RecentMap<Bucket>;
  private readonly macByAddress: RecentMap<string>;
  private readonly global: Bucket;
  private readonly options: FlightRecorderOptions;
  private pending: PendingEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly counters = { recorded: 0, suppressed: 0, overflowed: 0, failed: 0, repeated: 0 };
  private readonly repeats: RepeatTracker;
  private closed = false;

  constructor(options: FlightRecorderOptions) {
    this.options = options;
    this.store = options.store;
    this.nowMs = options.nowMs ?? Date.now;
    const max = options.maxTrackedClients ?? 4096;
    this.buckets = new RecentMap(max);
    this.macByAddress = new RecentMap(max);
    this.repeats = new RepeatTracker(options.repeatThreshold ?? 3, max);
    this.global = { tokens: options.globalBurst ?? 1000, updatedMs: this.nowMs(), suppressed: 0 };
  }

  /** Takes one event (never throws, never blocks); it is stored with the next batch unless rate-limited. */
  record(event: BootEvent): void {
    if (this.closed) return;
    const now = this.nowMs();
    const mac = this.macOf(event);
    const key = mac ?? (event.clientAddress === undefined || event.clientAddress === '' ? (event.kind === 'bmc' ? `host:${event.host}` : 'unknown') : `ip:${event.clientAddress}`);
    if (this.collapseRepeat(event, mac, key, now)) return;
    const bucket = this.bucketFor(key, now);
    // The client's own bucket first, so one storming client cannot drain the global budget.
    if (!this.take(bucket, now, this.options.perClientBurst ?? 120, this.options.perClientPerSecond ?? 10)) {
      bucket.suppressed += 1;
      this.counters.suppressed += 1;
      return;
    }
    if (!this.take(this.global, now, this.options.globalBurst ?? 1000, this.options.globalPerSecond ?? 200)) {
      bucket.suppressed += 1;
      this.counters.suppressed += 1;
      return;
    }
    const time = new Date(event.atMs ?? now).toISOString();
    if (bucket.suppressed > 0) {
      this.enqueue({
        time,
        type: 'Warning',
        reason: 'BootEventsSuppressed',
        message: `${bucket.suppressed} boot events from ${mac ?? key} were not recorded (rate limit)`,
        source: 'flight-recorder',
        data: { suppressed: bucket.suppressed },
        ...(mac === undefined ? {} : { mac }),
      });
      bucket.suppressed = 0;
    }
    const formatted = formatBootEvent(mac !== undefined && event.mac !== undefined ? { ...event, mac } : event);
    this.enqueue({
      time,
      type: formatted.type,
      reason: formatted.reason,
      message: formatted.message,
      source: formatted.source,
      data: formatted.data,
      ...(mac === undefined ? {} : { mac }),
      ...(event.kind === 'bmc' ? { host: event.host } : {}),
    });
  }

  /** True when `event` repeats its request's last failure: not stored, but summarized when the run reaches a report point. */
  private collapseRepeat(event: BootEvent, mac: string | undefined, key: string, now: number): boolean {
    const outcome = outcomeOf(event);
    if (outcome === undefined) return false;
    const verdict = this.repeats.observe(key, outcome, event.atMs ?? now);
    if (verdict.store) return false;
    this.counters.repeated += 1;
    const summary = verdict.summary;
    if (summary !== undefined) {
      this.enqueue({
        time: new Date(event.atMs ?? now).toISOString(), type: 'Warning', reason: 'BootFailureRepeated', message: repeatedFailureMessage(summary),
        source: 'flight-recorder', data: { request: summary.request, failure: summary.failure, count: summary.count, firstTime: new Date(summary.firstMs).toISOString() },
        ...(mac === undefined ? {} : { mac }),
      });
    }
    return true;
  }

  /** Stores everything recorded so far; resolves when the store has it (or failed). */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(() => (batch.length === 0 ? undefined : this.write(batch)));
    return this.flushing;
  }

  /** Counters since start. */
  stats(): FlightRecorderStats {
    return { ...this.counters, pending: this.pending.length };
  }

  /** Stores what is pending and stops recording. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** The event's MAC: its own, else learned for its client address. Learns address → MAC pairs on the way. */
  private macOf(event: BootEvent): string | undefined {
    const own = event.mac === undefined || event.mac === '' ? undefined : event.mac.toLowerCase();
    if (event.kind === 'dhcp' && event.message === 'ack' && own !== undefined && event.address !== undefined) this.macByAddress.set(event.address, own);
    if (own !== undefined) {
      if (event.kind === 'http' && event.clientAddress !== '') this.macByAddress.set(event.clientAddress, own);
      return own;
    }
    return event.clientAddress === undefined ? undefined : this.macByAddress.get(event.clientAddress);
  }

  private bucketFor(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.options.perClientBurst ?? 120, updatedMs: now, suppressed: 0 };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Token bucket: refills `perSecond` per second up to `burst`; true when a token was taken. */
  private take(bucket: Bucket, now: number, burst: number, perSecond: number): boolean {
    const elapsedMs = Math.max(0, now - bucket.updatedMs);
    bucket.tokens = Math.min(burst, bucket.tokens + (elapsedMs * perSecond) / 1000);
    bucket.updatedMs = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  private enqueue(event: PendingEvent): void {
    if (this.pending.length >= (this.options.maxPending ?? 10_000)) {
      this.counters.overflowed += 1;
      return;
    }
    this.pending.push(event);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.flushDelayMs ?? 50);
  }

  /**
   * Stores `batch` in slices of {@link WRITE_SLICE} events, one `appendEvents` each: a storm's
   * first batch holds up to the global burst (1000 events), whose numbering, redaction and
   * encoding in one call held the event loop for tens of milliseconds.
   */
  private async write(batch: PendingEvent[]): Promise<void> {
    for (let i = 0; i < batch.length; i += WRITE_SLICE) await this.writeSlice(batch.slice(i, i + WRITE_SLICE));
  }

  private async writeSlice(batch: PendingEvent[]): Promise<void> {
    try {
      const { byMac, macByName } = hostMacIndex(await this.store.hostSnapshot());
      const events = batch.map((e) => {
        const host = e.host ?? (e.mac === undefined ? undefined : byMac.get(e.mac)?.metadata.name);
        const mac = e.mac ?? (e.host === undefined ? undefined : macByName.get(e.host));
        return { ...e, ...(host === undefined ? {} : { host }), ...(mac === undefined ? {} : { mac }) };
      });
      await this.store.appendEvents(events);
      this.counters.recorded += events.length;
    } catch (err) {
      this.counters.failed += batch.length;
      this.options.logger?.warn({ err, events: batch.length }, 'flight recorder: could not store boot events');
    }
  }
}

/** Creates a {@link FlightRecorder}; wire `recorder.record` as the boot services' `onEvent`. */
export function createFlightRecorder(options: FlightRecorderOptions): FlightRecorder {
  return new FlightRecorder(options);
}
