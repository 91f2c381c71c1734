/**
 * The firmware-matrix guest's BMC backend (test/lab/firmware/firmware-backend.ts) over a recorded
 * QMP stand-in and a copy of Debian's OVMF Secure Boot variable store: a `UefiHttp` boot with a
 * URI writes Boot0F00 + BootNext and restarts QEMU around the write; one without a URI, or a PXE
 * boot, changes nothing (no restart); Secure Boot asked through the lab Redfish BMC is written at
 * the next power-on, and the BMC's SecureBoot resource reports the store's and the last boot's state.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { EFI_GLOBAL_VARIABLE, findVariable } from '../../lab/firmware/edk2-varstore.js';
import { FirmwareHostBackend } from '../../lab/firmware/firmware-backend.js';
import { secureBootAtNextStart, withSecureBootEnable } from '../../lab/firmware/ovmf-settings.js';
import { MemoryHostBackend } from '../../lab/redfish/backend.js';
import { startVirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';
import { skipOrFail } from '../../helpers/integration.js';

const MS_VARS = '/usr/share/OVMF/OVMF_VARS_4M.ms.fd';

async function guest(t: TestContext): Promise<{ backend: FirmwareHostBackend; power: MemoryHostBackend; vars: string; relaunches: string[]; notes: string[] } | undefined> {
  if (!existsSync(MS_VARS)) {
    skipOrFail(t, `${MS_VARS} missing (Debian package ovmf)`);
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fwbackend-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const vars = join(dir, 'vars.fd');
  await copyFile(MS_VARS, vars);
  await writeFile(vars, withSecureBootEnable(new Uint8Array(await readFile(vars)), false));
  const power = new MemoryHostBackend();
  const relaunches: string[] = [];
  const notes: string[] = [];
  const backend = new FirmwareHostBackend({
    qmp: power, varsPath: vars, nic: { pciDevice: 3, pciFunction: 0, mac: '52:54:00:aa:bb:cc' },
    relaunch: async (between) => {
      relaunches.push(`power ${power.power}`);
      await between();
    },
    note: (change) => notes.push(change),
  });
  return { backend, power, vars, relaunches, notes };
}

const store = async (path: string): Promise<Uint8Array> => new Uint8Array(await readFile(path));

test('UefiHttp with a URI: Boot0F00 and BootNext written while QEMU is restarted, then the QMP power-on', async (t) => {
  const g = await guest(t);
  if (g === undefined) return;
  await g.backend.powerOn('UefiHttp', { httpBootUri: 'http://10.0.0.1/ramdisk/v1/vmedia/abc.iso' });
  assert.deepEqual(g.relaunches, ['power Off'], 'one restart, while off');
  assert.deepEqual(g.notes, ['BootNext Uri(http://10.0.0.1/ramdisk/v1/vmedia/abc.iso)']);
  assert.deepEqual(g.power.boots, [{ target: 'UefiHttp', media: undefined }]);
  const fd = await store(g.vars);
  assert.deepEqual([...(findVariable(fd, 'BootNext', EFI_GLOBAL_VARIABLE)?.data ?? [])], [0x00, 0x0f]);
  // A reset onto PXE (no URI): the BMC's option and BootNext go, QEMU restarted again to drop them.
  await g.backend.reset('Pxe');
  assert.equal(g.relaunches.length, 2);
  assert.equal(findVariable(await store(g.vars), 'Boot0F00', EFI_GLOBAL_VARIABLE), undefined);
  // Nothing to change: no restart.
  await g.backend.reset('UefiHttp');
  assert.equal(g.relaunches.length, 2, 'UefiHttp without a URI keeps the DHCP-driven HTTP boot: no store change');
  assert.deepEqual(g.power.boots.map((b) => b.target), ['UefiHttp', 'Pxe', 'UefiHttp']);
});

test('Secure Boot through the lab Redfish BMC: PATCH takes effect at the next power-on; SecureBootCurrentBoot follows the firmware', async (t) => {
  const g = await guest(t);
  if (g === undefined) return;
  const bmc = await startVirtualRedfishBmc({ https: false, host: '127.0.0.1', port: 0, username: 'u', password: 'p', backend: () => g.backend });
  t.after(() => bmc.stop());
  const auth = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}`, 'content-type': 'application/json' };
  const url = `http://${bmc.host}/redfish/v1/Systems/1`;
  const secureBoot = async (): Promise<{ SecureBootEnable: boolean; SecureBootCurrentBoot: string }> =>
    (await (await fetch(`${url}/SecureBoot`, { headers: auth })).json()) as { SecureBootEnable: boolean; SecureBootCurrentBoot: string };
  assert.deepEqual(await secureBoot().then((s) => [s.SecureBootEnable, s.SecureBootCurrentBoot]), [false, 'Disabled'], 'the store has SecureBootEnable 0');
  const patched = await fetch(`${url}/SecureBoot`, { method: 'PATCH', headers: auth, body: JSON.stringify({ SecureBootEnable: true }) });
  assert.equal(patched.status, 204);
  assert.deepEqual(await secureBoot().then((s) => [s.SecureBootEnable, s.SecureBootCurrentBoot]), [true, 'Disabled'], 'pending until the next boot');
  assert.equal(secureBootAtNextStart(await store(g.vars)), false, 'the store is not written while the BMC only holds the request');
  const on = await fetch(`${url}/Actions/ComputerSystem.Reset`, { method: 'POST', headers: auth, body: JSON.stringify({ ResetType: 'On' }) });
  assert.equal(on.status, 204);
  for (let i = 0; i < 100 && g.power.boots.length === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
  assert.equal(secureBootAtNextStart(await store(g.vars)), true);
  assert.deepEqual(g.notes, ['SecureBootEnable 1']);
  assert.deepEqual(await secureBoot().then((s) => [s.SecureBootEnable, s.SecureBootCurrentBoot]), [true, 'Enabled']);
});
