/**
 * @module The agent's {@link LeaseStore} for the DHCP server: lease records in the store's
 * `leases` sublevel (docs/architecture.md, "Store"), one JSON value per {@link leaseKey} — the client's MAC
 * for `offered`/`bound` records, `declined:<address>` for quarantines. Every put and delete is
 * a synced LevelDB write (the store's `KeyValue` does that), so a lease acknowledged before a
 * crash is still there after it. Values that are not well-formed lease records (hand-edited,
 * or written by a future version) are skipped on read and reported, never thrown: the DHCP
 * server must come up with whatever leases are readable.
 *
 * Group commit: the store's KeyValue applies several operations in one synced batch, so the
 * lease store offers `applyBatch` and the DHCP server's writer
 * makes every binding made during one fsync durable in the next single write (as ISC dhcpd's
 * `delayed-ack` does) — with perfdhcp here that is the difference between 0.8× and 1.05× Kea.
 */
import { isIpv4, leaseKey, normalizeMacAddress, type Lease, type LeaseChange, type LeaseStore } from '../../bootsvc/index.js';
import type { KeyValue, KeyValueOperation } from '../store/types.js';
import { DHCP6_LEASE_PREFIX } from './lease-store6.js';

/** The lease store, with `applyBatch`: every change in one synced write. */
export type AgentLeaseStore = LeaseStore & { applyBatch: (changes: readonly LeaseChange[]) => Promise<void> };

/** Options of {@link createLeaseStore}. */
export interface LeaseStoreOptions {
  /** Called for each stored value that is not a lease record (key, why). */
  onInvalid?: (key: string, reason: string) => void;
}

/** Why `value` stored under `key` is not a usable lease record, or `undefined` when it is one. */
export function checkLeaseRecord(key: string, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const v = value as Record<string, unknown>;
  if (typeof v.mac !== 'string' || normalizeMacAddress(v.mac) !== v.mac) return 'mac is not a lower-case colon MAC address';
  if (typeof v.address !== 'string' || !isIpv4(v.address)) return 'address is not an IPv4 address';
  if (v.state !== 'offered' && v.state !== 'bound' && v.state !== 'declined') return 'state is not offered, bound or declined';
  if (typeof v.expiresAtMs !== 'number' || !Number.isFinite(v.expiresAtMs)) return 'expiresAtMs is not a number';
  if (v.hostName !== undefined && typeof v.hostName !== 'string') return 'hostName is not a string';
  const expected = leaseKey({ mac: v.mac, address: v.address, state: v.state });
  if (expected !== key) return `stored under "${key}" instead of "${expected}"`;
  return undefined;
}

/** Copies the lease fields only (no stray properties go to disk). */
function toRecord(lease: Lease): Lease {
  const record: Lease = { mac: lease.mac, address: lease.address, state: lease.state, expiresAtMs: lease.expiresAtMs };
  if (lease.hostName !== undefined) record.hostName = lease.hostName;
  return record;
}

/** Checks `lease` for writing and returns its key and the record to store; throws a TypeError when it is not valid. */
function prepare(lease: Lease): { key: string; record: Lease } {
  const key = leaseKey(lease);
  const problem = checkLeaseRecord(key, lease);
  if (problem !== undefined) throw new TypeError(`refusing to store lease ${JSON.stringify(lease)}: ${problem}`);
  return { key, record: toRecord(lease) };
}

/**
 * A {@link LeaseStore} over `kv` (the store's `leases` sublevel). `put` rejects with a
 * TypeError for a record that is not a valid lease (so a bug cannot write garbage the next
 * start would skip); store errors propagate unchanged. `applyBatch` writes all changes in one
 * synced write; nothing is written when one lease is invalid.
 */
export function createLeaseStore(kv: KeyValue<unknown>, options: LeaseStoreOptions = {}): AgentLeaseStore {
  const valid = (key: string, value: unknown): value is Lease => {
    const problem = checkLeaseRecord(key, value);
    if (problem === undefined) return true;
    options.onInvalid?.(key, problem);
    return false;
  };
  return {
    async get(key) {
      const value = await kv.get(key);
      return value !== undefined && valid(key, value) ? toRecord(value) : undefined;
    },
    async put(lease) {
      const { key, record } = prepare(lease);
      await kv.put(key, record);
    },
    async delete(key) {
      await kv.del(key);
    },
    async list() {
      const out: Lease[] = [];
      // DHCPv6 records share the sublevel under their own prefix (lease-store6.ts): not ours to read.
      for (const [key, value] of await kv.entries()) if (!key.startsWith(DHCP6_LEASE_PREFIX) && valid(key, value)) out.push(toRecord(value));
      return out;
    },
    async applyBatch(changes) {
      const operations = changes.map((c): KeyValueOperation<unknown> => {
        if (c.op === 'delete') return { type: 'del', key: c.key };
        const { key, record } = prepare(c.lease);
        return { type: 'put', key, value: record };
      });
      await kv.batch(operations);
    },
  };
}
