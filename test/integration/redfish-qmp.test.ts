// The virtual Redfish BMC's QMP backend against a real QEMU (TCG, 64 MiB, no disk: the firmware
// just sits there): power on/off through cont/stop+system_reset, ACPI power button, boot order via
// bootindex, virtual media as a downloaded image put into the CD drive with blockdev-change-medium;
// then the Redfish driver end to end through the virtual BMC onto the same guest.
// QEMU is killed by its PID. Needs qemu-system-x86_64 and openssl.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DriverRegistry, registerBuiltinDrivers, waitForPowerState } from '../../drivers/index.js';
import { QmpHostBackend } from '../lab/redfish/qmp-backend.js';
import { startVirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';

const QEMU = 'qemu-system-x86_64';
const missing = [QEMU, 'openssl'].filter((tool) => spawnSync(tool, ['--version']).error !== undefined);
const skip = missing.length === 0 ? undefined : `${missing.join(', ')} not installed`;
if (skip !== undefined && process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(skip);

interface Guest {
  readonly socketPath: string;
  readonly process: ChildProcess;
  readonly dir: string;
  stop(): Promise<void>;
}

async function startGuest(): Promise<Guest> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-qmp-'));
  const socketPath = join(dir, 'qmp.sock');
  const child = spawn(QEMU, [
    '-nodefaults', '-display', 'none', '-S', '-no-shutdown', '-accel', 'tcg', '-m', '64', '-smp', '1',
    '-qmp', `unix:${socketPath},server=on,wait=off`,
    '-drive', 'if=none,id=cdrive,media=cdrom,readonly=on', '-device', 'ide-cd,id=cd0,drive=cdrive,bus=ide.1',
    '-netdev', 'user,id=n0,restrict=on', '-device', 'e1000,id=net0,netdev=n0',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  for (let i = 0; i < 200 && !existsSync(socketPath); i++) {
    if (child.exitCode !== null) throw new Error(`qemu exited: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(existsSync(socketPath), `QMP socket appeared (${stderr})`);
  return {
    socketPath, process: child, dir,
    stop: async () => {
      if (child.exitCode === null && child.pid !== undefined) {
        const exited = new Promise((r) => child.once('exit', r));
        process.kill(child.pid, 'SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function imageServer(): Promise<{ server: Server; url: string }> {
  const iso = Buffer.alloc(256 * 1024, 0x41);
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/octet-stream' }); res.end(iso); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/images/host.iso` };
}

async function cdFile(backend: QmpHostBackend): Promise<string | undefined> {
  const blocks = await backend.command('query-block') as { device: string; qdev?: string; inserted?: { file: string } }[];
  return blocks.find((b) => b.qdev?.includes('cd0') === true || b.device === 'cdrive')?.inserted?.file;
}

test('QMP backend: power, ACPI button, boot order and CD medium on a real QEMU guest', { skip, timeout: 60_000 }, async () => {
  const guest = await startGuest();
  const images = await imageServer();
  const backend = new QmpHostBackend({ socketPath: guest.socketPath, bootDevices: { Cd: 'cd0', Pxe: 'net0' }, mediaDir: guest.dir });
  try {
    assert.equal(await backend.powerState(), 'Off', 'started with -S: powered off');
    await backend.powerOn('Pxe');
    assert.equal(await backend.powerState(), 'On');
    assert.equal(await backend.command('qom-get', { path: '/machine/peripheral/net0', property: 'bootindex' }), 0);
    assert.equal(await backend.command('qom-get', { path: '/machine/peripheral/cd0', property: 'bootindex' }), 1);
    await backend.shutdown(); // no OS to honour the ACPI button: the guest stays on
    assert.equal(await backend.powerState(), 'On');
    await backend.reset('Cd');
    assert.equal(await backend.command('qom-get', { path: '/machine/peripheral/cd0', property: 'bootindex' }), 0);
    await backend.powerOff();
    assert.equal(await backend.powerState(), 'Off');
    await backend.insertMedia(images.url);
    assert.equal(await cdFile(backend), backend.mediaFile);
    await backend.ejectMedia();
    assert.equal(await cdFile(backend), undefined);
  } finally {
    await backend.close();
    await guest.stop();
    await new Promise((r) => images.server.close(r));
  }
});

test('Redfish driver → virtual BMC → QMP → QEMU guest', { skip, timeout: 60_000 }, async () => {
  const guest = await startGuest();
  const images = await imageServer();
  const backend = new QmpHostBackend({ socketPath: guest.socketPath, bootDevices: { Cd: 'cd0', Pxe: 'net0' }, mediaDir: guest.dir });
  const bmc = await startVirtualRedfishBmc({ backend: () => backend });
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry);
  const driver = registry.create(`redfish-virtualmedia://${bmc.host}`, { username: 'admin', password: 'password' }, { disableCertificateVerification: true });
  try {
    assert.equal(await driver.power.getPowerState(), 'off');
    await driver.virtualMedia.insertMedia({ imageUrl: images.url });
    assert.equal(await cdFile(backend), backend.mediaFile);
    await driver.bootDevice.setBootDevice('cdrom', { mode: 'uefi' });
    await driver.power.setPower('on');
    await waitForPowerState(driver.power, 'on', { timeoutMs: 10_000, pollMs: 50 });
    assert.equal(await backend.command('qom-get', { path: '/machine/peripheral/cd0', property: 'bootindex' }), 0);
    await driver.power.setPower('off');
    await waitForPowerState(driver.power, 'off', { timeoutMs: 10_000, pollMs: 50 });
    await driver.virtualMedia.ejectMedia();
    assert.equal(await cdFile(backend), undefined);
  } finally {
    await driver.close();
    await bmc.stop();
    await guest.stop();
    await new Promise((r) => images.server.close(r));
  }
});
