/**
 * @module Runs the commands a controller hands back in its answers (wire format version 2):
 * one at a time, in the order received, each id at most once (the {@link CommandLedger} records
 * it before it runs), never after its `expiresAt` (then it is reported `expired` and not run),
 * through the caller's `run` — the same HostService path as the agent's own API. Outcomes wait
 * in the ledger until a push carrying them is acknowledged.
 */
import type { FleetCommand, PushAck } from '../../wire/index.js';
import type { CommandLedger } from './command-ledger.js';

/** What running a command did. */
export interface CommandRunOutcome {
  outcome: 'done' | 'failed';
  message: string;
}

/** Runs one command on this agent (apply, power, reboot, inspect, detach, delete). Throws are reported as failures. */
export type RunFleetCommand = (command: FleetCommand) => Promise<CommandRunOutcome>;

/** Options of {@link CommandExecutor}. */
export interface CommandExecutorOptions {
  ledger: CommandLedger;
  run: RunFleetCommand;
  now: () => Date;
  /** Told when an outcome was recorded (the loop pushes it). */
  onOutcome: () => void;
  log?: (fields: Record<string, unknown>, message: string) => void;
}

/** See the module comment. */
export class CommandExecutor {
  readonly #o: CommandExecutorOptions;
  #tail: Promise<void> = Promise.resolve();
  readonly #queued = new Set<string>();

  constructor(options: CommandExecutorOptions) {
    this.#o = options;
  }

  /** Takes the commands (and the rejected ones) of an acknowledgement; new ids are queued. */
  take(ack: PushAck): void {
    for (const rejected of ack.rejected) {
      if (rejected.id === null || this.#o.ledger.has(rejected.id) || this.#queued.has(rejected.id)) continue;
      const id = rejected.id;
      this.#queued.add(id);
      this.#chain(async () => {
        if (await this.#o.ledger.begin(id, this.#iso())) await this.#o.ledger.finish(id, 'failed', `the agent could not read the command: ${rejected.reason}`, this.#iso());
      }, id);
    }
    for (const command of ack.commands) {
      if (this.#o.ledger.has(command.id) || this.#queued.has(command.id)) continue;
      this.#queued.add(command.id);
      this.#chain(() => this.#runOne(command), command.id);
    }
  }

  #iso(): string {
    return this.#o.now().toISOString();
  }

  #chain(fn: () => Promise<void>, id: string): void {
    this.#tail = this.#tail.then(fn).catch((err: unknown) => {
      this.#o.log?.({ id, err: err instanceof Error ? err.message : String(err) }, 'fleet command: could not record its outcome');
    }).finally(() => {
      this.#queued.delete(id);
      this.#o.onOutcome();
    });
  }

  async #runOne(command: FleetCommand): Promise<void> {
    const { ledger } = this.#o;
    if (!(await ledger.begin(command.id, this.#iso()))) return;
    if (Date.parse(command.expiresAt) <= this.#o.now().getTime()) {
      await ledger.finish(command.id, 'expired', `expired at ${command.expiresAt} before the rack could start it; not run`, this.#iso());
      return;
    }
    let result: CommandRunOutcome;
    try {
      result = await this.#o.run(command);
    } catch (err) {
      result = { outcome: 'failed', message: err instanceof Error ? err.message : String(err) };
    }
    this.#o.log?.({ id: command.id, kind: command.kind, outcome: result.outcome }, `fleet command ${command.kind}: ${result.message}`);
    await ledger.finish(command.id, result.outcome, result.message, this.#iso());
  }

  /** Resolves when every queued command has run and been recorded. */
  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const tail = this.#tail;
      await tail;
      if (tail === this.#tail) return;
    }
  }
}
