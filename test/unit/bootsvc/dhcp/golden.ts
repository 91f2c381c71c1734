/**
 * Golden-file support for the DHCP tests (netboot `dhcp4/packet_test.go` style): a readable
 * summary of a decoded packet, compared with `golden/<name>.golden` beside the sources;
 * `UPDATE_GOLDEN=1` rewrites the files (review the diff before committing).
 */
import { join } from 'node:path';
import { assertGoldenFile } from '../../../helpers/golden.js';
import { classifyClient } from '../../../../bootsvc/dhcp/client-info.js';
import type { DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';

const GOLDEN_DIR = join('test', 'unit', 'bootsvc', 'dhcp', 'golden');

/** Bytes → lower-case hex. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** A stable, line-per-field text summary of a packet and of how the client is classified. */
export function summarizePacket(p: DhcpPacket): string {
  const lines = [
    `op=${p.op} htype=${p.htype} hlen=${p.hlen} hops=${p.hops} xid=0x${p.xid.toString(16).padStart(8, '0')} secs=${p.secs} flags=0x${p.flags.toString(16).padStart(4, '0')}`,
    `ciaddr=${p.ciaddr} yiaddr=${p.yiaddr} siaddr=${p.siaddr} giaddr=${p.giaddr}`,
    `chaddr=${toHex(p.chaddr)} sname=${JSON.stringify(p.sname)} file=${JSON.stringify(p.file)}`,
  ];
  for (const [code, value] of p.options) {
    const printable = value.length > 0 && value.every((b) => b >= 0x20 && b < 0x7f);
    lines.push(`option ${code} [${value.length}] ${toHex(value)}${printable ? ` ${JSON.stringify(Buffer.from(value).toString('latin1'))}` : ''}`);
  }
  if (p.op === 1) lines.push(`client ${JSON.stringify(classifyClient(p))}`);
  return lines.join('\n') + '\n';
}

/** Asserts `actual` equals `golden/<name>.golden`, or writes it when UPDATE_GOLDEN=1. */
export function assertGolden(name: string, actual: string): void {
  assertGoldenFile(GOLDEN_DIR, name, actual);
}
