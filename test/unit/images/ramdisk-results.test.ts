import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRamdiskResult, RamdiskProtocolError, type RootDeviceHints } from '../../../images/index.js';
import { diskMatchesHints, pickRootDisk } from '../../../images/root-device-hints.js';
import type { RamdiskDisk } from '../../../images/ramdisk-results.js';

/** A clean report as images/ramdisk/lib-clean.sh prints it, in mode erase. */
const cleanDisk = {
  name: '/dev/sda', serial: 'S1', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', size: 2 ** 31, method: 'zeroout', bytes_wiped: 2 ** 31, duration_seconds: 4,
  verification: { samples: 18, bytes_read: 2 * 1048576 + 16 * 4096, nonzero_samples: 0 }, status: 'ok', message: null,
};
const disk = { name: '/dev/sda', size: 2 ** 31, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'S1', wwn: '0x5', wwn_with_extension: '0x5', wwn_vendor_extension: null, hctl: '0:0:0:0', by_path: '/dev/disk/by-path/pci-0000:00:1f.2-ata-1.0' };

test('decodeRamdiskResult decodes deploy, clean and raid details and the log tail', () => {
  const deploy = decodeRamdiskResult({
    command_id: 'd', command: 'deploy', status: 'ok', message: null, log: ['deploy: done'],
    details: { root_device: disk, image: { url: 'http://h/i', bytes: 10, checksum_type: 'sha256', checksum: 'ab', attempts: 2 }, config_drive: { offset_bytes: 4096, size_bytes: 1024 }, duration_seconds: 3 },
  });
  assert.deepEqual(deploy.details, {
    rootDevice: { name: '/dev/sda', sizeBytes: 2 ** 31, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'S1', wwn: '0x5', wwnWithExtension: '0x5', wwnVendorExtension: null, hctl: '0:0:0:0', byPath: '/dev/disk/by-path/pci-0000:00:1f.2-ata-1.0' },
    image: { url: 'http://h/i', bytes: 10, checksumType: 'sha256', checksum: 'ab', attempts: 2 },
    configDrive: { offsetBytes: 4096, sizeBytes: 1024 },
    durationSeconds: 3,
  });
  assert.deepEqual(deploy.log, ['deploy: done']);
  const clean = decodeRamdiskResult({
    command_id: 'c', command: 'clean', status: 'error', message: '1 disk(s) could not be erased',
    details: { mode: 'erase', disks: [{ name: '/dev/vda', serial: null, size: 5, method: 'dd-zero', bytes_wiped: 5, duration_seconds: 1, status: 'error', message: 'x' }] },
  });
  assert.deepEqual(clean.details, { mode: 'erase', disks: [{ name: '/dev/vda', serial: null, wwn: null, model: null, sizeBytes: 5, method: 'dd-zero', bytesWiped: 5, durationSeconds: 1, verification: null, status: 'error', message: 'x' }] }, 'a report of an older ramdisk: no wwn, model, verification');
  const raid = decodeRamdiskResult({ command_id: 'r', command: 'raid', status: 'ok', message: null, details: { volumes: [{ device: '/dev/md0', level: '1', members: ['/dev/vda1', '/dev/vdb1'], size: 9 }] } });
  assert.deepEqual(raid.details, { volumes: [{ device: '/dev/md0', level: '1', members: ['/dev/vda1', '/dev/vdb1'], sizeBytes: 9 }] });
  assert.equal(decodeRamdiskResult({ command_id: null, command: 'poweroff', status: 'ok', message: null, details: null }).details, null);
});

const badResults: Record<string, unknown> = {
  'not an object': [],
  'unknown status': { command: 'deploy', status: 'maybe' },
  'log of numbers': { command: 'x', status: 'ok', log: [1] },
  'deploy details without an image': { command: 'deploy', status: 'ok', details: { root_device: disk, duration_seconds: 1 } },
  'clean disk with a bad method': { command: 'clean', status: 'ok', details: { mode: 'metadata', disks: [{ name: 'a', size: 1, method: 'shred', bytes_wiped: 1, duration_seconds: 0, status: 'ok' }] } },
  'raid members not strings': { command: 'raid', status: 'ok', details: { volumes: [{ device: 'm', level: '1', members: [1], size: 1 }] } },
};
for (const [name, body] of Object.entries(badResults)) {
  test(`decodeRamdiskResult rejects ${name}`, () => {
    assert.throws(() => decodeRamdiskResult(body), RamdiskProtocolError);
  });
}

test('decodeRamdiskResult: a clean disk report carries its identity and read-back; a malformed one names the field', () => {
  const ok = decodeRamdiskResult({ command_id: 'c2', command: 'clean', status: 'ok', message: null, details: { mode: 'erase', disks: [cleanDisk, { ...cleanDisk, name: '/dev/sdb', method: 'kept', bytes_wiped: 0, duration_seconds: 0, verification: null, message: 'software RAID member: kept' }] } });
  assert.deepEqual(ok.details, {
    mode: 'erase',
    disks: [
      { name: '/dev/sda', serial: 'S1', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', sizeBytes: 2 ** 31, method: 'zeroout', bytesWiped: 2 ** 31, durationSeconds: 4, verification: { samples: 18, bytesRead: 2162688, nonZeroSamples: 0 }, status: 'ok', message: null },
      { name: '/dev/sdb', serial: 'S1', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', sizeBytes: 2 ** 31, method: 'kept', bytesWiped: 0, durationSeconds: 0, verification: null, status: 'ok', message: 'software RAID member: kept' },
    ],
  });
  const bad = (second: Record<string, unknown>): unknown => ({ command: 'clean', status: 'error', details: { mode: 'erase', disks: [cleanDisk, second] } });
  assert.throws(() => decodeRamdiskResult(bad({ ...cleanDisk, wwn: 5 })), { name: 'RamdiskProtocolError', message: /details\.disks\[1\]\.wwn must be a string or null/ });
  assert.throws(() => decodeRamdiskResult(bad({ ...cleanDisk, model: [] })), { message: /details\.disks\[1\]\.model must be a string or null/ });
  assert.throws(() => decodeRamdiskResult(bad({ ...cleanDisk, verification: 'ok' })), { message: /details\.disks\[1\]\.verification must be a JSON object/ });
  assert.throws(() => decodeRamdiskResult(bad({ ...cleanDisk, verification: { samples: 2, nonzero_samples: 0 } })), { message: /details\.disks\[1\]\.verification\.bytes_read must be a non-negative number/ });
  assert.throws(() => decodeRamdiskResult(bad({ ...cleanDisk, verification: { samples: 2, bytes_read: 1, nonzero_samples: '0' } })), { message: /details\.disks\[1\]\.verification\.nonzero_samples must be a non-negative number/ });
});

const d = (over: Partial<RamdiskDisk>): RamdiskDisk => ({
  name: '/dev/sda', sizeBytes: 100 * 2 ** 30, rotational: true, model: 'PERC H730', vendor: 'DELL', serial: 'ABC', wwn: '0x1', wwnWithExtension: '0x1', wwnVendorExtension: null, hctl: '0:2:0:0', byPath: null, ...over,
});
const hintCases: Record<string, [RamdiskDisk, RootDeviceHints, boolean]> = {
  'model substring, case-insensitive': [d({}), { model: 'perc' }, true],
  'vendor substring with blanks': [d({ vendor: 'ATA     ' }), { vendor: ' ata' }, true],
  'serial exact, not substring': [d({}), { serialNumber: 'AB' }, false],
  'serial exact, case-insensitive': [d({}), { serialNumber: 'abc' }, true],
  'AND of hints: one fails': [d({}), { model: 'PERC', rotational: false }, false],
  'size in GiB, equal passes': [d({}), { minSizeGigabytes: 100 }, true],
  'size in GiB, one more fails': [d({}), { minSizeGigabytes: 101 }, false],
  'name exact': [d({}), { deviceName: '/dev/sda' }, true],
  'name does not match a prefix': [d({ name: '/dev/sdab' }), { deviceName: '/dev/sda' }, false],
  'by-path name': [d({ byPath: '/dev/disk/by-path/pci-0000:00:04.0' }), { deviceName: '/dev/disk/by-path/pci-0000:00:04.0' }, true],
  'hint on an attribute the disk lacks': [d({ wwnVendorExtension: null }), { wwnVendorExtension: '0x2' }, false],
  'hctl exact': [d({}), { hctl: '0:2:0:0' }, true],
  'rotational unknown never matches': [d({ rotational: null }), { rotational: true }, false],
};
for (const [name, [disk, hints, want]] of Object.entries(hintCases)) {
  test(`root device hints: ${name}`, () => {
    assert.equal(diskMatchesHints(disk, hints), want);
  });
}

test('pickRootDisk: first match in order; without hints the smallest disk of at least 4 GiB', () => {
  const disks = [d({ name: '/dev/sda', sizeBytes: 500 * 2 ** 30 }), d({ name: '/dev/sdb', sizeBytes: 2 * 2 ** 30 }), d({ name: '/dev/sdc', sizeBytes: 8 * 2 ** 30 })];
  assert.equal(pickRootDisk(disks)?.name, '/dev/sdc');
  assert.equal(pickRootDisk(disks, { minSizeGigabytes: 0 })?.name, '/dev/sdc', 'a zero size hint is no hint');
  assert.equal(pickRootDisk(disks, { model: 'perc' })?.name, '/dev/sda');
  assert.equal(pickRootDisk(disks, { serialNumber: 'none' }), undefined);
  assert.equal(pickRootDisk([disks[1]!]), undefined);
});
