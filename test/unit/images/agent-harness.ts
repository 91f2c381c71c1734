/**
 * @module Harness of the ramdisk agent tests: a fake /proc and /sys of a QEMU-like machine, a
 * PATH holding only busybox applets (like the ramdisk's), disks as regular files under a fake
 * /dev, and running the agent under busybox sh.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { run } from './helpers.js';

export const agent = join(defaultAgentScriptDir(), 'rackside-agent.sh');

export function put(root: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A fake /proc and /sys of a QEMU-like host: 2 CPUs, 256 MiB, a virtio disk, a SATA disk, one e1000 NIC. */
export function writeFakeMachine(root: string): { sys: string; proc: string } {
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
export function busyboxPath(root: string): string {
  const bin = join(root, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const applet of run('busybox', ['--list']).trim().split('\n')) symlinkSync(run('sh', ['-c', 'command -v busybox']).trim(), join(bin, applet));
  return bin;
}

export interface AgentRun {
  code: number | null;
  stdout: string;
}

export function runAgent(args: string[], env: Record<string, string>): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('busybox', ['sh', agent, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout });
    });
  });
}

export function fakeEnv(root: string): Record<string, string> {
  const { sys, proc } = writeFakeMachine(root);
  const etc = join(root, 'etc');
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, 'version'), '0.1.0-test\n');
  const dev = join(root, 'dev');
  mkdirSync(dev, { recursive: true });
  // The disks of the fake sysfs as sparse files: vda 1 GiB, sda 2 GiB.
  for (const [name, bytes] of [['vda', 2097152 * 512], ['sda', 4194304 * 512]] as const) {
    writeFileSync(join(dev, name), '');
    truncateSync(join(dev, name), bytes);
  }
  return { PATH: busyboxPath(root), RACKSIDE_SYSFS: sys, RACKSIDE_PROCFS: proc, RACKSIDE_ETC: etc, RACKSIDE_RUN: join(root, 'run'), RACKSIDE_DEV: dev };
}

