import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRamdiskHeartbeat, encodeRamdiskCommand, RamdiskEndpoint, RamdiskProtocolError, type RamdiskCommand } from '../../../images/ramdisk-protocol.js';

test('encodeRamdiskCommand renders the KEY=VALUE lines the sh agent reads', () => {
  assert.equal(encodeRamdiskCommand({ command: 'inspect', commandId: 'c-1', intervalSeconds: 5 }), 'command=inspect\ncommand_id=c-1\ninterval_seconds=5\n');
  assert.equal(encodeRamdiskCommand({ command: 'none' }), 'command=none\n');
  assert.equal(RamdiskEndpoint.heartbeat, '/ramdisk/v1/heartbeat');
});

const badCommands: Record<string, RamdiskCommand> = {
  'unknown command': { command: 'rm-rf' as RamdiskCommand['command'] },
  'id with a newline': { command: 'inspect', commandId: 'a\ncommand=reboot' },
  'id with a space': { command: 'inspect', commandId: 'a b' },
  'zero interval': { command: 'none', intervalSeconds: 0 },
  'fractional interval': { command: 'none', intervalSeconds: 1.5 },
};
for (const [name, cmd] of Object.entries(badCommands)) {
  test(`encodeRamdiskCommand rejects ${name}`, () => {
    assert.throws(() => encodeRamdiskCommand(cmd), RamdiskProtocolError);
  });
}

test('decodeRamdiskHeartbeat maps the agent body and rejects wrong shapes', () => {
  assert.deepEqual(decodeRamdiskHeartbeat({ version: '1', boot_mac: '52:54:00:ab:cd:ef', ip: null, uptime_seconds: 12, last_command_id: null }), {
    version: '1', bootMac: '52:54:00:ab:cd:ef', ip: null, uptimeSeconds: 12, lastCommandId: null,
  });
  for (const bad of [null, [], 'x', { version: 3 }, { uptime_seconds: -1 }, { uptime_seconds: '12' }]) {
    assert.throws(() => decodeRamdiskHeartbeat(bad), RamdiskProtocolError, JSON.stringify(bad));
  }
});

test('encodeRamdiskCommand renders deploy parameters and metal3 root device hints as agent keys', () => {
  const text = encodeRamdiskCommand({
    command: 'deploy', commandId: 'd-1',
    deploy: {
      imageUrl: 'http://192.0.2.1:8081/images/abc.raw', checksum: 'AB'.repeat(32), checksumType: 'sha256', imageSizeBytes: 1234,
      rootDeviceHints: { deviceName: '/dev/disk/by-path/pci-0000:00:04.0', model: ' QEMU ', minSizeGigabytes: 10, rotational: false, serialNumber: 'S1', wwnWithExtension: '0x1' },
      configDrive: { url: 'http://192.0.2.1:8081/cd/h.iso', sha256: 'c'.repeat(64) }, maxAttempts: 3,
    },
  });
  assert.equal(text, [
    'command=deploy', 'command_id=d-1', 'image_url=http://192.0.2.1:8081/images/abc.raw', `image_checksum=${'ab'.repeat(32)}`, 'image_checksum_type=sha256',
    'image_size_bytes=1234', 'image_attempts=3', 'hint_by_path=/dev/disk/by-path/pci-0000:00:04.0', 'hint_model=QEMU', 'hint_serial=S1', 'hint_size=10',
    'hint_wwn_with_extension=0x1', 'hint_rotational=false', 'configdrive_url=http://192.0.2.1:8081/cd/h.iso', `configdrive_sha256=${'c'.repeat(64)}`, '',
  ].join('\n'));
  assert.match(encodeRamdiskCommand({ command: 'deploy', deploy: { imageUrl: 'http://h/i', checksum: 'a'.repeat(32), checksumType: 'md5', rootDeviceHints: { deviceName: '/dev/sda', minSizeGigabytes: 0 } } }), /hint_name=\/dev\/sda\n$/);
  assert.equal(encodeRamdiskCommand({ command: 'clean', commandId: 'c' }), 'command=clean\ncommand_id=c\nclean_mode=metadata\n');
  assert.equal(encodeRamdiskCommand({ command: 'clean', clean: { mode: 'metadata', keepSoftwareRaid: true } }), 'command=clean\nclean_mode=metadata\nclean_keep_raid=1\n');
  assert.equal(
    encodeRamdiskCommand({ command: 'raid', raid: { volumes: [{ level: '1', sizeGibibytes: 0, physicalDisks: [{ serialNumber: 'A' }, { deviceName: '/dev/vdc' }] }] } }),
    'command=raid\nraid_volumes=1\nraid_0_level=1\nraid_0_size_gib=0\nraid_0_disks=2\nraid_0_disk_0_serial=A\nraid_0_disk_1_name=/dev/vdc\n',
  );
});

const base = { imageUrl: 'http://h/i.raw', checksum: 'a'.repeat(64), checksumType: 'sha256' as const };
const badDeploys: Record<string, RamdiskCommand> = {
  'deploy without parameters': { command: 'deploy' },
  'ftp image URL': { command: 'deploy', deploy: { ...base, imageUrl: 'ftp://h/i.raw' } },
  'config drive URL with a space': { command: 'deploy', deploy: { ...base, configDrive: { url: 'https://h/c d.iso' } } },
  'checksum of the wrong length': { command: 'deploy', deploy: { ...base, checksum: 'abc' } },
  'unknown checksum type': { command: 'deploy', deploy: { ...base, checksumType: 'crc32' as 'md5' } },
  'hint with a newline': { command: 'deploy', deploy: { ...base, rootDeviceHints: { serialNumber: 'a\ncommand=reboot' } } },
  'device name without /dev/': { command: 'deploy', deploy: { ...base, rootDeviceHints: { deviceName: 'sda' } } },
  'negative size hint': { command: 'deploy', deploy: { ...base, rootDeviceHints: { minSizeGigabytes: -1 } } },
  'raidRoot with hints': { command: 'deploy', deploy: { ...base, raidRoot: true, rootDeviceHints: { serialNumber: 'x' } } },
  'raid without volumes': { command: 'raid', raid: { volumes: [] } },
  'raid whose first volume is not RAID1': { command: 'raid', raid: { volumes: [{ level: '0', physicalDisks: [{ serialNumber: 'a' }, { serialNumber: 'b' }] }] } },
  'raid volume with one disk': { command: 'raid', raid: { volumes: [{ level: '1', physicalDisks: [{ serialNumber: 'a' }] }] } },
  'raid disk without hints': { command: 'raid', raid: { volumes: [{ level: '1', physicalDisks: [{ serialNumber: 'a' }, {}] }] } },
  'unknown clean mode': { command: 'clean', clean: { mode: 'shred' as 'erase' } },
};
test('encodeRamdiskCommand: https:// image and config drive URLs, for a ramdisk calling rackside over TLS', () => {
  const text = encodeRamdiskCommand({ command: 'deploy', deploy: { ...base, imageUrl: 'https://10.0.0.1:8443/images/abc', configDrive: { url: 'https://10.0.0.1:8443/configdrive/h.iso' } } });
  assert.match(text, /^image_url=https:\/\/10\.0\.0\.1:8443\/images\/abc$/m);
  assert.match(text, /^configdrive_url=https:\/\/10\.0\.0\.1:8443\/configdrive\/h\.iso$/m);
});

for (const [name, cmd] of Object.entries(badDeploys)) {
  test(`encodeRamdiskCommand rejects ${name}`, () => {
    assert.throws(() => encodeRamdiskCommand(cmd), RamdiskProtocolError);
  });
}
