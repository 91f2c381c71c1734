/**
 * @module The agent's {@link LeaseStore} for the DHCPv6 server: DHCPv6 lease records in the
 * store's `leases` sublevel beside DHCPv4's, under keys `dhcp6/<leaseKey>` (the host's MAC, or
 * `declined:<address>`), so one MAC holds one IPv4 and one IPv6 lease. Records read back that
 * are not well-formed DHCPv6 leases are skipped and reported; `applyBatch` writes every change
 * in one synced batch (the server's group commit).
 */
import { isIpv6Lease, leaseKey, normalizeMacAddress, type Lease, type LeaseChange, type LeaseStore } from '../../bootsvc/index.js';
import type { KeyValue, KeyValueOperation } from '../store/types.js';

/** Key prefix of DHCPv6 records in the `leases` sublevel (the DHCPv4 store skips these keys). */
export const DHCP6_LEASE_PREFIX = 'dhcp6/';

/** Why `value` under `key` is not a DHCPv6 lease record, or `undefined` when it is one. */
function problemOf(key: string, value: unknown): string | undefined {
  if (!isIpv6Lease(value)) return 'not a DHCPv6 lease record';
  if (normalizeMacAddress(value.mac) !== value.mac) return 'mac is not in lower-case colon form';
  const expected = DHCP6_LEASE_PREFIX + leaseKey(value);
  return expected === key ? undefined : `stored under "${key}" instead of "${expected}"`;
}

function toRecord(lease: Lease): Lease {
  return { mac: lease.mac, address: lease.address, state: lease.state, expiresAtMs: lease.expiresAtMs };
}

/**
 * A DHCPv6 {@link LeaseStore} over `kv` (the `leases` sublevel). `put` rejects with a
 * TypeError for a record that is not a DHCPv6 lease; keys passed to `get`/`delete` are the
 * server's ({@link leaseKey}), prefixed here.
 */
export function createLease6Store(kv: KeyValue<unknown>, onInvalid?: (key: string, reason: string) => void): LeaseStore & { applyBatch: (changes: readonly LeaseChange[]) => Promise<void> } {
  const prepare = (lease: Lease): { key: string; record: Lease } => {
    const key = DHCP6_LEASE_PREFIX + leaseKey(lease);
    const problem = problemOf(key, lease);
    if (problem !== undefined) throw new TypeError(`refusing to store DHCPv6 lease ${JSON.stringify(lease)}: ${problem}`);
    return { key, record: toRecord(lease) };
  };
  return {
    async get(key) {
      const value = await kv.get(DHCP6_LEASE_PREFIX + key);
      return value !== undefined && problemOf(DHCP6_LEASE_PREFIX + key, value) === undefined ? toRecord(value as Lease) : undefined;
    },
    async put(lease) {
      const { key, record } = prepare(lease);
      await kv.put(key, record);
    },
    async delete(key) {
      await kv.del(DHCP6_LEASE_PREFIX + key);
    },
    async list() {
      const out: Lease[] = [];
      for (const [key, value] of await kv.entries()) {
        if (!key.startsWith(DHCP6_LEASE_PREFIX)) continue;
        const problem = problemOf(key, value);
        if (problem === undefined) out.push(toRecord(value as Lease));
        else onInvalid?.(key, problem);
      }
      return out;
    },
    async applyBatch(changes) {
      const operations = changes.map((c): KeyValueOperation<unknown> => {
        if (c.op === 'delete') return { type: 'del', key: DHCP6_LEASE_PREFIX + c.key };
        const { key, record } = prepare(c.lease);
        return { type: 'put', key, value: record };
      });
      await kv.batch(operations);
    },
  };
}
