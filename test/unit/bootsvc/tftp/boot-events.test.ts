import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TftpBootEvent } from '../../../../bootsvc/events.js';
import { toTftpBootEvent } from '../../../../bootsvc/tftp/boot-events.js';
import type { TftpEvent } from '../../../../bootsvc/tftp/server-types.js';

const client = { address: '10.0.0.7', port: 2070 };
const at = { atMs: 5, clientAddress: '10.0.0.7', clientPort: 2070 };

const cases: Record<string, { event: TftpEvent; expected: TftpBootEvent | undefined }> = {
  'request with options': {
    event: { type: 'request', atMs: 5, client, file: 'ipxe.efi', kind: 'rrq', mode: 'octet', options: [{ name: 'blksize', value: '1468' }, { name: 'tsize', value: '0' }] },
    expected: { kind: 'tftp', phase: 'rrq', ...at, file: 'ipxe.efi', options: { blksize: '1468', tsize: '0' } },
  },
  'write request': {
    event: { type: 'request', atMs: 5, client, file: 'up', kind: 'wrq', mode: 'octet', options: [] },
    expected: { kind: 'tftp', phase: 'rrq', ...at, file: 'up', error: 'write request' },
  },
  'oack with sizes': {
    event: { type: 'oack', atMs: 5, client, file: 'ipxe.efi', options: [{ name: 'blksize', value: '1468' }, { name: 'windowsize', value: '4' }], ignoredOptions: [] },
    expected: { kind: 'tftp', phase: 'oack', ...at, file: 'ipxe.efi', options: { blksize: '1468', windowsize: '4' }, blockSizeBytes: 1468, windowSize: 4 },
  },
  done: {
    event: { type: 'done', atMs: 5, client, file: 'ipxe.efi', bytes: 1000, confirmed: true, durationMs: 12, blockSize: 1468, windowSize: 4, retransmittedPackets: 2, duplicateAcks: 0, timeouts: 1 },
    expected: { kind: 'tftp', phase: 'done', ...at, file: 'ipxe.efi', bytes: 1000, durationMs: 12, blockSizeBytes: 1468, windowSize: 4, retransmits: 2 },
  },
  'client abort': {
    event: { type: 'error', atMs: 5, client, file: 'ipxe.efi', origin: 'client', errorCode: 0, message: 'aborted at block 3 by the client: error 0 "x"', atBlock: 3, bytes: 1024, durationMs: 3, blockSize: 512, windowSize: 1 },
    expected: { kind: 'tftp', phase: 'error', ...at, file: 'ipxe.efi', bytes: 1024, durationMs: 3, error: 'aborted at block 3 by the client: error 0 "x"', errorCode: 0, blockSizeBytes: 512, windowSize: 1 },
  },
  'busy drop': {
    event: { type: 'busy', atMs: 5, client, file: 'ipxe.efi', activeTransfers: 128 },
    expected: { kind: 'tftp', phase: 'error', ...at, file: 'ipxe.efi', bytes: 0, error: 'request dropped: 128 transfers already running (the client will retry)' },
  },
  'server error is not a client event': { event: { type: 'server-error', atMs: 5, message: 'x' }, expected: undefined },
};

for (const [name, c] of Object.entries(cases)) {
  test(`toTftpBootEvent: ${name}`, () => {
    assert.deepEqual(toTftpBootEvent(c.event), c.expected);
  });
}
