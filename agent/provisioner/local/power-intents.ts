/**
 * @module One power request per intent (issue 27, item 3): the local provisioner sends a power
 * change to a BMC once, then this watcher polls the BMC every `pollMs` (0.5 s) until it shows
 * the new state or `timeoutMs` passes (Ironic's `power_state_change_timeout`, config
 * `bmc.powerStateChangeTimeoutSeconds`), instead of re-sending while the BMC still shows the old
 * state (each new request restarted a lagging BMC's own delay). When the BMC shows the new state
 * the reading is kept for `updateHardwareState` and the host is woken, so `status.poweredOn`
 * follows within about one poll. The intent also carries the start of a soft power-off: it
 * belongs to that power-off and every later request replaces it (issue 27, item 4).
 */
import type { PowerAction, PowerState } from '../../../drivers/index.js';
import { poweredOnOf, type PowerSource } from '../../bmc/power-sweep.js';

/** One power change rackside asked a BMC for. */
export interface PowerIntent {
  readonly action: PowerAction;
  /** The power the BMC must show for the change to be done; undefined for resets (nothing awaited). */
  readonly poweredOn: boolean | undefined;
  /** When the request was sent (the provisioner's clock). */
  readonly sinceMs: number;
}

/** Options of {@link PowerIntents}. */
export interface PowerIntentOptions {
  readonly nowMs: () => number;
  /** How long a BMC may take to show the requested state; default 60 s. */
  readonly timeoutMs?: number;
  /** How long a soft power-off may take (Ironic's 180 s by default). */
  readonly softOffTimeoutMs?: number;
  /** Poll period while a change is awaited; default 500 ms. */
  readonly pollMs?: number;
  /** Asks for a reconcile of host `name` (its BMC now shows the requested state). */
  readonly wake?: (name: string) => void;
  /** Waits `ms` (tests inject a fast one); default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Default of {@link PowerIntentOptions.timeoutMs} (Ironic's `power_state_change_timeout` is 60 s). */
export const POWER_STATE_CHANGE_TIMEOUT_MS = 60_000;

/** How long a soft power-off may take before it fails and the controller retries hard (Ironic's default). */
export const SOFT_POWER_OFF_TIMEOUT_MS = 180_000;

/** How long `intent` may wait for the BMC. */
export function limitOf(intents: PowerIntents, intent: PowerIntent): number {
  return intent.action === 'soft-off' ? intents.softOffTimeoutMs : intents.timeoutMs;
}

/** The power a request leads to: on, off, or nothing to await (resets). */
export function targetOf(action: PowerAction): boolean | undefined {
  if (action === 'on') return true;
  if (action === 'off' || action === 'soft-off') return false;
  return undefined;
}

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** Per-host power intents and their watchers (see the module comment). */
export class PowerIntents {
  readonly #intents = new Map<string, PowerIntent>();
  /** What the BMC showed when it reached the host's last awaited state. */
  readonly #reached = new Map<string, { poweredOn: boolean; sinceMs: number }>();
  #closed = false;
  readonly timeoutMs: number;
  readonly softOffTimeoutMs: number;
  readonly #pollMs: number;
  constructor(private readonly options: PowerIntentOptions) {
    this.timeoutMs = options.timeoutMs ?? POWER_STATE_CHANGE_TIMEOUT_MS;
    this.softOffTimeoutMs = options.softOffTimeoutMs ?? SOFT_POWER_OFF_TIMEOUT_MS;
    this.#pollMs = options.pollMs ?? 500;
  }

  /** The request host `uid` awaits (none once the BMC showed it, or after a reset). */
  pending(uid: string): PowerIntent | undefined {
    return this.#intents.get(uid);
  }

  /** The state the BMC reached after the request sent at `sinceMs` or later, if it did. */
  reached(uid: string, sinceMs: number): boolean | undefined {
    const seen = this.#reached.get(uid);
    return seen !== undefined && seen.sinceMs >= sinceMs ? seen.poweredOn : undefined;
  }

  /**
   * Sends `action` once through `send` and, for on/off, watches `source` until it shows the
   * target state (then wakes host `name`) or the timeout passes. A later request replaces this one.
   */
  async request(uid: string, name: string, action: PowerAction, source: PowerSource, send: () => Promise<void>): Promise<void> {
    const intent: PowerIntent = { action, poweredOn: targetOf(action), sinceMs: this.options.nowMs() };
    this.#reached.delete(uid);
    if (intent.poweredOn === undefined) this.#intents.delete(uid);
    else this.#intents.set(uid, intent);
    try {
      await send();
    } catch (error) {
      if (this.#intents.get(uid) === intent) this.#intents.delete(uid);
      throw error;
    }
    if (intent.poweredOn !== undefined) void this.#watch(uid, name, intent, source);
  }

  /** Forgets host `uid`'s intent (the BMC showed the target by another reading, or the host left). */
  forget(uid: string): void {
    this.#intents.delete(uid);
  }

  /** Notes a reading of host `uid`'s BMC: one showing the awaited state ends the intent. */
  observe(uid: string, state: PowerState): void {
    const intent = this.#intents.get(uid);
    if (intent !== undefined && poweredOnOf(state) === intent.poweredOn) this.#settle(uid, intent);
  }

  /** Stops every watcher (agent shutdown). */
  close(): void {
    this.#closed = true;
  }

  #settle(uid: string, intent: PowerIntent): void {
    this.#intents.delete(uid);
    if (intent.poweredOn !== undefined) this.#reached.set(uid, { poweredOn: intent.poweredOn, sinceMs: intent.sinceMs });
  }

  /** Polls until the BMC shows `intent`'s state, a later request replaces it, or the timeout (bounded in count too). */
  async #watch(uid: string, name: string, intent: PowerIntent, source: PowerSource): Promise<void> {
    const sleep = this.options.sleep ?? defaultSleep;
    const limitMs = limitOf(this, intent);
    const maxPolls = Math.ceil(limitMs / this.#pollMs) + 1;
    for (let i = 0; i < maxPolls && !this.#closed; i += 1) {
      await sleep(this.#pollMs);
      if (this.#intents.get(uid) !== intent) return;
      if (this.options.nowMs() - intent.sinceMs > limitMs) return;
      const state = await source.power.getPowerState().catch(() => undefined);
      if (this.#intents.get(uid) !== intent) return;
      if (state !== undefined && poweredOnOf(state) === intent.poweredOn) {
        this.#settle(uid, intent);
        this.options.wake?.(name);
        return;
      }
    }
  }
}
