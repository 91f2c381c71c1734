/** Shared context, decisions and packet helpers for the responder tests. */
import assert from 'node:assert/strict';
import type { BootDecision, Lease } from '../../../../bootsvc/boot-lookup.js';
import { decodeDhcpPacket, type DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import type { DhcpSubnet } from '../../../../bootsvc/dhcp/pool.js';
import type { ResponderContext, ResponderResult } from '../../../../bootsvc/dhcp/responder-context.js';
import { hex } from './fixtures.js';
import { toHex } from './golden.js';

export const NOW = 1_800_000_000_000;
export const SERVER = '10.20.0.1';
export const SCRIPT_URL = 'http://10.20.0.1:8081/boot/52-54-00-12-34-56.ipxe';

export const localSubnet: DhcpSubnet = {
  network: '10.20.0.0',
  prefixLength: 24,
  rangeStart: '10.20.0.100',
  rangeEnd: '10.20.0.199',
  router: '10.20.0.254',
  dnsServers: ['10.20.0.1'],
  domainName: 'rack.local',
};
export const relayedSubnet: DhcpSubnet = { network: '10.30.0.0', prefixLength: 24, rangeStart: '10.30.0.100', rangeEnd: '10.30.0.101', router: '10.30.0.1' };

export const decisions = {
  efi: { kind: 'ipxe-script', loader: 'ipxe.efi', scriptUrl: SCRIPT_URL },
  bios: { kind: 'ipxe-script', loader: 'undionly.kpxe', scriptUrl: SCRIPT_URL },
  http: { kind: 'ipxe-script', loader: 'http://10.20.0.1:8081/assets/ipxe.efi', scriptUrl: SCRIPT_URL },
  arm64: { kind: 'boot-file', bootFile: 'shimaa64.efi' },
  loopingIpxe: { kind: 'boot-file', bootFile: 'ipxe.efi' },
  localDisk: { kind: 'local-disk' },
} satisfies Record<string, BootDecision>;

/** A full-mode context on the local segment with a known host; override per case. */
export function context(over: Partial<ResponderContext> = {}): ResponderContext {
  return {
    mode: 'full',
    serverAddress: SERVER,
    serverPort: 67,
    subnets: [localSubnet, relayedSubnet],
    leases: [],
    reservations: [],
    leaseSeconds: 3600,
    bootDecision: decisions.efi,
    unknownHosts: 'ignore',
    nowMs: NOW,
    ...over,
  };
}

/** A lease record for tests. */
export function lease(mac: string, address: string, state: Lease['state'] = 'bound', expiresAtMs = NOW + 600_000): Lease {
  return { mac, address, state, expiresAtMs };
}

/** Decodes a fixture and applies header changes and option edits (hex values; `null` removes). */
export function request(bytes: Uint8Array, fields: Partial<DhcpPacket> = {}, options: Record<number, string | null> = {}): DhcpPacket {
  const p = decodeDhcpPacket(bytes);
  const map = new Map(p.options);
  for (const [code, value] of Object.entries(options)) {
    if (value === null) map.delete(Number(code));
    else map.set(Number(code), hex(value));
  }
  return { ...p, ...fields, options: map };
}

/** Narrows a result to a reply, failing the test otherwise. */
export function expectReply(r: ResponderResult, messageType: 'offer' | 'ack' | 'nak'): Extract<ResponderResult, { kind: 'reply' }> {
  if (r.kind !== 'reply') assert.fail(`expected a reply, got ${r.kind === 'ignore' ? r.reason : r.kind}`);
  assert.equal(r.messageType, messageType);
  return r;
}

/** An option of a packet as hex, or undefined. */
export function optionHex(p: DhcpPacket, code: number): string | undefined {
  const v = p.options.get(code);
  return v === undefined ? undefined : toHex(v);
}

/** An option of a packet as text, or undefined. */
export function optionText(p: DhcpPacket, code: number): string | undefined {
  const v = p.options.get(code);
  return v === undefined ? undefined : Buffer.from(v).toString('latin1');
}
