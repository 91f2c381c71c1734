import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { requireTools, run, scratchDir } from './helpers.js';

const agent = join(defaultAgentScriptDir(), 'rackside-agent.sh');
const token = 'tok_0123456789abcdef';

function put(root: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A fake /proc and /sys of a QEMU-like host: 2 CPUs, 256 MiB, a virtio disk, a SATA disk, one e1000 NIC. */
function writeFakeMachine(root: string): { sys: string; proc: string } {
  const proc = join(root, 'proc');
  const sys = join(root, 'sys');
  const cpu = (n: number) => `processor\t: ${n}\nmodel name\t: QEMU Virtual CPU version 2.5+\ncpu MHz\t\t: 2596.156\nflags\t\t: fpu sse2 lm\n\n`;
  put(proc, 'cpuinfo', cpu(0) + cpu(1));
  put(proc, 'meminfo', 'MemTotal:         230000 kB\nMemFree:          100000 kB\n');
  put(proc, 'cmdline', 'console=ttyS0 BOOTIF=01-52-54-00-AB-CD-EF rackside.selftest=0\n');
  put(proc, 'uptime', '12.34 20.00\n');
  put(sys, 'devices/system/memory/block_size_bytes', '8000000\n');
  put(sys, 'devices/system/memory/memory0/state', 'online\n');
  put(sys, 'devices/system/memory/memory1/state', 'online\n');
  // virtio-blk disk: serial in /sys/block/vda/serial
  put(sys, 'block/vda/size', '2097152\n');
  put(sys, 'block/vda/queue/rotational', '0\n');
  put(sys, 'block/vda/serial', 'virtio-serial-1\n');
  put(sys, 'block/vda/device/vendor', '0x1af4\n');
  // SATA disk: serial in VPD page 0x80 (4-byte header), WWN in wwid, HCTL from the device link
  put(sys, 'devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/model', 'QEMU HARDDISK   \n');
  put(sys, 'devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/vendor', 'ATA     \n');
  put(sys, 'devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/wwid', 'naa.5000c5001234abcd\n');
  put(sys, 'devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/vpd_pg80', Buffer.concat([Buffer.from([0, 0x80, 0, 12]), Buffer.from('SATA-"SER"\\1')]));
  mkdirSync(join(sys, 'devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/scsi_disk'), { recursive: true });
  put(sys, 'block/sda/size', '4194304\n');
  put(sys, 'block/sda/queue/rotational', '1\n');
  symlinkSync('../../devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0', join(sys, 'block/sda/device'));
  for (const skipped of ['loop0', 'sr0', 'ram0']) put(sys, `block/${skipped}/size`, '8\n');
  // NIC with a PCI device and driver; lo has no device
  put(sys, 'devices/pci0000:00/0000:00:03.0/vendor', '0x8086\n');
  put(sys, 'devices/pci0000:00/0000:00:03.0/device', '0x100e\n');
  mkdirSync(join(sys, 'bus/pci/drivers/e1000'), { recursive: true });
  symlinkSync('../../../../bus/pci/drivers/e1000', join(sys, 'devices/pci0000:00/0000:00:03.0/driver'));
  put(sys, 'class/net/rstest9/address', '52:54:00:ab:cd:ef\n');
  put(sys, 'class/net/rstest9/speed', '1000\n');
  put(sys, 'class/net/rstest9/carrier', '1\n');
  symlinkSync('../../../devices/pci0000:00/0000:00:03.0', join(sys, 'class/net/rstest9/device'));
  put(sys, 'class/net/lo/address', '00:00:00:00:00:00\n');
  put(sys, 'class/dmi/id/sys_vendor', 'QEMU\n');
  put(sys, 'class/dmi/id/product_name', 'Standard PC (i440FX + PIIX, 1996)\n');
  put(sys, 'class/dmi/id/product_serial', 'SN-42\n');
  put(sys, 'class/dmi/id/bios_vendor', 'SeaBIOS\n');
  put(sys, 'class/dmi/id/bios_version', '1.16.2-debian-1.16.2-1\n');
  put(sys, 'class/dmi/id/bios_date', '04/01/2014\n');
  return { sys, proc };
}

/** A PATH with only busybox applets, like the ramdisk's. */
function busyboxPath(root: string): string {
  const bin = join(root, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const applet of run('busybox', ['--list']).trim().split('\n')) symlinkSync(run('sh', ['-c', 'command -v busybox']).trim(), join(bin, applet));
  return bin;
}

interface AgentRun {
  code: number | null;
  stdout: string;
}

function runAgent(args: string[], env: Record<string, string>): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('busybox', ['sh', agent, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout });
    });
  });
}

function fakeEnv(root: string): Record<string, string> {
  const { sys, proc } = writeFakeMachine(root);
  const etc = join(root, 'etc');
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, 'version'), '0.1.0-test\n');
  return { PATH: busyboxPath(root), RACKSIDE_SYSFS: sys, RACKSIDE_PROCFS: proc, RACKSIDE_ETC: etc, RACKSIDE_RUN: join(root, 'run') };
}

test('the ramdisk scripts are shellcheck-clean POSIX sh', (t) => {
  if (!requireTools(t, { shellcheck: 'shellcheck' })) return;
  const dir = defaultAgentScriptDir();
  const files = readdirSync(dir).map((f) => join(dir, f));
  assert.ok(files.length >= 3);
  assert.equal(run('shellcheck', ['-s', 'sh', '-S', 'info', ...files]), '');
});

test('inventory: the agent reports the fake machine in the IPA inventory shape', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-inventory');
  try {
    const r = await runAgent(['inventory'], fakeEnv(dir));
    assert.equal(r.code, 0);
    const inv = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual({ ...(inv.cpu as object), architecture: 'x' }, {
      model_name: 'QEMU Virtual CPU version 2.5+', frequency: '2596.156', count: 2, architecture: 'x', flags: ['fpu', 'sse2', 'lm'],
    });
    assert.deepEqual(inv.memory, { total: 230000 * 1024, physical_mb: 256 });
    assert.deepEqual(inv.disks, [
      { name: '/dev/sda', size: 4194304 * 512, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'SATA-"SER"\\1', wwn: 'naa.5000c5001234abcd', hctl: '0:0:0:0', by_path: null },
      { name: '/dev/vda', size: 2097152 * 512, rotational: false, model: null, vendor: '0x1af4', serial: 'virtio-serial-1', wwn: null, hctl: null, by_path: null },
    ]);
    assert.deepEqual(inv.interfaces, [
      { name: 'rstest9', mac_address: '52:54:00:ab:cd:ef', ipv4_address: null, has_carrier: true, speed_mbps: 1000, driver: 'e1000', vendor: '0x8086', product: '0x100e', pci_address: '0000:00:03.0', pxe_enabled: true },
    ]);
    assert.deepEqual(inv.system_vendor, {
      manufacturer: 'QEMU', product_name: 'Standard PC (i440FX + PIIX, 1996)', serial_number: 'SN-42',
      firmware: { vendor: 'SeaBIOS', version: '1.16.2-debian-1.16.2-1', build_date: '04/01/2014' },
    });
    assert.deepEqual(inv.boot, { current_boot_mode: 'bios', pxe_interface: '52:54:00:ab:cd:ef' });
  } finally {
    cleanup();
  }
});

interface Recorded {
  path: string;
  authorization: string | undefined;
  body: unknown;
}

async function withServer(answer: (path: string, req: IncomingMessage, res: ServerResponse) => void, fn: (url: string, seen: Recorded[]) => Promise<void>): Promise<void> {
  const seen: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: body === '' ? null : JSON.parse(body) });
      answer(req.url ?? '', req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    server.close();
  }
}

test('once: heartbeat with the token, then inspect posts the inventory with the command id', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-once');
  try {
    const env = fakeEnv(dir);
    await withServer(
      (path, req, res) => {
        if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
        res.writeHead(200, { 'content-type': 'text/plain' }).end(path.endsWith('/heartbeat') ? 'command=inspect\ncommand_id=c-1\ninterval_seconds=5\n' : 'ok\n');
      },
      async (url, seen) => {
        writeFileSync(join(env.RACKSIDE_ETC!, 'url'), `${url}\n`);
        writeFileSync(join(env.RACKSIDE_ETC!, 'token'), `${token}\n`);
        const r = await runAgent(['once'], env);
        assert.equal(r.code, 0, r.stdout);
        assert.deepEqual(seen.map((s) => s.path), ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory']);
        assert.ok(seen.every((s) => s.authorization === `Bearer ${token}`));
        assert.deepEqual(seen[0]!.body, { version: '0.1.0-test', boot_mac: '52:54:00:ab:cd:ef', ip: null, uptime_seconds: 12, last_command_id: null });
        const inv = seen[1]!.body as { command_id: string; inventory: { cpu: { count: number } } };
        assert.equal(inv.command_id, 'c-1');
        assert.equal(inv.inventory.cpu.count, 2);
        assert.match(r.stdout, /rackside-ramdisk: inspect: inventory sent/);
      },
    );
  } finally {
    cleanup();
  }
});

test('once: the kernel command line wins over the overlay; a 401 is a failed heartbeat; unknown commands get an error result', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-401');
  try {
    const env = fakeEnv(dir);
    await withServer(
      (path, req, res) => {
        if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
        res.writeHead(200).end(path.endsWith('/heartbeat') ? 'command=format-everything\ncommand_id=c-2\n' : '');
      },
      async (url, seen) => {
        writeFileSync(join(env.RACKSIDE_ETC!, 'url'), 'http://127.0.0.1:9/unused\n');
        writeFileSync(join(env.RACKSIDE_ETC!, 'token'), 'wrong-token-000000\n');
        const bad = await runAgent(['once'], env);
        assert.notEqual(bad.code, 0);
        assert.match(bad.stdout, /heartbeat to http:\/\/127\.0\.0\.1:9\/unused failed/);

        writeFileSync(join(env.RACKSIDE_PROCFS!, 'cmdline'), `console=ttyS0 rackside.url=${url} rackside.token=wrong-token-000000\n`);
        const denied = await runAgent(['once'], env);
        assert.notEqual(denied.code, 0);
        assert.equal(seen.length, 1, 'the command-line URL is used');
        assert.equal(seen[0]!.authorization, 'Bearer wrong-token-000000');

        writeFileSync(join(env.RACKSIDE_PROCFS!, 'cmdline'), `rackside.url=${url} rackside.token=${token}\n`);
        const unknown = await runAgent(['once'], env);
        assert.equal(unknown.code, 0, unknown.stdout);
        assert.deepEqual(seen.at(-1), { path: '/ramdisk/v1/result', authorization: `Bearer ${token}`, body: { command_id: 'c-2', command: 'format-everything', status: 'error', message: 'unknown command' } });
      },
    );
  } finally {
    cleanup();
  }
});
