// The pure parts of the PXE-storm simulator: client identities, the iPXE script reader, the CLI
// flags both ways, the client slicing of the background runner and the storm figures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DhcpOption } from '../../../bootsvc/dhcp/options.js';
import { decodeDhcpPacket } from '../../../bootsvc/dhcp/packet.js';
import { encodeClientDhcp, vendorClassOf } from '../../lab/pxe-sim/dhcp-messages.js';
import { parseBootScript, ScriptParseError } from '../../lab/pxe-sim/ipxe-script.js';
import { clientMac, formatStormArgs, parseStormArgs, percentile, sliceClients, summarizeStorm, type ClientResult, type StormOptions } from '../../lab/pxe-sim/index.js';

test('client MACs: the prefix, then index + 1 or its scattered image; distinct; bad input refused', () => {
  assert.equal(clientMac(0, '02:00:00', 'sequential'), '02:00:00:00:00:01');
  assert.equal(clientMac(299, '0A:BC:DE', 'sequential'), '0a:bc:de:00:01:2c');
  assert.equal(clientMac(0), '02:00:00:6b:4f:1d');
  assert.equal(new Set(Array.from({ length: 5000 }, (_, i) => clientMac(i))).size, 5000);
  assert.throws(() => clientMac(-1), RangeError);
  assert.throws(() => clientMac(0, '02:00'), RangeError);
});

test('a PXE DISCOVER carries the firmware options; an iPXE one adds 77 and 175', () => {
  const pxe = decodeDhcpPacket(encodeClientDhcp({ type: 'discover', stage: 'pxe', mac: clientMac(4), index: 4, arch: 'efi', xid: 42, secs: 3 }));
  assert.equal(pxe.flags & 0x8000, 0x8000, 'broadcast flag');
  assert.equal(Buffer.from(pxe.options.get(DhcpOption.vendorClass) ?? []).toString(), 'PXEClient:Arch:00007:UNDI:003016');
  assert.deepEqual([...pxe.options.get(DhcpOption.clientArchitecture) ?? []], [0, 7]);
  assert.equal(pxe.options.get(DhcpOption.clientMachineId)?.length, 17);
  assert.equal(pxe.options.get(DhcpOption.userClass), undefined);
  assert.equal(pxe.secs, 3);
  const ipxe = decodeDhcpPacket(encodeClientDhcp({ type: 'request', stage: 'ipxe', mac: clientMac(4), index: 4, arch: 'bios', xid: 43, secs: 0, requestedAddress: '10.88.64.9', serverId: '10.88.0.1' }));
  assert.equal(Buffer.from(ipxe.options.get(DhcpOption.userClass) ?? []).toString(), 'iPXE');
  assert.ok(ipxe.options.has(DhcpOption.ipxeEncapsulated));
  assert.equal(vendorClassOf('bios', 'ipxe'), 'PXEClient:Arch:00000:UNDI:002001');
});

const RACKSIDE_SCRIPT = `#!ipxe
# rackside: rackside ramdisk for h1 (02:00:00:00:00:01).
:retry
kernel --name vmlinuz http://10.88.0.1:8081/ramdisk/vmlinuz initrd=initrd rackside.url=http://10.88.0.1:8081 || goto failed
initrd --name initrd http://10.88.0.1:8081/ramdisk/initrd || goto failed
boot || goto failed
:failed
kernel http://elsewhere/other
`;

const scripts: Record<string, { text: string; kernel?: string; initrds?: string[]; error?: RegExp }> = {
  'rackside ramdisk script': { text: RACKSIDE_SCRIPT, kernel: 'http://10.88.0.1:8081/ramdisk/vmlinuz', initrds: ['http://10.88.0.1:8081/ramdisk/initrd'] },
  'relative URLs resolve against the script URL': { text: '#!ipxe\nkernel vmlinuz quiet\ninitrd -n x ../initrd.img\nboot\n', kernel: 'http://10.88.0.1:8081/boot/vmlinuz', initrds: ['http://10.88.0.1:8081/initrd.img'] },
  'nothing to do': { text: '#!ipxe\necho nothing to boot\nsleep 30\nchain http://x/boot.ipxe\n', error: /loads no kernel/ },
  'not a script': { text: 'kernel x\n', error: /not an iPXE script/ },
  'settings are not expanded': { text: '#!ipxe\nkernel http://${next-server}/vmlinuz\n', error: /iPXE settings/ },
};
for (const [name, c] of Object.entries(scripts)) {
  test(`boot script: ${name}`, () => {
    const parse = (): unknown => parseBootScript(c.text, 'http://10.88.0.1:8081/boot/02-00-00-00-00-01.ipxe');
    if (c.error !== undefined) assert.throws(parse, (err: unknown) => err instanceof ScriptParseError && (c.error?.test(err.message) ?? false));
    else assert.deepEqual(parse(), { kernel: c.kernel, initrds: c.initrds });
  });
}

test('storm flags round-trip, and bad ones are named', () => {
  const options: StormOptions = {
    clients: 200, firstIndex: 50, macPrefix: '02:aa:00', macOrder: 'sequential', arch: 'mixed', blksize: 8192, windowsize: 8, rampMs: 1000, lastPhase: 'dhcp2',
    timeouts: { dhcpWaitsMs: [1000, 2000], ipxeDhcpWaitsMs: [500], tftpTimeoutMs: 500, tftpRetries: 3, httpIdleMs: 9000, clientMs: 60_000 },
    expected: { firstStage: 1, kernel: 2, initrd: 3 },
  };
  assert.deepEqual(parseStormArgs(formatStormArgs(options, { out: '/tmp/x.json', json: true })), { options, output: { json: true, progress: false, out: '/tmp/x.json' } });
  assert.throws(() => parseStormArgs(['--arch', 'arm']), /--arch/);
  assert.throws(() => parseStormArgs(['--clients', '-3']), /--clients/);
  assert.throws(() => parseStormArgs(['--last-phase', 'pxe']), /--last-phase/);
});

test('clients are sliced into consecutive, complete ranges', () => {
  assert.deepEqual(sliceClients(10, 7, 3), [[10, 2], [12, 2], [14, 3]]);
  assert.deepEqual(sliceClients(0, 2, 5), [[0, 1], [1, 1]]);
});

test('storm figures: completion, nearest-rank percentiles per phase, failures grouped', () => {
  assert.equal(percentile([5, 1, 3, 2, 4], 50), 3);
  assert.equal(percentile([5, 1, 3, 2, 4], 99), 5);
  const ok = (index: number, start: number, tftpMs: number): ClientResult => ({
    index, mac: clientMac(index), arch: 'efi',
    phases: { dhcp1: { startMs: start, endMs: start + 10, retransmissions: 1 }, tftp: { startMs: start + 10, endMs: start + 10 + tftpMs, retransmissions: 0, bytes: 100, detail: 'ipxe.efi: blksize 1468, windowsize 4' } },
  });
  const failed = (index: number): ClientResult => ({
    index, mac: clientMac(index), arch: 'efi', failure: { phase: 'tftp', reason: `no answer after 5 resends (${index} blocks)` },
    phases: { dhcp1: { startMs: 1000, endMs: 1010, retransmissions: 0 }, tftp: { startMs: 1010, endMs: 1500, retransmissions: 5 } },
  });
  const s = summarizeStorm({ startedMs: 0, endedMs: 0, clients: [ok(0, 1000, 100), ok(1, 1005, 300), failed(2), failed(3)] });
  assert.equal(s.completionMs, 1500 - 1000, 'first DISCOVER to the end of the last client, failed ones included');
  assert.deepEqual([s.succeeded, s.failed], [2, 2]);
  assert.deepEqual(s.phases.tftp, { n: 2, p50Ms: 100, p99Ms: 300, maxMs: 300, retransmissions: 10, bytes: 200 });
  assert.equal(s.phases.dhcp1.n, 4);
  assert.deepEqual(s.failures, [{ phase: 'tftp', reason: 'no answer after N resends (N blocks)', count: 2, example: `${clientMac(2)}: no answer after 5 resends (2 blocks)` }]);
  assert.deepEqual(s.tftpGranted, { 'blksize 1468, windowsize 4': 2 });
  assert.equal(s.retransmissions, 12);
});
