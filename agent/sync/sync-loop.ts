/**
 * @module The controller sync loop (store-and-forward): it takes host changes and events from
 * the store into the durable {@link Outbox}, pushes batches to `controller.url` one at a time
 * (the next only after the previous was acknowledged, so per-host order holds), retries with
 * exponential backoff and full jitter, and re-sends every host summary each `intervalSeconds`
 * (a full resync that doubles as a heartbeat). A controller that is down, slow or wrong never
 * throws into the rest of the agent: every failure lands in {@link SyncLoop.status}.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { ChangeNotice, EventLog, OutboxSublevel, ResourceStore, StoredEvent } from '../store/types.js';
import { DEFAULT_BACKOFF, backoffDelayMs, type BackoffPolicy } from './backoff.js';
import { ControllerClient, SyncFailure, displayUrl, type ControllerConfig, type SyncFailureCode } from './http-push.js';
import { DEFAULT_MAX_BACKLOG_EVENTS, Outbox } from './outbox.js';
import { isSyncedEvent, summarizeEvent, summarizeHost } from './summarize.js';
import type { BootServiceHealth } from '../../wire/index.js';
import { CommandExecutor, type RunFleetCommand } from './command-executor.js';
import { CommandLedger } from './command-ledger.js';

/**
 * What the sync loop reads and owns: host changes and host reads (resources), events (the event
 * log), and the `outbox` sublevel, which it alone opens as its {@link Outbox}.
 */
export type SyncStore = Pick<ResourceStore, 'getHost' | 'listHosts' | 'onChange'> & Pick<EventLog, 'listEvents' | 'onEvent'> & OutboxSublevel;

/** Options of {@link createSyncLoop}. Only `store`, `agentId` and `controller` are needed; the rest are tuning and test seams. */
export interface SyncLoopOptions {
  store: SyncStore;
  agentId: string;
  /** Rack name sent as `rack` (no config key yet; optional). */
  rack?: string;
  /** The `controller` config section; undefined = sync disabled (status says so, start/stop do nothing). */
  controller: ControllerConfig | undefined;
  /** Host records per push (default 500). */
  maxHostsPerPush?: number;
  /** Events per push (default 1000). */
  maxEventsPerPush?: number;
  /** Pending events kept before the oldest are dropped (default 10000). */
  maxBacklogEvents?: number;
  /** Backoff bounds (default 1 s → 5 min). */
  backoff?: Partial<BackoffPolicy>;
  /** Delay between a change and its push, so bursts coalesce (default 250 ms). */
  flushDelayMs?: number;
  /** Deadline of one push (default 30 s). */
  requestTimeoutMs?: number;
  /** How long {@link SyncLoop.stop} waits for a push in flight before aborting it (default 5 s). */
  stopTimeoutMs?: number;
  /** Largest controller answer accepted (default 64 KiB). */
  maxResponseBytes?: number;
  /** Uniform [0, 1) source for jitter (default `Math.random`). */
  random?: () => number;
  /** Clock (default the system clock). */
  now?: () => Date;
  /** Makes the outbox stream id on first use (default `crypto.randomUUID`). */
  newStreamId?: () => string;
  /** Current boot-service health, included in each new batch when given. */
  bootServices?: () => Record<string, BootServiceHealth> | undefined;
  /** Which events are pushed (default: events about a host, and every Warning). */
  includeEvent?: (event: StoredEvent) => boolean;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** `User-Agent` header (default `rackside-sync/1`). */
  userAgent?: string;
  /**
   * Runs commands the controller sends (wire format version 2). Given: pushes are version 2 and
   * commands run at most once each (agent/sync/command-ledger.ts); absent: version 1, no commands.
   */
  runCommand?: RunFleetCommand;
  /** Version 2: this rack's status page address, shown as a link on the fleet page. */
  statusUrl?: string;
  /** Version 2: the agent's version. */
  agentVersion?: string;
}

/** The last failure, as shown by `GET /api/v1/sync` and `rackside sync status`. */
export interface SyncErrorInfo {
  /** RFC 3339 time of the failure. */
  at: string;
  code: SyncFailureCode;
  message: string;
  httpStatus?: number;
}

/** A snapshot of the sync loop's state. Times are RFC 3339 or null. */
export interface SyncStatus {
  enabled: boolean;
  running: boolean;
  /** The controller URL without user-info; null when disabled. */
  url: string | null;
  agentId: string;
  streamId: string | null;
  lastAttemptAt: string | null;
  lastAckAt: string | null;
  lastAckSequence: number | null;
  /** Records not yet acknowledged (including the batch in flight). */
  backlog: { hosts: number; events: number };
  /** The batch being delivered, with the attempts made by this process. */
  inflight: { sequence: number; hosts: number; events: number; attempts: number } | null;
  /** The most recent failure (kept after recovery; compare with `lastAckAt`). */
  lastError: SyncErrorInfo | null;
  /** Failed attempts since the last acknowledgement (0 = healthy). */
  consecutiveFailures: number;
  nextAttemptAt: string | null;
  nextResyncAt: string | null;
  /** Events dropped by the backlog cap since start. */
  droppedEvents: number;
}

/** The controller sync loop. */
export interface SyncLoop {
  /** Opens the outbox, subscribes to the store and starts pushing. Never throws: problems go to status. */
  start(): Promise<void>;
  /** Unsubscribes and stops timers; waits for a push in flight up to `stopTimeoutMs`, then aborts it. Idempotent. */
  stop(): Promise<void>;
  status(): SyncStatus;
  /** Pushes now (ignoring a backoff wait) until the backlog is empty or a push fails; resolves with the status after. */
  syncNow(): Promise<SyncStatus>;
}

/** Creates the sync loop; nothing happens until {@link SyncLoop.start}. */
export function createSyncLoop(options: SyncLoopOptions): SyncLoop {
  return new ControllerSyncLoop(options);
}

/**
 * An express-compatible handler for `GET /api/v1/sync` answering the loop's status as JSON.
 * (Typed structurally so agent/sync does not depend on express.)
 */
export function syncStatusHandler(loop: Pick<SyncLoop, 'status'>): (req: unknown, res: { json(body: unknown): unknown }) => void {
  return (_req, res) => {
    res.json(loop.status());
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Resolves true when `promise` settles within `ms`, false otherwise (never rejects). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => { resolve(false); }, ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class ControllerSyncLoop implements SyncLoop {
  readonly #o: SyncLoopOptions;
  readonly #controller: ControllerConfig | undefined;
  readonly #now: () => Date;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #include: (event: StoredEvent) => boolean;
  readonly #flushDelayMs: number;
  #outbox: Outbox | undefined;
  /** One client per `controller.urls` entry; failures move to the next (failover). */
  #clients: ControllerClient[] = [];
  #current = 0;
  #executor: CommandExecutor | undefined;
  #ledger: CommandLedger | undefined;
  #running = false;
  #unsubscribe: (() => void)[] = [];
  #intakeTail: Promise<void> = Promise.resolve();
  readonly #dirty = new Map<string, string>();
  #flushQueued = false;
  #timer: NodeJS.Timeout | undefined;
  #nextAttemptAtMs: number | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #nextResyncAtMs: number | undefined;
  #pushing: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #again = false;
  #heartbeat = false;
  #lastAttemptAtMs: number | undefined;
  #lastError: SyncErrorInfo | null = null;
  #consecutiveFailures = 0;
  #attempts = 0;
  #attemptsSequence = 0;

  constructor(options: SyncLoopOptions) {
    this.#o = options;
    this.#controller = options.controller;
    this.#now = options.now ?? (() => new Date());
    this.#random = options.random ?? Math.random;
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#include = options.includeEvent ?? isSyncedEvent;
    this.#flushDelayMs = options.flushDelayMs ?? 250;
  }

  #nowMs(): number {
    return this.#now().getTime();
  }

  #iso(ms: number | undefined): string | null {
    return ms === undefined ? null : new Date(ms).toISOString();
  }

  #recordError(failure: SyncFailure, countAsAttempt: boolean): void {
    const previous = this.#lastError;
    this.#lastError = {
      at: this.#now().toISOString(),
      code: failure.code,
      message: failure.message,
      ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
    };
    if (countAsAttempt) this.#consecutiveFailures += 1;
    if (this.#consecutiveFailures <= 1 || previous?.message !== failure.message) {
      this.#o.logger?.warn({ code: failure.code, httpStatus: failure.httpStatus, consecutiveFailures: this.#consecutiveFailures }, `controller sync: ${failure.message}`);
    }
  }

  async start(): Promise<void> {
    const controller = this.#controller;
    if (controller === undefined || this.#running) return;
    try {
      this.#outbox = await Outbox.open({
        kv: this.#o.store.outbox,
        newStreamId: this.#o.newStreamId ?? randomUUID,
        maxBacklogEvents: this.#o.maxBacklogEvents ?? DEFAULT_MAX_BACKLOG_EVENTS,
        onCorrupt: (key, err) => { this.#o.logger?.warn({ key, err: errorText(err) }, 'controller sync: dropped an unreadable outbox record'); },
      });
    } catch (err) {
      this.#recordError(new SyncFailure('outbox', `cannot open the sync outbox: ${errorText(err)}`, { cause: err }), false);
      return;
    }
    if (this.#o.runCommand !== undefined) {
      try {
        this.#ledger = await CommandLedger.open(this.#o.store.outbox, this.#now().toISOString());
      } catch (err) {
        this.#recordError(new SyncFailure('outbox', `cannot open the command ledger: ${errorText(err)}`, { cause: err }), false);
        return;
      }
      this.#executor = new CommandExecutor({
        ledger: this.#ledger, run: this.#o.runCommand, now: this.#now,
        onOutcome: () => { this.#requestPush(this.#flushDelayMs); },
        log: (fields, message) => this.#o.logger?.info(fields, message),
      });
    }
    // Answers carry commands (manifests) in version 2: allow 8 MiB unless told otherwise.
    const maxResponseBytes = this.#o.maxResponseBytes ?? (this.#executor === undefined ? 65_536 : 8 * 1024 * 1024);
    this.#clients = (controller.urls ?? [controller.url]).map((url) => new ControllerClient({ ...controller, url }, {
      requestTimeoutMs: this.#o.requestTimeoutMs ?? 30_000,
      maxResponseBytes,
      userAgent: this.#o.userAgent ?? (this.#executor === undefined ? 'rackside-sync/1' : 'rackside-sync/2'),
      nowMs: () => this.#nowMs(),
    }));
    this.#running = true;
    const { store } = this.#o;
    // Subscribe before the catch-up scan is queued: intake runs in order, and the outbox skips
    // events at or below its cursor, so an event seen by both is taken once.
    this.#unsubscribe.push(store.onChange((n) => { this.#onChange(n); }));
    this.#unsubscribe.push(store.onEvent((e) => { this.#onEvent(e); }));
    this.#intake(async () => {
      const outbox = this.#requireOutbox();
      const missed = await store.listEvents({ afterSeq: outbox.eventCursor, limit: this.#o.maxBacklogEvents ?? DEFAULT_MAX_BACKLOG_EVENTS });
      for (const event of missed) await this.#takeEvent(event);
    });
    const intervalMs = controller.intervalSeconds * 1000;
    this.#resync();
    this.#resyncTimer = setInterval(() => { this.#resync(); }, intervalMs);
    this.#resyncTimer.unref();
    this.#nextResyncAtMs = this.#nowMs() + intervalMs;
  }

  /** The host's summary; version 2 adds its boot MAC and serial number (fleet search). */
  #summarize(host: Parameters<typeof summarizeHost>[0]): ReturnType<typeof summarizeHost> {
    const summary = summarizeHost(host);
    if (this.#executor === undefined) return summary;
    const serial = host.status.hardware?.systemVendor.serialNumber;
    return { ...summary, bootMACAddress: host.spec.bootMACAddress?.slice(0, 64) ?? null, serialNumber: serial === undefined || serial === '' ? null : serial.slice(0, 253) };
  }

  #requireOutbox(): Outbox {
    if (this.#outbox === undefined) throw new SyncFailure('outbox', 'the sync outbox is not open');
    return this.#outbox;
  }

  /** Queues store → outbox work in order; a failure is reported, never thrown. */
  #intake(fn: () => Promise<void>): void {
    this.#intakeTail = this.#intakeTail.then(fn).catch((err: unknown) => {
      this.#recordError(new SyncFailure('outbox', `cannot queue for the controller: ${errorText(err)}`, { cause: err }), false);
    });
  }

  #onChange(notice: ChangeNotice): void {
    if (notice.kind !== 'host' || !this.#running) return;
    this.#dirty.set(notice.name, notice.namespace);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    this.#intake(async () => {
      this.#flushQueued = false;
      const dirty = [...this.#dirty];
      this.#dirty.clear();
      const outbox = this.#requireOutbox();
      for (const [name, namespace] of dirty) {
        const host = await this.#o.store.getHost(name);
        if (host === undefined) await outbox.putDeletedHost({ namespace, name });
        else await outbox.putHost(this.#summarize(host));
      }
      this.#requestPush(this.#flushDelayMs);
    });
  }

  #onEvent(event: StoredEvent): void {
    if (!this.#running) return;
    this.#intake(async () => {
      if (await this.#takeEvent(event)) this.#requestPush(this.#flushDelayMs);
    });
  }

  async #takeEvent(event: StoredEvent): Promise<boolean> {
    const outbox = this.#requireOutbox();
    if (this.#include(event)) return outbox.addEvent(summarizeEvent(event));
    await outbox.skipEventsThrough(event.seq);
    return false;
  }

  /** Queues every host's summary and a push (sent even when there is nothing to say: a heartbeat). */
  #resync(): void {
    if (!this.#running) return;
    if (this.#controller !== undefined) this.#nextResyncAtMs = this.#nowMs() + this.#controller.intervalSeconds * 1000;
    this.#intake(async () => {
      const outbox = this.#requireOutbox();
      for (const host of await this.#o.store.listHosts()) await outbox.putHost(this.#summarize(host), { durable: false });
      this.#heartbeat = true;
      this.#requestPush(0);
    });
  }

  /** Asks for a push within `delayMs`; a backoff wait in progress or an earlier timer wins. */
  #requestPush(delayMs: number): void {
    if (!this.#running) return;
    if (this.#pushing !== undefined) {
      this.#again = true;
      return;
    }
    if (this.#timer !== undefined && (this.#consecutiveFailures > 0 || (this.#nextAttemptAtMs ?? 0) <= this.#nowMs() + delayMs)) return;
    this.#schedule(delayMs);
  }

  #schedule(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#nextAttemptAtMs = this.#nowMs() + delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#nextAttemptAtMs = undefined;
      void this.#runPush();
    }, delayMs);
    this.#timer.unref();
  }

  #runPush(): Promise<void> {
    if (this.#pushing !== undefined) return this.#pushing;
    if (!this.#running) return Promise.resolve();
    this.#again = false;
    const run = (async () => {
      let delayMs: number | undefined;
      try {
        const more = await this.#pushOnce();
        if (this.#consecutiveFailures > 0) this.#o.logger?.info({ after: this.#consecutiveFailures }, 'controller sync: delivered again');
        this.#consecutiveFailures = 0;
        if (more || this.#again) delayMs = 0;
      } catch (err) {
        const failure = err instanceof SyncFailure ? err : new SyncFailure('outbox', errorText(err), { cause: err });
        this.#recordError(failure, true);
        delayMs = backoffDelayMs(this.#consecutiveFailures, this.#backoff, this.#random(), failure.retryAfterMs);
      } finally {
        this.#abort = undefined;
        this.#pushing = undefined;
      }
      if (this.#running && delayMs !== undefined) this.#schedule(delayMs);
    })();
    this.#pushing = run;
    return run;
  }

  /** One delivery; resolves whether more is waiting. @throws SyncFailure */
  async #pushOnce(): Promise<boolean> {
    await this.#intakeTail;
    const outbox = this.#requireOutbox();
    const client = this.#clients[this.#current % Math.max(1, this.#clients.length)];
    if (client === undefined) throw new SyncFailure('outbox', 'the controller client is not set up');
    const backlog = outbox.backlog;
    const results = this.#ledger?.unreported(1000) ?? [];
    if (outbox.inflightSize === undefined && backlog.hosts === 0 && backlog.events === 0 && results.length === 0 && !this.#heartbeat) return false;
    this.#heartbeat = false;
    this.#lastAttemptAtMs = this.#nowMs();
    let batch;
    try {
      batch = await outbox.nextBatch({
        agentId: this.#o.agentId,
        ...(this.#o.rack === undefined ? {} : { rack: this.#o.rack }),
        sentAt: this.#now().toISOString(),
        maxHosts: this.#o.maxHostsPerPush ?? 500,
        maxEvents: this.#o.maxEventsPerPush ?? 1000,
        ...this.#bootServices(),
        ...(this.#executor === undefined ? {} : {
          version: 2 as const, commandResults: results,
          ...(this.#o.statusUrl === undefined ? {} : { statusUrl: this.#o.statusUrl }),
          ...(this.#o.agentVersion === undefined ? {} : { agentVersion: this.#o.agentVersion }),
        }),
      });
    } catch (err) {
      throw new SyncFailure('outbox', `cannot build the next batch: ${errorText(err)}`, { cause: err });
    }
    const { sequence } = batch.request;
    if (this.#attemptsSequence !== sequence) {
      this.#attemptsSequence = sequence;
      this.#attempts = 0;
    }
    this.#attempts += 1;
    this.#abort = new AbortController();
    let ack;
    try {
      ack = await client.push(batch.request, this.#abort.signal);
    } catch (err) {
      // Another controller process on the same database may answer: try the next one next time.
      if (this.#clients.length > 1 && err instanceof SyncFailure && (err.code !== 'http-status' || (err.httpStatus ?? 500) >= 500)) this.#current = (this.#current + 1) % this.#clients.length;
      throw err;
    }
    const reported = batch.request.commandResults ?? [];
    await outbox.acknowledge(ack.acknowledged, this.#now().toISOString(), this.#ledger?.reportedOperations(reported) ?? []);
    this.#ledger?.markReported(reported);
    this.#executor?.take(ack);
    const after = outbox.backlog;
    return after.hosts > 0 || after.events > 0;
  }

  #bootServices(): { bootServices?: Record<string, BootServiceHealth> } {
    try {
      const services = this.#o.bootServices?.();
      return services === undefined ? {} : { bootServices: services };
    } catch (err) {
      this.#o.logger?.warn({ err: errorText(err) }, 'controller sync: boot-service health unavailable');
      return {};
    }
  }

  async syncNow(): Promise<SyncStatus> {
    for (let round = 0; round < 1000 && this.#running; round++) {
      if (this.#pushing !== undefined) await this.#pushing;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#nextAttemptAtMs = undefined;
      await this.#runPush();
      const backlog = this.#outbox?.backlog ?? { hosts: 0, events: 0 };
      if ((backlog.hosts === 0 && backlog.events === 0) || this.#consecutiveFailures > 0) break;
    }
    return this.status();
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    clearTimeout(this.#timer);
    clearInterval(this.#resyncTimer);
    this.#timer = undefined;
    this.#nextAttemptAtMs = undefined;
    this.#nextResyncAtMs = undefined;
    const boundMs = this.#o.stopTimeoutMs ?? 5000;
    const pushing = this.#pushing;
    if (pushing !== undefined && !(await settlesWithin(pushing, boundMs))) {
      this.#abort?.abort(new Error('sync loop stopping'));
      await settlesWithin(pushing, 1000);
    }
    await settlesWithin(this.#intakeTail, boundMs);
    await this.#executor?.idle();
    await Promise.all(this.#clients.map((c) => c.close()));
  }

  status(): SyncStatus {
    const outbox = this.#outbox;
    const inflight = outbox?.inflightSize;
    const lastAck = outbox?.lastAck;
    return {
      enabled: this.#controller !== undefined,
      running: this.#running,
      url: this.#controller === undefined ? null : displayUrl((this.#controller.urls ?? [this.#controller.url])[this.#current] ?? this.#controller.url),
      agentId: this.#o.agentId,
      streamId: outbox?.streamId ?? null,
      lastAttemptAt: this.#iso(this.#lastAttemptAtMs),
      lastAckAt: lastAck?.at ?? null,
      lastAckSequence: lastAck?.sequence ?? null,
      backlog: outbox?.backlog ?? { hosts: 0, events: 0 },
      inflight: inflight === undefined ? null : {
        ...inflight,
        attempts: this.#attemptsSequence === inflight.sequence ? this.#attempts : 0,
      },
      lastError: this.#lastError === null ? null : { ...this.#lastError },
      consecutiveFailures: this.#consecutiveFailures,
      nextAttemptAt: this.#iso(this.#nextAttemptAtMs),
      nextResyncAt: this.#iso(this.#nextResyncAtMs),
      droppedEvents: outbox?.droppedEvents ?? 0,
    };
  }
}
