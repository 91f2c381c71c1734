/** Which boot HTTP mounts the TFTP server gets: the ramdisk only, never OS images or config drives. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TFTP_MOUNT_PREFIXES, tftpMountsOf } from '../../../agent/boot/tftp-mounts.js';

const cases: Record<string, { http: Record<string, string>; tftp: Record<string, string> }> = {
  'the ramdisk mount only, among images and config drives': {
    http: { images: '/var/cache/rackside/images', configdrive: '/var/lib/rackside/configdrive', ramdisk: '/var/cache/rackside/ramdisk' },
    tftp: { ramdisk: '/var/cache/rackside/ramdisk' },
  },
  'no ramdisk mount: nothing': { http: { images: '/srv/images' }, tftp: {} },
  'no mounts': { http: {}, tftp: {} },
};

for (const [name, c] of Object.entries(cases)) {
  test(name, () => {
    assert.deepEqual(tftpMountsOf(c.http), c.tftp);
  });
}

test('the TFTP prefixes are the ramdisk alone', () => {
  assert.deepEqual(TFTP_MOUNT_PREFIXES, ['ramdisk']);
});
