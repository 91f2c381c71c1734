/**
 * @module The per-MAC index behind `GET /api/v1/boot/transports` (docs/https-boot.md): how each
 * host last booted — over boot HTTPS, plain HTTP or TFTP — and how its ramdisk then called the
 * agent, folded from the flight recorder's events as the store appends them
 * (agent/web/ui/boot-transport.ts). At start it reads the newest events the log still holds, so
 * an agent restart does not forget a boot the log remembers. Bounded: the MACs seen least
 * recently are forgotten first.
 */
import type { EventFilter, StoredEvent } from '../store/types.js';
import { foldBootTransport, type HostBootTransport } from '../web/ui/boot-transport.js';

/** The event log methods the index reads (the store's EventLog owner). */
export interface BootTransportEvents {
  listEvents(filter: EventFilter): Promise<StoredEvent[]>;
  onEvent(listener: (event: StoredEvent) => void): () => void;
}

/** Events read at start (the store's log cap is larger; the newest ones say how hosts last booted). */
const SEED_EVENTS = 10_000;

/** The index (see the module comment). */
export class BootTransportIndex {
  readonly #byMac = new Map<string, HostBootTransport>();
  #unsubscribe: (() => void) | undefined;

  constructor(private readonly maxMacs = 4096) {}

  /**
   * Subscribes to new events at once (synchronously), then folds in the newest stored ones;
   * events appended meanwhile are folded after them, none twice. Callers need not await it.
   */
  async start(events: BootTransportEvents): Promise<void> {
    const live: StoredEvent[] = [];
    let seeded = false;
    this.#unsubscribe = events.onEvent((event) => {
      if (seeded) this.note(event);
      else live.push(event);
    });
    const stored = await events.listEvents({ limit: SEED_EVENTS });
    const lastSeq = stored.at(-1)?.seq ?? 0;
    for (const event of stored) this.note(event);
    for (const event of live) if (event.seq > lastSeq) this.note(event);
    seeded = true;
  }

  /** Folds one stored event in (events without a MAC tell nothing per host). */
  note(event: StoredEvent): void {
    if (event.mac === undefined) return;
    const before = this.#byMac.get(event.mac) ?? { mac: event.mac };
    const after = foldBootTransport(before, event);
    if (after === before) return;
    this.#byMac.delete(event.mac);
    this.#byMac.set(event.mac, after);
    if (this.#byMac.size > this.maxMacs) {
      const oldest = this.#byMac.keys().next();
      if (oldest.done !== true) this.#byMac.delete(oldest.value);
    }
  }

  /** Every MAC with a recorded boot, in MAC order. */
  list(): HostBootTransport[] {
    return [...this.#byMac.values()].sort((a, b) => (a.mac < b.mac ? -1 : a.mac > b.mac ? 1 : 0));
  }

  /** Stops following the log. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
