// The ramdisk agent against real peers: a QEMU guest (TCG) boots the built kernel + initrd with
// -kernel/-initrd (plus the per-host overlay), gets a DHCP lease from QEMU's user network and talks
// to a loopback server speaking the ramdisk protocol (10.0.2.2 in the guest). Boot 1: inspect
// (inventory = the QEMU machine), deploy a raw image by serial hint, deploy a qcow2 upstream image
// converted by the image cache with a config drive by model hint, build a RAID1 on two disks and
// deploy onto it, power off. The host then compares the disk files with the images and
// loop-mounts the config-2 partition. Boot 2: clean; afterwards wipefs finds nothing on any disk.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfigDrive, buildHostOverlay, buildRamdisk, decodeRamdiskResult, ImageCache, type CleanResultDetails, type RamdiskResult } from '../../images/index.js';
import { concatInitrds } from '../../images/host-overlay.js';
import { DebianPackageError } from '../../images/debian-package.js';
import type { BuildRamdiskResult } from '../../images/builder.js';
import type { DeployResultDetails, RaidResultDetails } from '../../images/ramdisk-results.js';
import { integrationRequired, makeDiskImage, readRange, requireTools, run, scratchDir } from '../unit/images/helpers.js';
import { runQemu } from '../unit/images/qemu.js';
import { startRamdiskServer, type RamdiskTestServer } from '../unit/images/ramdisk-server.js';

const cacheDir = join(tmpdir(), 'rackside-images-cache');
const token = 'agent-test-token-0123456789';
const MiB = 1024 * 1024;
const tools = { 'qemu-system-x86_64': 'qemu-system-x86', 'qemu-img': 'qemu-utils', xorriso: 'xorriso', sfdisk: 'fdisk', wipefs: 'util-linux', 'apt-get': 'apt', depmod: 'kmod' };
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const work = scratchDir('images-agent');
after(work.cleanup);

async function build(t: TestContext): Promise<BuildRamdiskResult | undefined> {
  try {
    return await buildRamdisk({ outputDir: join(work.dir, 'ramdisk'), cacheDir, sourceDateEpoch: 1_700_000_000, compression: 'auto', agentVersion: '0.1.0-agent' });
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian packages unavailable: ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

const disks = { vda: 64, sda: 128, vdb: 48, vdc: 48 } as const;

function qemuArgs(initrd: string, vmlinuz: string, dir: string): string[] {
  const d = (name: keyof typeof disks): string => join(dir, `${name}.img`);
  return [
    '-machine', 'pc,graphics=off', '-m', '512', '-smp', '2', '-kernel', vmlinuz, '-initrd', initrd,
    '-append', 'console=ttyS0,115200 panic=-1 BOOTIF=01-52-54-00-12-34-58',
    '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:58,romfile=',
    '-drive', `file=${d('vda')},if=none,id=d0,format=raw`, '-device', 'virtio-blk-pci,drive=d0,serial=RSVIRTIO01',
    '-drive', `file=${d('sda')},if=none,id=d1,format=raw`, '-device', 'ahci,id=ahci0', '-device', 'ide-hd,drive=d1,bus=ahci0.0,serial=RSSATA0001',
    '-drive', `file=${d('vdb')},if=none,id=d2,format=raw`, '-device', 'virtio-blk-pci,drive=d2,serial=RSRAIDA',
    '-drive', `file=${d('vdc')},if=none,id=d3,format=raw`, '-device', 'virtio-blk-pci,drive=d3,serial=RSRAIDB',
  ];
}

function results(server: RamdiskTestServer): RamdiskResult[] {
  return server.seen.filter((s) => s.path === '/ramdisk/v1/result').map((s) => decodeRamdiskResult(s.body));
}

test('QEMU guest: inspect, deploy (raw and qcow2 via the cache, config drive), RAID1, then clean', { timeout: 900_000 }, async (t) => {
  if (!requireTools(t, tools)) return;
  const dir = join(work.dir, 'run');
  mkdirSync(dir, { recursive: true });
  const server = await startRamdiskServer(token);
  try {
    const ramdisk = await build(t);
    if (ramdisk === undefined) return;
    const initrd = join(dir, 'initrd-host');
    writeFileSync(initrd, concatInitrds([readFileSync(ramdisk.paths.initrd), buildHostOverlay({ agentUrl: `http://10.0.2.2:${server.port}`, token })]));
    for (const [name, mib] of Object.entries(disks)) {
      writeFileSync(join(dir, `${name}.img`), '');
      truncateSync(join(dir, `${name}.img`), mib * MiB);
    }
    const guestUrl = `http://10.0.2.2:${server.port}/files`;

    // Images: a raw one served directly, a qcow2 one fetched by the image cache from "upstream"
    // (the same loopback server) and served raw, a config drive, a RAID image.
    const raw = makeDiskImage(join(dir, 'raw.img'), 4 * MiB + 512 * 7, { seed: 1, type: '83' });
    server.files.set('raw.img', { path: join(dir, 'raw.img'), truncateFirst: { count: 1, afterBytes: MiB + 999 } });
    const qsource = makeDiskImage(join(dir, 'q.raw'), 6 * MiB, { seed: 2, type: '83' });
    execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', join(dir, 'q.raw'), join(dir, 'q.qcow2')]);
    server.files.set('upstream/q.qcow2', { path: join(dir, 'q.qcow2') });
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 256 * MiB });
    const cached = await cache.get({ url: `${server.url}/files/upstream/q.qcow2`, checksum: sha256(readFileSync(join(dir, 'q.qcow2'))), format: 'qcow2' });
    assert.equal(cached.sha256, sha256(qsource), 'the cache converted the qcow2 to the original raw bytes');
    server.files.set(`cache/${cached.sha256}`, { path: cached.path });
    const userData = '#cloud-config\nhostname: qemu-node\n';
    const cd = await buildConfigDrive({ uuid: '11111111-2222-3333-4444-555555555555', name: 'qemu-node', userData }, { outputPath: join(dir, 'cd.iso') });
    server.files.set('cd.iso', { path: join(dir, 'cd.iso') });
    const raidImage = makeDiskImage(join(dir, 'raid.img'), 4 * MiB, { seed: 3, type: '83' });
    server.files.set('raid.img', { path: join(dir, 'raid.img') });

    server.commands.push(
      { command: 'inspect', commandId: 'inspect-1', intervalSeconds: 1 },
      { command: 'deploy', commandId: 'deploy-raw', intervalSeconds: 1, deploy: { imageUrl: `${guestUrl}/raw.img`, checksum: sha256(raw), checksumType: 'sha256', imageSizeBytes: raw.length, rootDeviceHints: { serialNumber: 'RSVIRTIO01' } } },
      {
        command: 'deploy', commandId: 'deploy-qcow2', intervalSeconds: 1,
        deploy: {
          imageUrl: `${guestUrl}/cache/${cached.sha256}`, checksum: cached.sha256, checksumType: 'sha256', imageSizeBytes: cached.sizeBytes,
          rootDeviceHints: { model: 'harddisk', minSizeGigabytes: 0 }, configDrive: { url: `${guestUrl}/cd.iso`, sha256: cd.sha256 },
        },
      },
      { command: 'raid', commandId: 'raid-1', intervalSeconds: 1, raid: { volumes: [{ level: '1', physicalDisks: [{ serialNumber: 'RSRAIDA' }, { serialNumber: 'RSRAIDB' }] }] } },
      { command: 'deploy', commandId: 'deploy-raid', intervalSeconds: 1, deploy: { imageUrl: `${guestUrl}/raid.img`, checksum: sha256(raidImage), checksumType: 'sha256', raidRoot: true } },
      { command: 'poweroff', commandId: 'off-1' },
    );
    const first = await runQemu(qemuArgs(initrd, ramdisk.paths.vmlinuz, dir), join(dir, 'serial-1.log'), { timeoutMs: 480_000 });
    assert.ok(first.exited, `the guest powered off on command; serial log:\n${first.serial.slice(-4000)}`);
    const byId = new Map(results(server).map((r) => [r.commandId, r]));
    for (const id of ['deploy-raw', 'deploy-qcow2', 'raid-1', 'deploy-raid', 'off-1']) {
      assert.equal(byId.get(id)?.status, 'ok', `${id}: ${byId.get(id)?.message ?? 'no result'}\n${first.serial.slice(-3000)}`);
    }

    // inspect: the inventory is the QEMU machine.
    const inv = (server.seen.find((s) => s.path === '/ramdisk/v1/inventory')!.body as { inventory: { memory: { physical_mb: number }; cpu: { count: number }; disks: { name: string; size: number; serial: string; by_path: string | null; model: string | null }[]; interfaces: { mac_address: string; pxe_enabled: boolean }[] } }).inventory;
    assert.equal(inv.cpu.count, 2);
    assert.equal(inv.memory.physical_mb, 512);
    const byName = Object.fromEntries(inv.disks.map((d) => [d.name, d]));
    assert.deepEqual(Object.keys(byName).sort(), ['/dev/sda', '/dev/vda', '/dev/vdb', '/dev/vdc']);
    for (const [name, serial] of [['vda', 'RSVIRTIO01'], ['sda', 'RSSATA0001'], ['vdb', 'RSRAIDA'], ['vdc', 'RSRAIDB']] as const) {
      assert.deepEqual([byName[`/dev/${name}`]?.size, byName[`/dev/${name}`]?.serial], [disks[name] * MiB, serial]);
    }
    assert.match(byName['/dev/vda']?.by_path ?? '', /^\/dev\/disk\/by-path\/pci-0000:00:[0-9a-f]{2}\.0$/);
    assert.match(byName['/dev/sda']?.by_path ?? '', /^\/dev\/disk\/by-path\/pci-0000:00:[0-9a-f]{2}\.0-ata-1\.0$/);
    assert.equal(byName['/dev/sda']?.model, 'QEMU HARDDISK');
    assert.ok(inv.interfaces.some((n) => n.mac_address === '52:54:00:12:34:58' && n.pxe_enabled));

    // deploy raw: the guest disk holds the image byte for byte, after a resumed download.
    const rawResult = byId.get('deploy-raw')!.details as DeployResultDetails;
    assert.equal(rawResult.rootDevice.name, '/dev/vda');
    assert.ok(rawResult.image.attempts >= 2, 'the cut download was resumed');
    assert.ok(readRange(join(dir, 'vda.img'), 0, raw.length).equals(raw), 'vda equals the raw image');

    // deploy qcow2 through the cache, with a config drive partition at the end of sda.
    const q = byId.get('deploy-qcow2')!.details as DeployResultDetails;
    assert.equal(q.rootDevice.name, '/dev/sda');
    const sda = join(dir, 'sda.img');
    assert.ok(readRange(sda, 0, 446).equals(qsource.subarray(0, 446)), 'boot code unchanged');
    assert.ok(readRange(sda, 512, qsource.length - 512).equals(qsource.subarray(512)), 'sda equals the qcow2 source after the MBR');
    assert.ok(q.configDrive !== null && q.configDrive.offsetBytes + q.configDrive.sizeBytes > 126 * MiB, 'config drive at the end');
    assert.match(run('blkid', ['-p', '-O', String(q.configDrive.offsetBytes), '-o', 'value', '-s', 'LABEL', sda]), /config-2/);
    const mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    let mounted = false;
    try {
      execFileSync('mount', ['-o', `loop,ro,offset=${q.configDrive.offsetBytes}`, sda, mnt], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // no loop devices: check the bytes instead
      assert.ok(readRange(sda, q.configDrive.offsetBytes, cd.sizeBytes).equals(readFileSync(join(dir, 'cd.iso'))));
    }
    if (mounted) {
      try {
        assert.equal(readFileSync(join(mnt, 'openstack/latest/user_data'), 'utf8'), userData);
      } finally {
        execFileSync('umount', [mnt]);
      }
    }

    // RAID1 on vdb + vdc, and a deploy onto it.
    const raid = byId.get('raid-1')!.details as RaidResultDetails;
    assert.deepEqual(raid.volumes.map((v) => [v.device, v.level, v.members]), [['/dev/md0', '1', ['/dev/vdb1', '/dev/vdc1']]]);
    assert.ok((raid.volumes[0]?.sizeBytes ?? 0) > 40 * MiB);
    for (const name of ['vdb', 'vdc']) assert.match(run('sfdisk', ['-d', join(dir, `${name}.img`)]), /type=A19D880F-05FC-4D3B-A006-743F0F84911E/);
    assert.equal((byId.get('deploy-raid')!.details as DeployResultDetails).rootDevice.name, '/dev/md0');

    // Boot 2: clean every disk; wipefs then finds nothing.
    server.commands.push({ command: 'clean', commandId: 'clean-1', intervalSeconds: 1, clean: { mode: 'metadata' } }, { command: 'poweroff', commandId: 'off-2' });
    const second = await runQemu(qemuArgs(initrd, ramdisk.paths.vmlinuz, dir), join(dir, 'serial-2.log'), { timeoutMs: 300_000 });
    assert.ok(second.exited, `the guest powered off after clean; serial log:\n${second.serial.slice(-4000)}`);
    const clean = results(server).find((r) => r.commandId === 'clean-1');
    assert.equal(clean?.status, 'ok', clean?.message ?? 'no clean result');
    assert.deepEqual((clean.details as CleanResultDetails).disks.map((d) => [d.name, d.serial, d.status]), [
      ['/dev/sda', 'RSSATA0001', 'ok'], ['/dev/vda', 'RSVIRTIO01', 'ok'], ['/dev/vdb', 'RSRAIDA', 'ok'], ['/dev/vdc', 'RSRAIDB', 'ok'],
    ]);
    for (const name of Object.keys(disks)) assert.equal(run('wipefs', [join(dir, `${name}.img`)]), '', `${name} has no signatures left`);
  } finally {
    await server.close();
  }
});
