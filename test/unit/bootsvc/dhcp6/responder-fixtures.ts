/** Shared setup of the DHCPv6 responder tests and the fuzz campaign: settings, an in-memory lease store, decisions. */
import type { BootDecision, Lease, LeaseStore } from '../../../../bootsvc/boot-lookup.js';
import { leaseKey } from '../../../../bootsvc/boot-lookup.js';
import { Lease6Table } from '../../../../bootsvc/dhcp6/lease-table.js';
import { link6, type Link6 } from '../../../../bootsvc/dhcp6/pool.js';
import type { Responder6Context, Responder6Settings } from '../../../../bootsvc/dhcp6/responder.js';
import { duidLl } from '../../../../bootsvc/dhcp6/values.js';

export const SERVER_DUID = duidLl(Uint8Array.of(2, 0, 0, 0, 0, 1));
export const SERVER_ADDRESS = 'fd00:1::1';

/** The server's link: fd00:1::/64 with the range fd00:1::100–fd00:1::13f (64 addresses). */
export const LINK = link6('fd00:1::/64', 'fd00:1::100', 'fd00:1::13f');

/** Default responder settings. */
export function settings6(over: Partial<Responder6Settings> = {}): Responder6Settings {
  return {
    serverDuid: SERVER_DUID,
    leaseSeconds: 3600, offerHoldSeconds: 60, declineQuarantineSeconds: 600, rapidCommit: true, dns: [], tftpServer: SERVER_ADDRESS, ...over,
  };
}

export const decisions6: Record<string, BootDecision> = {
  ipxe: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: 'http://[fd00:1::1]:8081/boot/52:54:00:12:34:56.ipxe' },
  http: { kind: 'ipxe-script', loader: 'http://[fd00:1::1]:8081/boot/ipxe.efi', scriptUrl: 'http://[fd00:1::1]:8081/boot/52:54:00:12:34:56.ipxe' },
  none: { kind: 'none' },
};

/** A LeaseStore in memory, counting writes. */
export function memoryLeaseStore(initial: Lease[] = []): LeaseStore & { records: Map<string, Lease> } {
  const records = new Map(initial.map((l) => [leaseKey(l), l]));
  return {
    records,
    get: (key) => Promise.resolve(records.get(key)),
    put: (lease) => { records.set(leaseKey(lease), lease); return Promise.resolve(); },
    delete: (key) => { records.delete(key); return Promise.resolve(); },
    list: () => Promise.resolve([...records.values()]),
  };
}

/** A context over `table`. */
export function context6(table: Lease6Table, over: Partial<Responder6Context> = {}): Responder6Context {
  const link: Link6 | undefined = 'link' in over ? over.link : LINK;
  return { settings: settings6(), leases: table, mac: '52:54:00:12:34:56', bootDecision: decisions6.ipxe, nowMs: 1_000_000, ...over, link };
}
