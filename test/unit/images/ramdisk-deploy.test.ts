// The ramdisk agent's deploy and clean under busybox sh against a fake sysfs, with regular files
// standing in for the disks (sda 2 GiB, vda 1 GiB; the erase tests shrink them) and a loopback
// server speaking the protocol.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { decodeRamdiskResult, type CleanResultDetails, type RamdiskCommand } from '../../../images/index.js';
import type { DeployResultDetails } from '../../../images/ramdisk-results.js';
import { fakeEnv, put, runAgent } from './agent-harness.js';
import { makeDiskImage, readRange, requireTools, run, scratchDir } from './helpers.js';
import { startRamdiskServer, type RamdiskTestServer } from './ramdisk-server.js';

const token = 'tok_0123456789abcdef';
const MiB = 1024 * 1024;
const tools = { busybox: 'busybox-static', sfdisk: 'fdisk', wipefs: 'util-linux' };

/** A deterministic pseudo-random image of `bytes` with a partition table of `label`. */
async function once(env: Record<string, string>, server: RamdiskTestServer, cmd: RamdiskCommand): Promise<{ result: ReturnType<typeof decodeRamdiskResult>; stdout: string }> {
  writeFileSync(join(env.RACKSIDE_ETC!, 'url'), `${server.url}\n`);
  writeFileSync(join(env.RACKSIDE_ETC!, 'token'), `${token}\n`);
  server.commands.push(cmd);
  const r = await runAgent(['once'], env);
  const posted = server.seen.filter((s) => s.path === '/ramdisk/v1/result').at(-1);
  assert.ok(posted !== undefined, `a result was posted; agent output:\n${r.stdout}`);
  return { result: decodeRamdiskResult(posted.body), stdout: r.stdout };
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

test('deploy: hints pick sda, a cut download resumes with Range, the hash is verified while writing, the config drive lands in a partition at the end', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-deploy');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const image = makeDiskImage(join(dir, 'image.raw'), 6 * MiB, { label: 'dos' });
    const configDrive = Buffer.alloc(300_000, 0x43);
    writeFileSync(join(dir, 'cd.iso'), configDrive);
    server.files.set('image.raw', { path: join(dir, 'image.raw'), truncateFirst: { count: 1, afterBytes: 2 * MiB + 123 } });
    server.files.set('cd.iso', { path: join(dir, 'cd.iso') });
    const { result, stdout } = await once(env, server, {
      command: 'deploy', commandId: 'dep-1',
      deploy: {
        imageUrl: `${server.url}/files/image.raw`, checksum: sha256(image), checksumType: 'sha256', imageSizeBytes: image.length,
        rootDeviceHints: { model: 'harddisk', minSizeGigabytes: 2 },
        configDrive: { url: `${server.url}/files/cd.iso`, sha256: sha256(configDrive) },
      },
    });
    assert.equal(result.status, 'ok', `${result.message ?? ''}\n${stdout}`);
    const details = result.details as DeployResultDetails;
    assert.equal(details.rootDevice.name, '/dev/sda');
    assert.equal(details.rootDevice.serial, 'SATA-"SER"\\1');
    assert.deepEqual({ ...details.image, attempts: details.image.attempts >= 2 }, { url: `${server.url}/files/image.raw`, bytes: image.length, checksumType: 'sha256', checksum: sha256(image), attempts: true });
    const ranges = server.seen.filter((s) => s.path === '/files/image.raw').map((s) => s.range);
    assert.equal(ranges[0], undefined);
    assert.match(ranges[1] ?? '', /^bytes=\d+-$/, 'the second request resumes');
    assert.ok(Number(/\d+/.exec(ranges[1]!)![0]) >= 2 * MiB, 'resumed after what had arrived');

    const sda = join(env.RACKSIDE_DEV!, 'sda');
    // The image is on the disk: boot code and everything after the MBR sector unchanged.
    assert.deepEqual(readRange(sda, 0, 446), image.subarray(0, 446));
    assert.deepEqual(readRange(sda, 512, image.length - 512), image.subarray(512));
    const table = run('sfdisk', ['-d', sda]);
    const parts = [...table.matchAll(/start=\s*(\d+), size=\s*(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    assert.equal(parts.length, 2, table);
    const [start, size] = parts[1]!;
    assert.equal(size! * 512, MiB, 'config drive partition rounded up to 1 MiB');
    assert.ok((start! + size!) * 512 > 2048 * MiB - 2 * MiB, 'at the end of the disk');
    assert.deepEqual(details.configDrive, { offsetBytes: start! * 512, sizeBytes: MiB });
    assert.deepEqual(readRange(sda, start! * 512, configDrive.length), configDrive);
    assert.ok(result.log.some((l) => l.startsWith('deploy: done')), JSON.stringify(result.log));
  } finally {
    await server.close();
    cleanup();
  }
});

test('deploy: a GPT image by device name; the backup header is moved to the end before the config drive partition', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-deploy-gpt');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const image = makeDiskImage(join(dir, 'image.raw'), 4 * MiB, { label: 'gpt' });
    writeFileSync(join(dir, 'cd.iso'), Buffer.alloc(4096, 0x44));
    server.files.set('image.raw', { path: join(dir, 'image.raw') });
    server.files.set('cd.iso', { path: join(dir, 'cd.iso') });
    const md5 = createHash('md5').update(image).digest('hex');
    const { result, stdout } = await once(env, server, {
      command: 'deploy', commandId: 'dep-gpt',
      deploy: { imageUrl: `${server.url}/files/image.raw`, checksum: md5, checksumType: 'md5', rootDeviceHints: { deviceName: '/dev/vda' }, configDrive: { url: `${server.url}/files/cd.iso` } },
    });
    assert.equal(result.status, 'ok', `${result.message ?? ''}\n${stdout}`);
    const vda = join(env.RACKSIDE_DEV!, 'vda');
    assert.equal((result.details as DeployResultDetails).rootDevice.name, '/dev/vda');
    // The first partition's data is byte-identical; the table verifies and has the config-2 partition.
    assert.deepEqual(readRange(vda, 2048 * 512, 4096 * 512), image.subarray(2048 * 512, 6144 * 512));
    assert.match(run('sfdisk', ['--verify', vda]), /No errors detected/);
    assert.match(run('sfdisk', ['-d', vda]), /name="config-2"/);
  } finally {
    await server.close();
    cleanup();
  }
});

test('deploy: a wrong checksum fails clearly and zeroes both ends of the disk', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-deploy-bad');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const image = makeDiskImage(join(dir, 'image.raw'), 3 * MiB, { label: 'dos' });
    server.files.set('image.raw', { path: join(dir, 'image.raw') });
    const { result } = await once(env, server, {
      command: 'deploy', commandId: 'dep-bad',
      deploy: { imageUrl: `${server.url}/files/image.raw`, checksum: 'a'.repeat(64), checksumType: 'sha256', rootDeviceHints: { serialNumber: 'virtio-serial-1' } },
    });
    assert.equal(result.status, 'error');
    assert.match(result.message ?? '', new RegExp(`checksum mismatch for .*image\\.raw: expected sha256 a{64}, got ${sha256(image)}`));
    const vda = join(env.RACKSIDE_DEV!, 'vda');
    assert.ok(readRange(vda, 0, MiB).every((b) => b === 0), 'no partition table or boot code left');
    assert.ok(readRange(vda, 1024 * MiB - MiB, MiB).every((b) => b === 0), 'no GPT backup left');
    assert.ok(readRange(vda, MiB, MiB).some((b) => b !== 0), 'the rest of the half image is there, but unbootable');
  } finally {
    await server.close();
    cleanup();
  }
});

test('deploy: hints matching no disk list the candidates; an unreachable image names the URL and status; nothing is written', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-deploy-nomatch');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const sda = join(env.RACKSIDE_DEV!, 'sda');
    const fd = openSync(sda, 'r+');
    writeSync(fd, Buffer.from('MARKER'), 0, 6, 0);
    closeSync(fd);
    const noMatch = await once(env, server, {
      command: 'deploy', commandId: 'dep-x',
      deploy: { imageUrl: `${server.url}/files/none`, checksum: 'b'.repeat(64), checksumType: 'sha256', rootDeviceHints: { serialNumber: 'NOPE', rotational: true } },
    });
    assert.equal(noMatch.result.status, 'error');
    assert.match(noMatch.result.message ?? '', /no disk matches the root device hints \(serial=NOPE, rotational=true\); candidates: \/dev\/sda \(size 2147483648, model QEMU HARDDISK.*serial SATA-"SER"\\1.*\/dev\/vda \(size 1073741824/);
    assert.equal(readRange(sda, 0, 6).toString(), 'MARKER');

    const missing = await once(env, server, {
      command: 'deploy', commandId: 'dep-404',
      deploy: { imageUrl: `${server.url}/files/missing.raw`, checksum: 'b'.repeat(64), checksumType: 'sha256', rootDeviceHints: { deviceName: '/dev/sda' } },
    });
    assert.equal(missing.result.status, 'error');
    assert.match(missing.result.message ?? '', new RegExp(`GET ${server.url}/files/missing\\.raw answered HTTP 404`));
  } finally {
    await server.close();
    cleanup();
  }
});

test('clean (metadata, software RAID kept): a RAID member disk is left alone and reported kept, the others are wiped', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-clean-keep-raid');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const sda = join(env.RACKSIDE_DEV!, 'sda');
    const vda = join(env.RACKSIDE_DEV!, 'vda');
    run('sfdisk', ['-q', sda], { input: Buffer.from('label: gpt\nsize=100MiB\n') });
    run('sfdisk', ['-q', vda], { input: Buffer.from('label: dos\nsize=100MiB\n') });
    // vda belongs to an assembled array: sysfs lists md0 among its holders.
    mkdirSync(join(env.RACKSIDE_SYSFS!, 'block', 'vda', 'holders', 'md0'), { recursive: true });
    const { result, stdout } = await once(env, server, { command: 'clean', commandId: 'clean-k', clean: { mode: 'metadata', keepSoftwareRaid: true } });
    assert.equal(result.status, 'ok', `${result.message ?? ''}\n${stdout}`);
    assert.equal(run('wipefs', [sda]), '', 'sda wiped');
    assert.match(run('wipefs', [vda]), /dos/, 'the RAID member keeps its partition table');
    assert.match(stdout, /clean: \/dev\/vda is a software RAID member: kept/);
    const details = result.details as CleanResultDetails;
    assert.deepEqual(details.disks.map((d) => [d.name, d.method, d.bytesWiped, d.status]), [['/dev/sda', 'metadata', 2 * MiB, 'ok'], ['/dev/vda', 'kept', 0, 'ok']]);
    assert.deepEqual(details.disks.map((d) => d.verification), [{ samples: 2, bytesRead: 2 * MiB, nonZeroSamples: 0 }, null], 'a kept member is not read back');
  } finally {
    await server.close();
    cleanup();
  }
});

test('clean (metadata): partition tables and signatures are gone at both ends of every disk, with a per-disk report', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-clean');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    const sda = join(env.RACKSIDE_DEV!, 'sda');
    const vda = join(env.RACKSIDE_DEV!, 'vda');
    run('sfdisk', ['-q', sda], { input: Buffer.from('label: gpt\nsize=100MiB\n') });
    run('sfdisk', ['-q', vda], { input: Buffer.from('label: dos\nsize=100MiB\n') });
    assert.match(run('wipefs', [sda]), /gpt/);
    const { result, stdout } = await once(env, server, { command: 'clean', commandId: 'clean-1', clean: { mode: 'metadata' } });
    assert.equal(result.status, 'ok', `${result.message ?? ''}\n${stdout}`);
    assert.equal(run('wipefs', [sda]), '', 'no signature left on sda');
    assert.equal(run('wipefs', [vda]), '', 'no signature left on vda');
    assert.ok(readRange(sda, 2048 * MiB - MiB, MiB).every((b) => b === 0), 'GPT backup gone');
    const details = result.details as CleanResultDetails;
    assert.equal(details.mode, 'metadata');
    assert.deepEqual(details.disks.map((d) => [d.name, d.serial, d.sizeBytes, d.method, d.bytesWiped, d.status]), [
      ['/dev/sda', 'SATA-"SER"\\1', 2048 * MiB, 'metadata', 2 * MiB, 'ok'],
      ['/dev/vda', 'virtio-serial-1', 1024 * MiB, 'metadata', 2 * MiB, 'ok'],
    ]);
    // Identity from sysfs as the inventory reads it: the SATA disk's wwid naa.5000c5001234abcd in
    // udev's ID_WWN form and its blank-padded model trimmed; virtio-blk has neither.
    assert.deepEqual(details.disks.map((d) => [d.wwn, d.model]), [['0x5000c5001234abcd', 'QEMU HARDDISK'], [null, null]]);
    // Both MiB zero_ends wrote, read back.
    assert.deepEqual(details.disks.map((d) => d.verification), [{ samples: 2, bytesRead: 2 * MiB, nonZeroSamples: 0 }, { samples: 2, bytesRead: 2 * MiB, nonZeroSamples: 0 }]);
  } finally {
    await server.close();
    cleanup();
  }
});

/** Makes disk `name` of the fake machine `bytes` long in sysfs and /dev, full of 0x5a: an erase that misses a block leaves data a read-back sample can find. */
function smallDisk(env: Record<string, string>, name: string, bytes: number): string {
  put(env.RACKSIDE_SYSFS!, `block/${name}/size`, `${bytes / 512}\n`);
  const path = join(env.RACKSIDE_DEV!, name);
  writeFileSync(path, Buffer.alloc(bytes, 0x5a));
  return path;
}

test('clean (erase): every byte zeroed, also past the last whole MiB; both ends and 16 random 4 KiB blocks read back', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-clean-erase');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    // 64 MiB and 3 sectors: dd's whole MiB would leave the last 1536 bytes.
    const sda = smallDisk(env, 'sda', 64 * MiB + 1536);
    const vda = smallDisk(env, 'vda', 32 * MiB);
    const { result, stdout } = await once(env, server, { command: 'clean', commandId: 'clean-e', clean: { mode: 'erase' } });
    assert.equal(result.status, 'ok', `${result.message ?? ''}\n${stdout}`);
    assert.ok(readFileSync(sda).every((b) => b === 0), 'sda all zeros');
    assert.ok(readFileSync(vda).every((b) => b === 0), 'vda all zeros');
    const details = result.details as CleanResultDetails;
    assert.equal(details.mode, 'erase');
    // Regular files are no block devices for blkdiscard, so dd zeroed them.
    assert.deepEqual(details.disks.map((d) => [d.name, d.wwn, d.model, d.method, d.bytesWiped, d.status, d.message]), [
      ['/dev/sda', '0x5000c5001234abcd', 'QEMU HARDDISK', 'dd-zero', 64 * MiB + 1536, 'ok', null],
      ['/dev/vda', null, null, 'dd-zero', 32 * MiB, 'ok', null],
    ]);
    const erased = { samples: 18, bytesRead: 2 * MiB + 16 * 4096, nonZeroSamples: 0 };
    assert.deepEqual(details.disks.map((d) => d.verification), [erased, erased]);
  } finally {
    await server.close();
    cleanup();
  }
});

test('clean (erase): a disk that reads back data after the wipe fails with the samples that had data, one that reads back nothing fails too', async (t) => {
  if (!requireTools(t, tools)) return;
  const { dir, cleanup } = scratchDir('agent-clean-verify');
  const server = await startRamdiskServer(token);
  try {
    const env = fakeEnv(dir);
    smallDisk(env, 'vda', 8 * MiB);
    // sda acknowledges every write and still returns data (a controller that drops writes):
    // /dev/urandom takes writes, seeks as a no-op, and refuses O_DIRECT (the plain read path).
    put(env.RACKSIDE_SYSFS!, 'block/sda/size', `${(8 * MiB) / 512}\n`);
    rmSync(join(env.RACKSIDE_DEV!, 'sda'));
    symlinkSync('/dev/urandom', join(env.RACKSIDE_DEV!, 'sda'));
    // sdb reads nothing back (/dev/null: writes vanish, reads end at once): unverified is not clean.
    put(env.RACKSIDE_SYSFS!, 'block/sdb/size', `${(8 * MiB) / 512}\n`);
    symlinkSync('/dev/null', join(env.RACKSIDE_DEV!, 'sdb'));
    const { result, stdout } = await once(env, server, { command: 'clean', commandId: 'clean-v', clean: { mode: 'erase' } });
    assert.equal(result.status, 'error', stdout);
    assert.equal(result.message, '2 disk(s) could not be erased');
    const details = result.details as CleanResultDetails;
    assert.deepEqual(details.disks.map((d) => [d.name, d.status, d.message, d.verification]), [
      ['/dev/sda', 'error', 'verification found data in 18 of 18 samples', { samples: 18, bytesRead: 2 * MiB + 16 * 4096, nonZeroSamples: 18 }],
      ['/dev/sdb', 'error', 'verification could not read 18 of 18 samples', { samples: 18, bytesRead: 0, nonZeroSamples: 0 }],
      ['/dev/vda', 'ok', null, { samples: 18, bytesRead: 2 * MiB + 16 * 4096, nonZeroSamples: 0 }],
    ]);
  } finally {
    await server.close();
    cleanup();
  }
});
