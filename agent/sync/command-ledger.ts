/**
 * @module The command ledger of controller sync (wire format version 2, docs/sync-wire-format.md,
 * "Commands"): which command ids this agent has seen, so each runs at most once, even across a
 * crash. It shares the `outbox` sublevel under `command/<id>` keys (the outbox skips them).
 *
 * A record is written (synced) *before* a command runs (`running`) and again with its outcome
 * (`finished`, not yet reported). A record found `running` at open means the agent stopped while
 * running it: it is not run again but reported `failed` ("outcome unknown"), so the operator
 * checks the host. The outcome goes into the next new batch; when that batch is acknowledged
 * the record is marked reported in the same synced write as the acknowledgement. Reported
 * records are kept (the controller resends a command until it has the outcome) up to a cap.
 */
import type { KeyValue, KeyValueOperation } from '../store/types.js';
import { clipMessage, isCommandId, type CommandOutcome, type CommandResult } from '../../wire/index.js';

/** Reported records kept for duplicate detection before the oldest go. */
export const LEDGER_KEEP = 10_000;
const PREFIX = 'command/';

interface LedgerRecord {
  id: string;
  state: 'running' | 'finished';
  outcome?: CommandOutcome;
  message?: string;
  finishedAt?: string;
  reported: boolean;
  /** RFC 3339: when the command was first seen. */
  seenAt: string;
}

function readRecord(value: unknown): LedgerRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Partial<LedgerRecord>;
  if (typeof r.id !== 'string' || !isCommandId(r.id) || (r.state !== 'running' && r.state !== 'finished') || typeof r.seenAt !== 'string') return undefined;
  return { id: r.id, state: r.state, reported: r.reported === true, seenAt: r.seenAt,
    ...(r.outcome === undefined ? {} : { outcome: r.outcome }), ...(r.message === undefined ? {} : { message: r.message }), ...(r.finishedAt === undefined ? {} : { finishedAt: r.finishedAt }) };
}

/** The ledger; every method is serialized. */
export class CommandLedger {
  readonly #kv: KeyValue<unknown>;
  readonly #records = new Map<string, LedgerRecord>();
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(kv: KeyValue<unknown>) {
    this.#kv = kv;
  }

  /** Loads the ledger; `running` records become failed, unreported outcomes (see the module comment). */
  static async open(kv: KeyValue<unknown>, nowIso: string): Promise<CommandLedger> {
    const ledger = new CommandLedger(kv);
    for (const [key, value] of await kv.entries()) {
      if (!key.startsWith(PREFIX)) continue;
      const record = readRecord(value);
      if (record === undefined) {
        await kv.del(key);
        continue;
      }
      if (record.state === 'running') {
        Object.assign(record, { state: 'finished', outcome: 'failed', reported: false, finishedAt: nowIso,
          message: 'the agent stopped while running this command; it was not run again (check the host)' });
        await kv.put(key, record);
      }
      ledger.#records.set(record.id, record);
    }
    return ledger;
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** True once `id` was seen (it must not run again). */
  has(id: string): boolean {
    return this.#records.has(id);
  }

  /** Records `id` as running (durably) unless it was seen before; resolves true when the caller may run it now. */
  begin(id: string, nowIso: string): Promise<boolean> {
    return this.#serial(async () => {
      if (this.#records.has(id)) return false;
      const record: LedgerRecord = { id, state: 'running', reported: false, seenAt: nowIso };
      await this.#kv.put(`${PREFIX}${id}`, record);
      this.#records.set(id, record);
      return true;
    });
  }

  /** Records the outcome of `id` (durably), to be reported in the next batch. */
  finish(id: string, outcome: CommandOutcome, message: string, nowIso: string): Promise<void> {
    return this.#serial(async () => {
      const record: LedgerRecord = { id, state: 'finished', outcome, message: clipMessage(message), finishedAt: nowIso, reported: false, seenAt: this.#records.get(id)?.seenAt ?? nowIso };
      await this.#kv.put(`${PREFIX}${id}`, record);
      this.#records.set(id, record);
    });
  }

  /** Outcomes not yet acknowledged by the controller, oldest first (at most `max`). */
  unreported(max: number): CommandResult[] {
    const out: CommandResult[] = [];
    for (const r of this.#records.values()) {
      if (out.length >= max) break;
      if (r.state !== 'finished' || r.reported) continue;
      out.push({ id: r.id, outcome: r.outcome ?? 'failed', message: r.message ?? '', finishedAt: r.finishedAt ?? r.seenAt });
    }
    return out;
  }

  /** Operations marking `results` reported, for the acknowledgement's write; apply with {@link markReported} after it. */
  reportedOperations(results: readonly CommandResult[]): KeyValueOperation<unknown>[] {
    const ops: KeyValueOperation<unknown>[] = [];
    for (const result of results) {
      const record = this.#records.get(result.id);
      if (record !== undefined) ops.push({ type: 'put', key: `${PREFIX}${record.id}`, value: { ...record, reported: true } });
    }
    const reported = [...this.#records.values()].filter((r) => r.reported);
    for (const old of reported.slice(0, Math.max(0, reported.length - LEDGER_KEEP))) ops.push({ type: 'del', key: `${PREFIX}${old.id}` });
    return ops;
  }

  /** Applies in memory what {@link reportedOperations} wrote. */
  markReported(results: readonly CommandResult[]): void {
    for (const result of results) {
      const record = this.#records.get(result.id);
      if (record !== undefined) record.reported = true;
    }
    const reported = [...this.#records.values()].filter((r) => r.reported);
    for (const old of reported.slice(0, Math.max(0, reported.length - LEDGER_KEEP))) this.#records.delete(old.id);
  }
}
