/**
 * Golden-file support for the DHCPv6 codec tests: a readable summary of a decoded message,
 * compared with `golden/<name>.golden`; `UPDATE_GOLDEN=1` rewrites the files (review the diff).
 */
import { join } from 'node:path';
import { assertGoldenFile } from '../../../helpers/golden.js';
import type { Dhcp6Message } from '../../../../bootsvc/dhcp6/message.js';

const GOLDEN_DIR = join('test', 'unit', 'bootsvc', 'dhcp6', 'golden');

/** A line-per-field summary of a message, relays indented. */
export function summarize6(m: Dhcp6Message, indent = ''): string {
  const lines: string[] = [];
  if (m.kind === 'relay') lines.push(`${indent}relay type=${m.type} hops=${m.hopCount} link=${m.linkAddress} peer=${m.peerAddress}`);
  else lines.push(`${indent}type=${m.type} xid=0x${m.transactionId.toString(16).padStart(6, '0')}`);
  for (const o of m.options) {
    const printable = o.value.length > 0 && o.value.every((b) => b >= 0x20 && b < 0x7f);
    lines.push(`${indent}option ${o.code} [${o.value.length}] ${Buffer.from(o.value).toString('hex')}${printable ? ` ${JSON.stringify(Buffer.from(o.value).toString('latin1'))}` : ''}`);
  }
  const out = lines.join('\n') + '\n';
  return m.kind === 'relay' ? out + summarize6(m.message, `${indent}  `) : out;
}

/** Asserts `actual` equals `golden/<name>.golden`, or writes it when UPDATE_GOLDEN=1. */
export function assertGolden6(name: string, actual: string): void {
  assertGoldenFile(GOLDEN_DIR, name, actual);
}
