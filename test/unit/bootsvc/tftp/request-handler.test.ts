/**
 * The TFTP server's pure request decisions (bootsvc/tftp/request-handler.ts) as tables: what a
 * datagram on the listening port causes, whether a request is served, and the transfer's
 * parameters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TftpWireError } from '../../../../bootsvc/tftp/errors.js';
import { encodeAckPacket, encodeTftpRequest, type TftpOptionPair } from '../../../../bootsvc/tftp/packet.js';
import { decideRequest, onListenerDatagram, transferConfigFor, type ListenerAction, type ListenerView, type TransferSettings } from '../../../../bootsvc/tftp/request-handler.js';

const A = { address: '10.0.0.5', port: 2000 };
const run = (address: string, port: number, file: string): [string, { client: { address: string; port: number }; file: string }] => [`${address}:${port}`, { client: { address, port }, file }];
const view = (over: Partial<ListenerView> = {}): ListenerView => ({ stopping: false, maxTransfers: 4, active: new Map(), pending: new Set(), ...over });

/** Actions as short text. */
function show(actions: readonly ListenerAction[]): string[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'count':
        return `count ${a.counter}`;
      case 'moved-on':
        return `moved-on ${a.key}`;
      case 'emit':
        return a.event.type === 'busy' ? `busy ${a.event.activeTransfers}` : a.event.type;
      case 'accept':
        return `accept ${a.key} ${a.request.kind} ${a.request.filename}`;
    }
  });
}

const rrq = (file: string): Buffer => encodeTftpRequest('rrq', file);

const listenerCases: Record<string, { bytes: Buffer; view: ListenerView; expected: string[] }> = {
  'not TFTP: malformed': { bytes: Buffer.from([0, 9, 1]), view: view(), expected: ['count malformedPackets'] },
  'an ACK on the listening port: unexpected': { bytes: encodeAckPacket(1), view: view(), expected: ['count unexpectedPackets'] },
  'a new read request is accepted': { bytes: rrq('shimx64.efi'), view: view(), expected: ['count requests', 'accept 10.0.0.5:2000 rrq shimx64.efi'] },
  'a write request is accepted here and refused by decideRequest': { bytes: encodeTftpRequest('wrq', 'x'), view: view(), expected: ['count requests', 'accept 10.0.0.5:2000 wrq x'] },
  'a retransmitted request of a running transfer': { bytes: rrq('a'), view: view({ active: new Map([run('10.0.0.5', 2000, 'a')]) }), expected: ['count requests', 'count duplicateRequests'] },
  'a retransmitted request of one being prepared': { bytes: rrq('a'), view: view({ pending: new Set(['10.0.0.5:2000']) }), expected: ['count requests', 'count duplicateRequests'] },
  'the same address asks for another file: its transfers of other files hear it moved on': {
    bytes: rrq('/ramdisk/initrd'),
    view: view({ active: new Map([run('10.0.0.5', 1999, 'ramdisk/vmlinuz'), run('10.0.0.5', 1998, 'ramdisk/initrd'), run('10.0.0.6', 1999, 'ramdisk/vmlinuz')]) }),
    expected: ['count requests', 'moved-on 10.0.0.5:1999', 'accept 10.0.0.5:2000 rrq /ramdisk/initrd'],
  },
  'beyond maxTransfers: dropped and reported busy (moved-on still told)': {
    bytes: rrq('b'),
    view: view({ maxTransfers: 2, active: new Map([run('10.0.0.5', 1, 'a')]), pending: new Set(['10.0.0.9:1']) }),
    expected: ['count requests', 'moved-on 10.0.0.5:1', 'count busyDrops', 'busy 2'],
  },
  'while stopping: dropped, nothing told': { bytes: rrq('b'), view: view({ stopping: true, active: new Map([run('10.0.0.5', 1, 'a')]) }), expected: ['count requests', 'count busyDrops', 'busy 1'] },
};

for (const [name, c] of Object.entries(listenerCases)) {
  test(`listener: ${name}`, () => {
    assert.deepEqual(show(onListenerDatagram(c.bytes, A, c.view, 1234)), c.expected);
  });
}

test('listener: the busy event carries the time, client and file', () => {
  const [, , busy] = onListenerDatagram(rrq('x'), A, view({ maxTransfers: 0 }), 1234);
  assert.deepEqual(busy, { type: 'emit', event: { type: 'busy', atMs: 1234, client: A, file: 'x', activeTransfers: 0 } });
});

const decisions: Record<string, { request: Parameters<typeof decideRequest>[0]; expected: ReturnType<typeof decideRequest> }> = {
  'octet, leading slash': { request: { kind: 'rrq', filename: '/grub/grub.cfg', mode: 'octet', options: [] }, expected: { kind: 'open', path: 'grub/grub.cfg', netascii: false } },
  netascii: { request: { kind: 'rrq', filename: 'pxelinux.cfg/default', mode: 'netascii', options: [] }, expected: { kind: 'open', path: 'pxelinux.cfg/default', netascii: true } },
  'write request': { request: { kind: 'wrq', filename: 'up', mode: 'octet', options: [] }, expected: { kind: 'refuse', file: 'up', errorCode: TftpWireError.accessViolation, message: 'read-only server: write requests are refused' } },
  'mail mode': { request: { kind: 'rrq', filename: 'a', mode: 'mail', options: [] }, expected: { kind: 'refuse', file: 'a', errorCode: TftpWireError.illegalOperation, message: 'transfer mode "mail" is not supported (use octet)' } },
};

for (const [name, c] of Object.entries(decisions)) {
  test(`decideRequest: ${name}`, () => {
    assert.deepEqual(decideRequest(c.request), c.expected);
  });
}

test('decideRequest: a name path.ts refuses is an access violation', () => {
  const d = decideRequest({ kind: 'rrq', filename: '../etc/passwd', mode: 'octet', options: [] });
  if (d.kind !== 'refuse') assert.fail(`not refused: ${JSON.stringify(d)}`);
  assert.equal(d.errorCode, TftpWireError.accessViolation);
  assert.match(d.message, /^refused file name: .*parent directory/);
});

const settings: TransferSettings = { maxBlockSize: 65464, maxWindowSize: 64, maxWindowBytes: 80 * 1024, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 8 };
const o = (name: string, value: string): TftpOptionPair => ({ name, value });

test('transferConfigFor: the server adapts its timeout unless the client fixed one (RFC 2349); the OACK in the client\'s order', () => {
  const plain = transferConfigFor({ options: [] }, settings, 5000);
  assert.deepEqual(plain.config, { fileSizeBytes: 5000, blockSize: 512, windowSize: 1, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 8, oack: [] });
  const fixed = transferConfigFor({ options: [o('tsize', '0'), o('timeout', '3'), o('blksize', '1468'), o('windowsize', '16'), o('x', '1')] }, settings, 5000);
  assert.deepEqual(fixed.config, {
    fileSizeBytes: 5000, blockSize: 1468, windowSize: 16, timeoutMs: 3000, minTimeoutMs: 3000, maxTimeoutMs: 3000, maxRetries: 8,
    oack: [o('tsize', '5000'), o('timeout', '3'), o('blksize', '1468'), o('windowsize', '16')],
  });
  assert.deepEqual(fixed.ignored, [{ name: 'x', value: '1', reason: 'unknown option' }]);
});
