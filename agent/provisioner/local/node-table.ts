/**
 * @module Serialized read-modify-write of `nodes` entries for the local provisioner and the
 * ramdisk callbacks (both change the same entry: one from the reconciler, one from boot HTTP),
 * and each host's last hardware inventory, kept in the `inventories` sublevel beside it: the
 * `nodes` record is decoded on every boot lookup, reconcile step and ramdisk callback (a
 * callback's token lookup decodes every host's), an inventory is tens of KB read when an
 * inspection finishes or a RAID plan needs the disks.
 */
import { generateRamdiskToken, type RandomBytes } from '../../boot/ramdisk-token.js';
import type { KeyValue } from '../../store/types.js';
import type { NodeEntry } from './node.js';
import { decodeNodeEntry } from './node.js';

/** The `nodes` sublevel seen as {@link NodeEntry}s, with per-host serialized updates. */
export class NodeTable {
  readonly #tails = new Map<string, Promise<unknown>>();
  /**
   * Ramdisk token → uid, built by the first token lookup's scan and kept up to date by this
   * table's writes ({@link ensureToken}, {@link update}, {@link remove}): every token is written
   * through them, so once built a miss is an answer (a forged token costs a map read, not a scan
   * of every host). A hit is still checked against the entry it names.
   */
  #byToken: Map<string, string> | undefined;

  /** `kv`: the `nodes` sublevel; `inventories`: the `inventories` sublevel (Store.inventories). */
  constructor(
    private readonly kv: KeyValue<unknown>,
    private readonly inventories: KeyValue<unknown>,
  ) {}

  /** The entry of host `uid` (empty when none). */
  async get(uid: string): Promise<NodeEntry> {
    return decodeNodeEntry(await this.kv.get(uid));
  }

  /**
   * Applies `change` to the current entry and stores the result (unless it returns the same
   * object untouched and `false`); updates of one uid run one after another.
   */
  update<T>(uid: string, change: (entry: NodeEntry) => { entry: NodeEntry; write: boolean; value: T }): Promise<T> {
    const run = async (): Promise<T> => {
      const current = await this.get(uid);
      const outcome = change(structuredClone(current));
      if (outcome.write) {
        await this.kv.put(uid, outcome.entry);
        this.#indexToken(uid, current.token, outcome.entry.token);
      }
      return outcome.value;
    };
    const previous = this.#tails.get(uid) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => undefined);
    this.#tails.set(uid, tail);
    void tail.then(() => {
      if (this.#tails.get(uid) === tail) this.#tails.delete(uid);
    });
    return next;
  }

  /**
   * The last inventory the ramdisk posted for host `uid`, or undefined. A record written before
   * inventories had their own sublevel still holds it in `local.inventory`: read from there.
   */
  async inventory(uid: string): Promise<unknown> {
    return (await this.inventories.get(uid)) ?? (await this.get(uid)).local?.inventory;
  }

  /**
   * Stores `inventory` as host `uid`'s last (synced), and drops an older copy from its `nodes`
   * record if it still has one. Call before the update that reports the inspection done, so a
   * finished inspection always has its inventory.
   */
  async putInventory(uid: string, inventory: unknown): Promise<void> {
    await this.inventories.put(uid, inventory);
    await this.update(uid, (entry) => {
      if (entry.local?.inventory === undefined) return { entry, write: false, value: undefined };
      delete entry.local.inventory;
      return { entry, write: true, value: undefined };
    });
  }

  /** Forgets host `uid` entirely. */
  async remove(uid: string): Promise<void> {
    const { token } = await this.update(uid, (entry) => ({ entry, write: false, value: entry }));
    await this.kv.del(uid);
    this.#indexToken(uid, token, undefined);
    await this.inventories.del(uid);
  }

  /**
   * Host `uid`'s ramdisk callback token (ramdisk-token.ts), created and stored with its entry
   * when it has none; serialized with the entry's other updates, so concurrent callers get one
   * token. The boot lookup calls this when it puts the token on a ramdisk's command line.
   */
  ensureToken(uid: string, random?: RandomBytes): Promise<string> {
    return this.update(uid, (entry) => {
      if (entry.token !== undefined && entry.token !== '') return { entry, write: false, value: entry.token };
      entry.token = generateRamdiskToken(random);
      return { entry, write: true, value: entry.token };
    });
  }

  /**
   * The uid whose entry holds `token`, if any: through the token index, checked against the
   * entry. The first lookup scans every entry to build the index; after that a token the index
   * does not know is not stored (every token is written through this table).
   */
  async findByToken(token: string): Promise<{ uid: string; entry: NodeEntry } | undefined> {
    if (token === '') return undefined;
    const index = this.#byToken;
    if (index !== undefined) {
      const hinted = index.get(token);
      if (hinted === undefined) return undefined;
      const entry = await this.get(hinted);
      if (entry.token === token) return { uid: hinted, entry };
      // The index and the store disagree (a write this table did not make): rebuild below.
    }
    // Every callback of every ramdisk authenticates here (a heartbeat each 10 s per host): the
    // scan runs once, and rebuilds the index on its way.
    const byToken = new Map<string, string>();
    let found: { uid: string; entry: NodeEntry } | undefined;
    for await (const [uid, entry] of this.#entries()) {
      if (entry.token !== undefined) byToken.set(entry.token, uid);
      if (found === undefined && entry.token === token) found = { uid, entry };
    }
    this.#byToken = byToken;
    return found;
  }

  /** Keeps the token index (once built) in step with a write of `uid` that changed its token from `before` to `after`. */
  #indexToken(uid: string, before: string | undefined, after: string | undefined): void {
    const index = this.#byToken;
    if (index === undefined || before === after) return;
    if (before !== undefined && index.get(before) === uid) index.delete(before);
    if (after !== undefined) index.set(after, uid);
  }

  /** The first uid whose entry satisfies `match`, if any (a linear scan of every entry). */
  async find(match: (entry: NodeEntry) => boolean): Promise<{ uid: string; entry: NodeEntry } | undefined> {
    for await (const [uid, entry] of this.#entries()) if (match(entry)) return { uid, entry };
    return undefined;
  }

  /** Every entry in key order, each decoded only when reached (the scan both lookups share; `find` stops at its match). */
  async *#entries(): AsyncGenerator<[string, NodeEntry]> {
    for (const [uid, value] of await this.kv.entries()) yield [uid, decodeNodeEntry(value)];
  }
}
