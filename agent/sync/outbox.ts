/**
 * @module The durable outbox of controller sync (docs/architecture.md, "Store": sublevel `outbox`): what the
 * controller has not acknowledged yet, kept across restarts.
 *
 * Keys of the `outbox` KeyValue (every put synced by the store):
 * - `state` — `{ streamId, lastSequence, eventCursor, lastAck? }`: the stream id, the last
 *   sequence handed out (persisted *before* the batch that uses it, so a sequence is never
 *   reused), the highest event seq already taken in, and the last acknowledgement;
 * - `host/<name>` — `{ summary }` or `{ deleted: { namespace, name } }`: one key per host, so a
 *   newer summary overwrites an older one (coalescing: the latest summary per host wins).
 *   Summaries from the periodic full resync stay in memory (each synced put costs an fsync,
 *   and the resync runs again at every start); changes and deletions are written;
 * - `event/<seq, 16 digits>` — one event summary each, appended in seq order (capped);
 * - `inflight` — `{ request, hostDigests }`: the batch being delivered. It is frozen: every retry,
 *   also after a restart, resends the same body with the same sequence until acknowledged.
 *
 * On acknowledgement one synced batch deletes the batch's events, each host key that still holds
 * exactly what was sent (a newer summary stays for the next batch), and `inflight`, and records
 * the acknowledgement: a crash before that write repeats the acknowledged batch once, which the
 * controller dedupes by its idempotency key; there is no half-acknowledged state.
 */
import type { KeyValue, KeyValueOperation } from '../store/types.js';
import {
  decodePushRequest,
  readEventSummary,
  readHostRef,
  readHostSummary,
  type BootServiceHealth,
  type CommandResult,
  type EventSummary,
  type HostRef,
  type HostSummary,
  type PushRequest,
  WireReader,
} from '../../wire/index.js';


/** Backlog events kept before the oldest are dropped (events are diagnostics; host summaries are never dropped). */
export const DEFAULT_MAX_BACKLOG_EVENTS = 10_000;

/** Options of {@link Outbox.open}. */
export interface OutboxOptions {
  /** The store's `outbox` KeyValue. */
  kv: KeyValue<unknown>;
  /** Makes the stream id the first time the outbox is created (e.g. `crypto.randomUUID`). */
  newStreamId: () => string;
  /** Backlog event cap (default {@link DEFAULT_MAX_BACKLOG_EVENTS}). */
  maxBacklogEvents?: number;
  /** Told about each unreadable record found on open; the record is deleted. */
  onCorrupt?: (key: string, error: unknown) => void;
}

/** What goes into a new batch besides the backlog. */
export interface BatchInput {
  agentId: string;
  rack?: string;
  /** RFC 3339 time of building the batch. */
  sentAt: string;
  maxHosts: number;
  maxEvents: number;
  bootServices?: Record<string, BootServiceHealth>;
  /** Wire version of the batch (default 1); 2 carries the fields below. */
  version?: 1 | 2;
  /** Version 2: command outcomes to report (frozen with the batch). */
  commandResults?: CommandResult[];
  statusUrl?: string;
  agentVersion?: string;
}

type HostEntry = { summary: HostSummary } | { deleted: HostRef };
interface Pending {
  entry: HostEntry;
  json: string;
  /** Written to the KeyValue (false: memory only, rebuilt by the full resync after a restart). */
  durable: boolean;
}
interface Inflight {
  request: PushRequest;
  hostDigests: Record<string, string>;
}

const STATE_KEY = 'state';
const INFLIGHT_KEY = 'inflight';
const HOST_PREFIX = 'host/';
const EVENT_PREFIX = 'event/';
/** Keys of the command ledger (agent/sync/command-ledger.ts), which shares this sublevel. */
const LEDGER_PREFIX = 'command/';

function eventKey(seq: number): string {
  return `${EVENT_PREFIX}${String(seq).padStart(16, '0')}`;
}

function readEntry(r: WireReader, value: unknown): HostEntry {
  const o = r.object('', value);
  if (o.summary !== undefined) return { summary: readHostSummary(r, 'summary', o.summary) };
  return { deleted: readHostRef(r, 'deleted', o.deleted) };
}

function readInflight(r: WireReader, value: unknown): Inflight {
  const o = r.object('', value);
  const digests = r.object('hostDigests', o.hostDigests);
  const hostDigests: Record<string, string> = {};
  for (const [name, json] of Object.entries(digests)) hostDigests[name] = r.string(`hostDigests.${name}`, json, 1_000_000);
  return { request: decodePushRequest(o.request), hostDigests };
}

/** The durable, coalescing outbox (see the module comment for the record layout). All methods are serialized. */
export class Outbox {
  readonly #kv: KeyValue<unknown>;
  readonly #maxEvents: number;
  readonly #hosts = new Map<string, Pending>();
  readonly #events = new Map<number, EventSummary>();
  #streamId = '';
  #lastSequence = 0;
  #eventCursor = 0;
  #droppedEvents = 0;
  #inflight: Inflight | undefined;
  #lastAck: { sequence: number; at: string } | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(kv: KeyValue<unknown>, maxEvents: number) {
    this.#kv = kv;
    this.#maxEvents = maxEvents;
  }

  /** Loads the outbox from `kv` (creating its state record on first use). Unreadable records are reported and deleted. */
  static async open(options: OutboxOptions): Promise<Outbox> {
    const outbox = new Outbox(options.kv, Math.max(1, options.maxBacklogEvents ?? DEFAULT_MAX_BACKLOG_EVENTS));
    await outbox.#load(options);
    return outbox;
  }

  async #load(options: OutboxOptions): Promise<void> {
    const corrupt = async (key: string, error: unknown) => {
      options.onCorrupt?.(key, error);
      await this.#kv.del(key);
    };
    let hasState = false;
    for (const [key, value] of await this.#kv.entries()) {
      if (key.startsWith(LEDGER_PREFIX)) continue;
      try {
        if (key === STATE_KEY) {
          const r = new WireReader('outbox state');
          const o = r.object('', value);
          this.#streamId = r.nonEmptyString('streamId', o.streamId, 253);
          this.#lastSequence = r.count('lastSequence', o.lastSequence);
          this.#eventCursor = r.count('eventCursor', o.eventCursor);
          if (o.lastAck !== undefined) {
            const a = r.object('lastAck', o.lastAck);
            this.#lastAck = { sequence: r.count('lastAck.sequence', a.sequence), at: r.time('lastAck.at', a.at) };
          }
          hasState = true;
        } else if (key === INFLIGHT_KEY) {
          this.#inflight = readInflight(new WireReader('outbox inflight batch'), value);
        } else if (key.startsWith(HOST_PREFIX)) {
          const entry = readEntry(new WireReader(`outbox ${key}`), value);
          this.#hosts.set(key.slice(HOST_PREFIX.length), { entry, json: JSON.stringify(entry), durable: true });
        } else if (key.startsWith(EVENT_PREFIX)) {
          const event = readEventSummary(new WireReader(`outbox ${key}`), '', value);
          this.#events.set(event.seq, event);
        } else {
          throw new Error(`unknown outbox key ${JSON.stringify(key)}`);
        }
      } catch (err) {
        await corrupt(key, err);
      }
    }
    if (!hasState) this.#streamId = options.newStreamId();
    // The sequence never goes backwards, even if `state` was lost or older than the inflight batch.
    this.#lastSequence = Math.max(this.#lastSequence, this.#inflight?.request.sequence ?? 0);
    for (const seq of this.#events.keys()) this.#eventCursor = Math.max(this.#eventCursor, seq);
    if (!hasState) await this.#saveState();
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  #stateRecord(): Record<string, unknown> {
    return {
      streamId: this.#streamId,
      lastSequence: this.#lastSequence,
      eventCursor: this.#eventCursor,
      ...(this.#lastAck === undefined ? {} : { lastAck: this.#lastAck }),
    };
  }

  async #saveState(): Promise<void> {
    await this.#kv.put(STATE_KEY, this.#stateRecord());
  }

  /** This outbox's stream id (sent as `streamId`). */
  get streamId(): string {
    return this.#streamId;
  }
  /** The last acknowledged sequence and when (RFC 3339), kept across restarts; undefined before the first. */
  get lastAck(): { sequence: number; at: string } | undefined {
    return this.#lastAck === undefined ? undefined : { ...this.#lastAck };
  }
  /** The last sequence handed to a batch (0 before the first). */
  get lastSequence(): number {
    return this.#lastSequence;
  }
  /** Events dropped by the backlog cap since this process opened the outbox. */
  get droppedEvents(): number {
    return this.#droppedEvents;
  }
  /** Pending host records (summaries and deletions) and events, not counting the in-flight batch's copies. */
  get backlog(): { hosts: number; events: number } {
    return { hosts: this.#hosts.size, events: this.#events.size };
  }
  /** Sequence and sizes of the batch being delivered, if any (cheap; for status). */
  get inflightSize(): { sequence: number; hosts: number; events: number } | undefined {
    const r = this.#inflight?.request;
    return r === undefined ? undefined : { sequence: r.sequence, hosts: r.hosts.length + r.deletedHosts.length, events: r.events.length };
  }
  /** The batch being delivered, if any (a deep copy). */
  get inflight(): PushRequest | undefined {
    return this.#inflight === undefined ? undefined : structuredClone(this.#inflight.request);
  }

  /**
   * Queues the latest summary of a host, replacing any pending one for the same name.
   * `durable: false` (the periodic full resync, which is redone after every restart anyway)
   * keeps it in memory only — unless a durable record for the host is pending, which is then
   * overwritten durably. Identical pending summaries are not rewritten.
   */
  putHost(summary: HostSummary, options: { durable?: boolean } = {}): Promise<void> {
    return this.#serial(() => this.#putEntry(summary.name, { summary }, options.durable ?? true));
  }

  /** Queues the deletion of a host, replacing any pending summary for it (always durable: a resync cannot recreate it). */
  putDeletedHost(ref: HostRef): Promise<void> {
    return this.#serial(() => this.#putEntry(ref.name, { deleted: { namespace: ref.namespace, name: ref.name } }, true));
  }

  async #putEntry(name: string, entry: HostEntry, wantDurable: boolean): Promise<void> {
    const json = JSON.stringify(entry);
    const existing = this.#hosts.get(name);
    if (existing?.json === json && (existing.durable || !wantDurable)) return;
    const durable = wantDurable || existing?.durable === true;
    if (durable) await this.#kv.put(`${HOST_PREFIX}${name}`, entry);
    this.#hosts.delete(name); // re-insert: the map's order is the order of last change
    this.#hosts.set(name, { entry, json, durable });
  }

  /**
   * Appends an event unless its seq is not above the highest seen (already taken in, then
   * resolves false). Over the cap the oldest pending event is dropped and counted.
   */
  addEvent(event: EventSummary): Promise<boolean> {
    return this.#serial(async () => {
      if (event.seq <= this.#eventCursor) return false;
      await this.#kv.put(eventKey(event.seq), event);
      this.#events.set(event.seq, event);
      this.#eventCursor = event.seq;
      while (this.#events.size > this.#maxEvents) {
        const oldest = this.#events.keys().next();
        if (oldest.done === true) break;
        await this.#kv.del(eventKey(oldest.value));
        this.#events.delete(oldest.value);
        this.#droppedEvents += 1;
      }
      return true;
    });
  }

  /** The highest event seq taken in or skipped (events at or below it are not added again). */
  get eventCursor(): number {
    return this.#eventCursor;
  }

  /** Marks events up to `seq` as seen without queueing them (filtered out); persisted with the next acknowledgement. */
  skipEventsThrough(seq: number): Promise<void> {
    return this.#serial(() => {
      if (seq > this.#eventCursor) this.#eventCursor = seq;
      return Promise.resolve();
    });
  }

  /**
   * The batch to deliver now: the in-flight one unchanged if there is one (a retry), else a new
   * batch of at most `maxHosts` host records (least recently changed first) and `maxEvents`
   * events (oldest first) under the next sequence, persisted before it is returned.
   * An empty backlog gives an empty batch (a heartbeat).
   */
  nextBatch(input: BatchInput): Promise<{ request: PushRequest; retry: boolean }> {
    return this.#serial(async () => {
      if (this.#inflight !== undefined) return { request: structuredClone(this.#inflight.request), retry: true };
      const hosts: HostSummary[] = [];
      const deletedHosts: HostRef[] = [];
      const hostDigests: Record<string, string> = {};
      for (const [name, pending] of this.#hosts) {
        if (hosts.length + deletedHosts.length >= Math.max(0, input.maxHosts)) break;
        if ('summary' in pending.entry) hosts.push(pending.entry.summary);
        else deletedHosts.push(pending.entry.deleted);
        hostDigests[name] = pending.json;
      }
      const events = [...this.#events.values()].slice(0, Math.max(0, input.maxEvents));
      this.#lastSequence += 1;
      const v2 = input.version === 2;
      const request: PushRequest = {
        version: v2 ? 2 : 1,
        agentId: input.agentId,
        ...(input.rack === undefined ? {} : { rack: input.rack }),
        streamId: this.#streamId,
        sequence: this.#lastSequence,
        sentAt: input.sentAt,
        hosts,
        deletedHosts,
        events,
        ...(input.bootServices === undefined ? {} : { bootServices: input.bootServices }),
        ...(v2 && input.commandResults !== undefined && input.commandResults.length > 0 ? { commandResults: input.commandResults } : {}),
        ...(v2 && input.statusUrl !== undefined ? { statusUrl: input.statusUrl } : {}),
        ...(v2 && input.agentVersion !== undefined ? { agentVersion: input.agentVersion } : {}),
        ...(v2 ? { backlog: { hosts: Math.max(0, this.#hosts.size - hosts.length - deletedHosts.length), events: Math.max(0, this.#events.size - events.length) } } : {}),
      };
      await this.#saveState();
      const inflight: Inflight = { request, hostDigests };
      await this.#kv.put(INFLIGHT_KEY, inflight);
      this.#inflight = inflight;
      return { request: structuredClone(request), retry: false };
    });
  }

  /**
   * Removes what the controller acknowledged: the in-flight batch's events and every host
   * record still equal to what was sent; then the batch itself. `at` (RFC 3339) is recorded as the last acknowledgement.
   * `extra` operations (the command ledger's) go into the same synced write.
   * @throws Error when `sequence` is not the in-flight batch's (nothing is removed).
   */
  acknowledge(sequence: number, at: string, extra: readonly KeyValueOperation<unknown>[] = []): Promise<void> {
    return this.#serial(async () => {
      const inflight = this.#inflight;
      if (inflight?.request.sequence !== sequence) {
        throw new Error(`outbox: acknowledgement of sequence ${sequence}, but the batch in flight is ${inflight === undefined ? 'none' : String(inflight.request.sequence)}`);
      }
      // One synced write: the batch's events, the hosts still as sent, the state, the batch record.
      const operations: KeyValueOperation<unknown>[] = [];
      for (const event of inflight.request.events) {
        if (this.#events.has(event.seq)) operations.push({ type: 'del', key: eventKey(event.seq) });
      }
      const delivered: string[] = [];
      for (const [name, digest] of Object.entries(inflight.hostDigests)) {
        const pending = this.#hosts.get(name);
        if (pending?.json !== digest) continue;
        if (pending.durable) operations.push({ type: 'del', key: `${HOST_PREFIX}${name}` });
        delivered.push(name);
      }
      const lastAck = { sequence, at };
      operations.push({ type: 'put', key: STATE_KEY, value: { ...this.#stateRecord(), lastAck } });
      operations.push({ type: 'del', key: INFLIGHT_KEY });
      operations.push(...extra);
      await this.#kv.batch(operations);
      for (const event of inflight.request.events) this.#events.delete(event.seq);
      for (const name of delivered) this.#hosts.delete(name);
      this.#lastAck = lastAck;
      this.#inflight = undefined;
    });
  }

  /** Resolves when every queued operation has finished. */
  async idle(): Promise<void> {
    await this.#serial(() => Promise.resolve());
  }
}
