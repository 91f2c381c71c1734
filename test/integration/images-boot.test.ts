// Boots the real ramdisk (Debian kernel + busybox-static, built by images/) in QEMU under TCG
// with -kernel/-initrd. 1) selftest: /init loads the modules, runs the copied host tools and
// powers off. 2) inspect: the per-host overlay is appended to the initrd, the agent gets a DHCP
// lease from QEMU's user network, heartbeats to a loopback HTTP server (10.0.2.2 in the guest),
// posts an inventory matching the QEMU command line and powers off on command.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildHostOverlay, buildRamdisk } from '../../images/index.js';
import { concatInitrds } from '../../images/host-overlay.js';
import { DebianPackageError } from '../../images/debian-package.js';
import type { BuildRamdiskResult } from '../../images/builder.js';
import { integrationRequired, requireTools, scratchDir } from '../unit/images/helpers.js';
import { runQemuUntilExit, type QemuRun } from '../helpers/qemu-until-exit.js';

const cacheDir = join(tmpdir(), 'rackside-images-cache');
const bootTimeoutMs = 240_000;
const token = 'boot-test-token-0123456789';

const shared = scratchDir('images-boot-build');
after(shared.cleanup);
let built: Promise<BuildRamdiskResult> | undefined;

/** Builds the ramdisk once for both tests; skips (or fails when required) without the Debian packages. */
async function build(t: { skip: (reason: string) => void }): Promise<BuildRamdiskResult | undefined> {
  // zstd when available, so the kernel's zstd decompressor is exercised too.
  built ??= buildRamdisk({ outputDir: join(shared.dir, 'out'), cacheDir, sourceDateEpoch: 1_700_000_000, compression: 'auto', agentVersion: '0.1.0-boot' });
  try {
    return await built;
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian packages unavailable: ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

/** Runs QEMU until it exits (the guest powers off) or the timeout. */
function runQemu(args: string[], serialLog: string): Promise<QemuRun> {
  return runQemuUntilExit('qemu-system-x86_64', args, serialLog, bootTimeoutMs);
}

function kernelArgs(result: BuildRamdiskResult, extra: string): string[] {
  return ['-kernel', result.paths.vmlinuz, '-append', `console=ttyS0,115200 panic=-1 ${extra}`];
}

test('QEMU boots the ramdisk: /init loads the modules, the host tools run, selftest powers off', { timeout: 600_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-x86_64': 'qemu-system-x86', 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod' })) return;
  const { dir, cleanup } = scratchDir('images-boot');
  try {
    const result = await build(t);
    if (result === undefined) return;
    const { exited, serial } = await runQemu(
      ['-m', '512', '-smp', '2', '-initrd', result.paths.initrd, ...kernelArgs(result, 'rackside.selftest=1')],
      join(dir, 'serial.log'),
    );
    assert.ok(exited, `the guest powered off by itself; serial log:\n${serial.slice(-3000)}`);
    assert.match(serial, /rackside-ramdisk: started 0\.1\.0-boot \(kernel \d/);
    assert.match(serial, /rackside-ramdisk: modules: \d+ loaded/);
    for (const tool of result.manifest.inputs.tools) assert.match(serial, new RegExp(`selftest: tool /\\S+/${tool.name} runs`));
    assert.doesNotMatch(serial, /FAILS/);
    assert.match(serial, /rackside-ramdisk: selftest: done/);
  } finally {
    cleanup();
  }
});

interface Seen {
  path: string;
  body: Record<string, unknown>;
}

test('QEMU inspect: the agent finds rackside through the per-host overlay and reports the QEMU machine', { timeout: 600_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-x86_64': 'qemu-system-x86', 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod' })) return;
  const { dir, cleanup } = scratchDir('images-inspect');
  const seen: Seen[] = [];
  let inventoryReceived = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
      seen.push({ path: req.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
      if (req.url === '/ramdisk/v1/inventory') inventoryReceived = true;
      const answer = req.url !== '/ramdisk/v1/heartbeat' ? 'ok\n'
        : inventoryReceived ? 'command=poweroff\ncommand_id=off-1\n' : 'command=inspect\ncommand_id=inspect-1\ninterval_seconds=1\n';
      res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
    });
  });
  try {
    const result = await build(t);
    if (result === undefined) return;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    // QEMU's user network maps the guest's 10.0.2.2 to the host's loopback.
    const overlay = buildHostOverlay({ agentUrl: `http://10.0.2.2:${port}`, token });
    const initrd = join(dir, 'initrd-host');
    writeFileSync(initrd, concatInitrds([readFileSync(result.paths.initrd), overlay]));
    const vda = join(dir, 'vda.img');
    const sda = join(dir, 'sda.img');
    writeFileSync(vda, Buffer.alloc(0));
    writeFileSync(sda, Buffer.alloc(0));
    truncateSync(vda, 64 * 1024 * 1024);
    truncateSync(sda, 128 * 1024 * 1024);

    const { exited, serial } = await runQemu(
      [
        '-m', '512', '-smp', '2', '-initrd', initrd,
        ...kernelArgs(result, 'BOOTIF=01-52-54-00-12-34-56'),
        '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56,romfile=',
        '-drive', `file=${vda},if=none,id=d0,format=raw`, '-device', 'virtio-blk-pci,drive=d0,serial=RSVIRTIO01',
        '-drive', `file=${sda},if=none,id=d1,format=raw`, '-device', 'ahci,id=ahci0', '-device', 'ide-hd,drive=d1,bus=ahci0.0,serial=RSSATA0001',
      ],
      join(dir, 'serial.log'),
    );
    assert.ok(exited, `the guest powered off on command; serial log:\n${serial.slice(-3000)}`);
    assert.deepEqual(seen.map((s) => s.path).filter((p, i, a) => p !== a[i - 1]), ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory', '/ramdisk/v1/heartbeat', '/ramdisk/v1/result']);
    const heartbeat = seen[0]!.body;
    assert.equal(heartbeat.version, '0.1.0-boot');
    assert.equal(heartbeat.boot_mac, '52:54:00:12:34:56');
    assert.equal(heartbeat.ip, '10.0.2.15');

    const posted = seen.find((s) => s.path === '/ramdisk/v1/inventory')!.body;
    assert.equal(posted.command_id, 'inspect-1');
    const inv = posted.inventory as {
      cpu: { count: number; architecture: string };
      memory: { physical_mb: number };
      disks: { name: string; size: number; serial: string | null; rotational: boolean | null }[];
      interfaces: { name: string; mac_address: string; ipv4_address: string | null; pxe_enabled: boolean; driver: string | null }[];
      system_vendor: { manufacturer: string | null };
      boot: { current_boot_mode: string };
    };
    assert.equal(inv.cpu.count, 2);
    assert.equal(inv.cpu.architecture, 'x86_64');
    assert.equal(inv.memory.physical_mb, 512);
    const disks = Object.fromEntries(inv.disks.map((d) => [d.name, d]));
    assert.deepEqual([disks['/dev/vda']?.size, disks['/dev/vda']?.serial], [64 * 1024 * 1024, 'RSVIRTIO01']);
    assert.deepEqual([disks['/dev/sda']?.size, disks['/dev/sda']?.serial], [128 * 1024 * 1024, 'RSSATA0001']);
    const nic = inv.interfaces.find((n) => n.mac_address === '52:54:00:12:34:56');
    assert.ok(nic !== undefined, JSON.stringify(inv.interfaces));
    assert.equal(nic.ipv4_address, '10.0.2.15');
    assert.equal(nic.pxe_enabled, true);
    assert.equal(nic.driver, 'virtio_net');
    assert.equal(inv.system_vendor.manufacturer, 'QEMU');
    assert.equal(inv.boot.current_boot_mode, 'bios');
    assert.deepEqual({ ...(seen.at(-1)?.body as object), log: [] }, { command_id: 'off-1', command: 'poweroff', status: 'ok', message: null, details: null, log: [] });
    assert.match(serial, /rackside-ramdisk: inspect: inventory sent/);
  } finally {
    server.close();
    cleanup();
  }
});

test('QEMU clean (erase): a virtio, a SATA and an NVMe disk full of data are erased and read back as zeros; the NVMe one by the drive\'s own Format NVM secure erase', { timeout: 600_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-x86_64': 'qemu-system-x86', 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod', nvme: 'nvme-cli' })) return;
  const { dir, cleanup } = scratchDir('images-clean');
  const seen: Seen[] = [];
  let result: Record<string, unknown> | undefined;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
      const parsed = JSON.parse(body) as Record<string, unknown>;
      seen.push({ path: req.url ?? '', body: parsed });
      if (req.url === '/ramdisk/v1/result' && parsed.command === 'clean') result = parsed;
      const answer = req.url !== '/ramdisk/v1/heartbeat' ? 'ok\n'
        : result !== undefined ? 'command=poweroff\ncommand_id=off-1\n' : 'command=clean\ncommand_id=clean-1\nclean_mode=erase\ninterval_seconds=1\n';
      res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
    });
  });
  try {
    const built = await build(t);
    if (built === undefined) return;
    assert.ok(built.manifest.inputs.tools.some((tool) => tool.name === 'nvme'), 'nvme-cli is copied into the ramdisk');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const initrd = join(dir, 'initrd-host');
    writeFileSync(initrd, concatInitrds([readFileSync(built.paths.initrd), buildHostOverlay({ agentUrl: `http://10.0.2.2:${port}`, token })]));
    // Every byte not zero (0xa5), and a partition table at the start: nothing may survive.
    const disks = { vda: join(dir, 'vda.img'), sda: join(dir, 'sda.img'), nvme0n1: join(dir, 'nvme.img') };
    for (const path of Object.values(disks)) writeFileSync(path, Buffer.alloc(24 * 1024 * 1024, 0xa5));
    const { exited, serial } = await runQemu(
      [
        '-m', '512', '-smp', '2', '-initrd', initrd,
        ...kernelArgs(built, 'BOOTIF=01-52-54-00-12-34-57'),
        '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:57,romfile=',
        '-drive', `file=${disks.vda},if=none,id=d0,format=raw`, '-device', 'virtio-blk-pci,drive=d0,serial=RSVIRTIO02',
        '-drive', `file=${disks.sda},if=none,id=d1,format=raw`, '-device', 'ahci,id=ahci0', '-device', 'ide-hd,drive=d1,bus=ahci0.0,serial=RSSATA0002',
        '-drive', `file=${disks.nvme0n1},if=none,id=d2,format=raw`, '-device', 'nvme,drive=d2,serial=RSNVME0001',
      ],
      join(dir, 'serial.log'),
    );
    assert.ok(exited, `the guest powered off on command; serial log:\n${serial.slice(-3000)}`);
    assert.ok(result !== undefined, `a clean result; requests: ${seen.map((s) => s.path).join(', ')}; serial:\n${serial.slice(-3000)}`);
    assert.equal(result.status, 'ok', JSON.stringify(result));
    const details = result.details as {
      mode: string;
      disks: { name: string; serial: string | null; method: string; bytes_wiped: number; size: number; duration_seconds: number; verification: { samples: number; nonzero_samples: number } | null; status: string; message: string | null }[];
    };
    assert.equal(details.mode, 'erase');
    const byName = Object.fromEntries(details.disks.map((d) => [d.name, d]));
    t.diagnostic(details.disks.map((d) => `${d.name} ${d.method} ${String(d.duration_seconds)} s${d.message === null ? '' : ` (${d.message})`}`).join('; '));
    assert.deepEqual(Object.keys(byName).sort(), ['/dev/nvme0n1', '/dev/sda', '/dev/vda']);
    assert.match(byName['/dev/nvme0n1']?.method ?? '', /^nvme-(user|crypto)-erase$/, JSON.stringify(byName['/dev/nvme0n1']));
    assert.equal(byName['/dev/nvme0n1']?.serial, 'RSNVME0001');
    for (const d of details.disks) {
      assert.equal(d.status, 'ok', JSON.stringify(d));
      assert.equal(d.bytes_wiped, d.size);
      assert.deepEqual([d.verification?.samples, d.verification?.nonzero_samples], [18, 0], `${d.name} read back`);
    }
    // The host's own look at the disk images: the erase reached every byte.
    for (const [name, path] of Object.entries(disks)) {
      const bytes = readFileSync(path);
      assert.equal(bytes.findIndex((b) => b !== 0), -1, `${name}: every byte is zero`);
    }
    assert.match(serial, /clean: \/dev\/nvme0n1: NVMe format, secure erase setting [12]/);
  } finally {
    server.close();
    cleanup();
  }
});

