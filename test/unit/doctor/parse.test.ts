/**
 * Tests of rackside doctor's small codecs (agent/doctor/parse.ts): `ss` output, passwd, ELF
 * static-ness, the probe DISCOVER and OFFER filter, the ASF presence ping, BMC knock targets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { BootpOp, decodeDhcpPacket, DhcpMessageType, DhcpOption, encodeDhcpPacket, getMessageType } from '../../../bootsvc/index.js';
import { getClientIdentifier } from '../../../bootsvc/dhcp/option-values.js';
import type { DhcpPacket } from '../../../bootsvc/dhcp/packet.js';
import {
  bmcKnock, decodeProbeOffer, encodeAsfPresencePing, encodeProbeDiscover, holdersOf, isAsfPresencePong, isStaticElf, niceFromStat, parseSsListeners, uidOfUser,
} from '../../../agent/doctor/parse.js';

const SS = [
  'udp   UNCONN 0      0            0.0.0.0:67         0.0.0.0:*    users:(("dnsmasq",pid=1234,fd=4))',
  'udp   UNCONN 0      0       0.0.0.0%eth0:67         0.0.0.0:*    users:(("node",pid=99,fd=21))',
  'udp   UNCONN 0      0          127.0.0.1:69         0.0.0.0:*    users:(("in.tftpd",pid=5,fd=3),("in.tftpd",pid=6,fd=3))',
  'tcp   LISTEN 0      511             [::]:8081          [::]:*    users:(("node",pid=7,fd=30))',
  'tcp   LISTEN 0      128          0.0.0.0:22         0.0.0.0:*',
  'garbage line',
  'udp   UNCONN 0      0                  *:*                *:*',
].join('\n');

test('parseSsListeners reads protocol, address, port, device and every user; skips junk', () => {
  const listeners = parseSsListeners(SS);
  assert.deepEqual(listeners, [
    { protocol: 'udp', address: '0.0.0.0', port: 67, users: [{ command: 'dnsmasq', pid: 1234 }] },
    { protocol: 'udp', address: '0.0.0.0', port: 67, device: 'eth0', users: [{ command: 'node', pid: 99 }] },
    { protocol: 'udp', address: '127.0.0.1', port: 69, users: [{ command: 'in.tftpd', pid: 5 }, { command: 'in.tftpd', pid: 6 }] },
    { protocol: 'tcp', address: '::', port: 8081, users: [{ command: 'node', pid: 7 }] },
    { protocol: 'tcp', address: '0.0.0.0', port: 22, users: [] },
  ]);
});

test('holdersOf matches wildcards both ways and keeps the device', () => {
  const listeners = parseSsListeners(SS);
  assert.deepEqual(holdersOf(listeners, 'udp', '0.0.0.0', 67).map((h) => [h.command, h.pid, h.device]), [['dnsmasq', 1234, undefined], ['node', 99, 'eth0']]);
  assert.deepEqual(holdersOf(listeners, 'udp', '0.0.0.0', 69).map((h) => h.pid), [5, 6], 'a wildcard test address overlaps a specific listener');
  assert.deepEqual(holdersOf(listeners, 'udp', '10.0.0.1', 69), [], 'different specific addresses do not clash');
  assert.deepEqual(holdersOf(listeners, 'tcp', '192.0.2.1', 8081).map((h) => h.command), ['node'], ':: overlaps an IPv4 address');
  assert.deepEqual(holdersOf(listeners, 'tcp', '0.0.0.0', 22), [{ command: '?', local: '0.0.0.0:22' }]);
  assert.deepEqual(holdersOf(listeners, 'tcp', '0.0.0.0', 67), [], 'protocol matters');
});

test('uidOfUser', () => {
  const passwd = 'root:x:0:0:root:/root:/bin/bash\nrackside:x:998:998:rackside provisioning agent:/var/lib/rackside:/usr/sbin/nologin\n';
  assert.equal(uidOfUser(passwd, 'rackside'), 998);
  assert.equal(uidOfUser(passwd, 'root'), 0);
  assert.equal(uidOfUser(passwd, 'nobody'), undefined);
  assert.equal(uidOfUser('rackside:x:abc:1::/:/bin/sh', 'rackside'), undefined);
});

/** A minimal little-endian ELF64 header with the given program header types. */
function elf64(types: number[]): Uint8Array {
  const phoff = 64;
  const buf = Buffer.alloc(phoff + 56 * types.length);
  buf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  buf.writeBigUInt64LE(BigInt(phoff), 0x20);
  buf.writeUInt16LE(56, 0x36);
  buf.writeUInt16LE(types.length, 0x38);
  types.forEach((t, i) => buf.writeUInt32LE(t, phoff + i * 56));
  return buf;
}

/** A minimal big-endian ELF32 header. */
function elf32be(types: number[]): Uint8Array {
  const phoff = 52;
  const buf = Buffer.alloc(phoff + 32 * types.length);
  buf.set([0x7f, 0x45, 0x4c, 0x46, 1, 2, 1], 0);
  buf.writeUInt32BE(phoff, 0x1c);
  buf.writeUInt16BE(32, 0x2a);
  buf.writeUInt16BE(types.length, 0x2c);
  types.forEach((t, i) => buf.writeUInt32BE(t, phoff + i * 32));
  return buf;
}

const elfCases: Record<string, [Uint8Array, boolean | undefined]> = {
  'ELF64 with PT_INTERP is dynamic': [elf64([6, 3, 1, 1, 2]), false],
  'ELF64 without PT_INTERP is static': [elf64([1, 1, 4, 7]), true],
  'ELF32 big-endian static': [elf32be([1, 1]), true],
  'ELF32 big-endian dynamic': [elf32be([3, 1]), false],
  'not ELF (a shell script)': [Buffer.from('#!/bin/sh\necho hi\n'.padEnd(80, ' ')), undefined],
  'truncated program headers': [elf64([1, 1, 1]).subarray(0, 100), undefined],
  'too short': [Uint8Array.of(0x7f, 0x45, 0x4c, 0x46), undefined],
};
for (const [name, [bytes, expected]] of Object.entries(elfCases)) {
  test(`isStaticElf: ${name}`, () => {
    assert.equal(isStaticElf(bytes), expected);
  });
}

test('encodeProbeDiscover: a broadcast-flag DISCOVER from the MAC with the xid', () => {
  const packet = decodeDhcpPacket(encodeProbeDiscover('52:54:00:AB:cd:01', 0xdeadbeef));
  assert.equal(packet.op, BootpOp.request);
  assert.equal(packet.xid, 0xdeadbeef);
  assert.equal(packet.flags, 0x8000);
  assert.deepEqual([...packet.chaddr.subarray(0, 6)], [0x52, 0x54, 0x00, 0xab, 0xcd, 0x01]);
  assert.equal(getMessageType(packet.options), DhcpMessageType.discover);
  assert.equal(getClientIdentifier(packet.options), '01525400abcd01');
  assert.deepEqual([...(packet.options.get(DhcpOption.parameterRequestList) ?? [])], [1, 3, 6, 54, 66, 67]);
  assert.throws(() => encodeProbeDiscover('not-a-mac', 1), /not a MAC address/);
});

function offer(over: Partial<DhcpPacket> & { type?: number; serverId?: number[] } = {}): Buffer {
  const options = new Map<number, Uint8Array>([[DhcpOption.messageType, Uint8Array.of(over.type ?? DhcpMessageType.offer)]]);
  if (over.serverId !== undefined) options.set(DhcpOption.serverIdentifier, Uint8Array.from(over.serverId));
  return encodeDhcpPacket({
    op: BootpOp.reply, htype: 1, hlen: 6, hops: 0, xid: 7, secs: 0, flags: 0x8000, ciaddr: '0.0.0.0', yiaddr: '10.9.0.50',
    siaddr: '0.0.0.0', giaddr: '0.0.0.0', chaddr: new Uint8Array(6), sname: '', file: '', options, ...over,
  });
}

test('decodeProbeOffer keeps only OFFERs for our xid', () => {
  assert.deepEqual(decodeProbeOffer(offer({ serverId: [10, 9, 0, 1] }), 7, '10.9.0.1'), { serverId: '10.9.0.1', sourceAddress: '10.9.0.1', offeredAddress: '10.9.0.50' });
  assert.deepEqual(decodeProbeOffer(offer({ file: 'pxelinux.0' }), 7, '10.9.0.2'), { sourceAddress: '10.9.0.2', offeredAddress: '10.9.0.50', bootFile: 'pxelinux.0' });
  assert.equal(decodeProbeOffer(offer(), 8, '10.9.0.1'), undefined, 'other xid');
  assert.equal(decodeProbeOffer(offer({ type: DhcpMessageType.ack }), 7, '10.9.0.1'), undefined, 'not an OFFER');
  assert.equal(decodeProbeOffer(offer({ op: BootpOp.request }), 7, '10.9.0.1'), undefined, 'a request (another client)');
  assert.equal(decodeProbeOffer(Buffer.from('garbage'), 7, '10.9.0.1'), undefined, 'malformed is dropped');
});

test('ASF presence ping and pong (DSP0136)', () => {
  assert.deepEqual([...encodeAsfPresencePing(0x12)], [0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x80, 0x12, 0x00, 0x00]);
  const pong = Buffer.from([0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x40, 0x12, 0x00, 0x10, ...new Array<number>(16).fill(0)]);
  assert.equal(isAsfPresencePong(pong, 0x12), true);
  assert.equal(isAsfPresencePong(pong, 0x14), false, 'other tag');
  assert.equal(isAsfPresencePong(encodeAsfPresencePing(0x12), 0x12), false, 'our own ping');
  assert.equal(isAsfPresencePong(pong.subarray(0, 8), 0x12), false);
});

const knockCases: Record<string, [string, ReturnType<typeof bmcKnock>]> = {
  'ipmi default port': ['ipmi://10.0.0.5', { kind: 'target', protocol: 'udp', hostname: '10.0.0.5', port: 623 }],
  'bare host:port is IPMI': ['10.0.0.5:6230', { kind: 'target', protocol: 'udp', hostname: '10.0.0.5', port: 6230 }],
  'redfish https default': ['redfish://bmc1.rack/redfish/v1/Systems/1', { kind: 'target', protocol: 'tcp', hostname: 'bmc1.rack', port: 443 }],
  'redfish+http with port': ['redfish+http://10.0.0.6:8000/redfish/v1/Systems/1', { kind: 'target', protocol: 'tcp', hostname: '10.0.0.6', port: 8000 }],
  'idrac virtual media': ['idrac-virtualmedia://10.0.0.7/redfish/v1/Systems/System.Embedded.1', { kind: 'target', protocol: 'tcp', hostname: '10.0.0.7', port: 443 }],
  'IPv6 redfish': ['redfish://[fd00::7]:8443/redfish/v1/Systems/1', { kind: 'target', protocol: 'tcp', hostname: 'fd00::7', port: 8443 }],
  'fake driver': ['fake://host-1', { kind: 'none', reason: 'fake BMC (no network)' }],
};
for (const [name, [address, expected]] of Object.entries(knockCases)) {
  test(`bmcKnock: ${name}`, () => {
    assert.deepEqual(bmcKnock(address), expected);
  });
}

test('bmcKnock throws on an invalid address', () => {
  assert.throws(() => bmcKnock('bogus://x'), /unknown BMC type/);
});

test('niceFromStat: proc(5) field 19, counted after the last parenthesis of the command name', () => {
  // A thread named with spaces and parentheses; fields 3.. follow ") ".
  const fields = ['S', ...Array.from({ length: 15 }, (_, i) => String(i + 4)), '-5', '1', '0'];
  assert.equal(niceFromStat(`4242 (node (x) y) ${fields.join(' ')}`), -5);
  assert.equal(niceFromStat(`1 (init) ${fields.join(' ').replace(' -5 ', ' 19 ')}`), 19);
  assert.equal(niceFromStat('not a stat line'), undefined);
  assert.equal(niceFromStat('1 (x) S 2'), undefined);
});

test('niceFromStat on this process: the main thread\'s nice value as os.getPriority reads it', () => {
  assert.equal(niceFromStat(readFileSync(`/proc/${String(process.pid)}/stat`, 'utf8')), getPriority(0));
});
