/**
 * The virtual rack's QEMU command lines (test/lab/rack/qemu-guest.ts) per firmware: SeaBIOS and
 * OVMF on x86 with the iPXE ROM (or, with `uefiPxe6`, none and IPv4 off), and the arm64 `virt`
 * machine with AAVMF and no option ROM.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AAVMF_CODE, guestPaths, guestQemuBinary, OVMF_CODE, qemuArgs, validateHostSpec, type RackHostSpec } from '../../lab/rack/qemu-guest.js';

const base: RackHostSpec = { name: 'g', bmc: 'redfish', firmware: 'bios', memoryMb: 512, disks: [{ sizeMb: 32, serial: 'S1' }], mac: '52:54:00:00:00:01' };
const argsOf = (spec: RackHostSpec): string[] => qemuArgs(spec, guestPaths('/d', spec), 'tap0', { paused: true, bootIndex: { nic: 1, disk: 0 } });
const after = (args: string[], flag: string): string[] => args.flatMap((a, i) => (a === flag ? [args[i + 1] ?? ''] : []));

test('an aavmf guest: qemu-system-aarch64, virt + cortex-a57, AAVMF code and its own vars copy in pflash, a NIC without option ROM', () => {
  const spec: RackHostSpec = { ...base, firmware: 'aavmf' };
  const args = argsOf(spec);
  assert.equal(guestQemuBinary(spec), 'qemu-system-aarch64');
  assert.deepEqual(after(args, '-machine'), ['virt,graphics=off']);
  assert.deepEqual(after(args, '-cpu'), ['cortex-a57']);
  assert.deepEqual(after(args, '-drive').filter((d) => d.startsWith('if=pflash')), [
    `if=pflash,format=raw,unit=0,readonly=on,file=${AAVMF_CODE}`, `if=pflash,format=raw,unit=1,file=${guestPaths('/d', spec).ovmfVars}`,
  ]);
  assert.match(after(args, '-device').find((d) => d.startsWith('virtio-net-pci')) ?? '', /,romfile=,bootindex=1$/);
});

test('x86 guests keep their machines, OVMF only for uefi, and the iPXE option ROM', () => {
  const bios = argsOf(base);
  const uefi = argsOf({ ...base, firmware: 'uefi' });
  assert.equal(guestQemuBinary(base), 'qemu-system-x86_64');
  assert.deepEqual([after(bios, '-machine'), after(uefi, '-machine')], [['pc,graphics=off'], ['q35,graphics=off']]);
  assert.deepEqual(after(bios, '-drive').filter((d) => d.startsWith('if=pflash')), []);
  assert.ok(after(uefi, '-drive').includes(`if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`));
  for (const args of [bios, uefi]) assert.ok(!args.some((a) => a.includes('romfile=')) && !args.includes('-cpu'));
});

test('an aavmf guest needs the Redfish BMC (the IPMI guests of the rack are x86 QEMU started by ipmi_sim)', () => {
  assert.throws(() => { validateHostSpec({ ...base, bmc: 'ipmi', firmware: 'aavmf' }); }, /aavmf guest needs the Redfish BMC/);
  assert.doesNotThrow(() => { validateHostSpec({ ...base, firmware: 'aavmf' }); });
});

test('an OVMF guest with uefiPxe6: no option ROM and the firmware\'s IPv4 stack off through fw_cfg; only for uefi', () => {
  const args = argsOf({ ...base, firmware: 'uefi', uefiPxe6: true });
  assert.match(after(args, '-device').find((d) => d.startsWith('virtio-net-pci')) ?? '', /,romfile=,bootindex=1$/);
  assert.deepEqual(after(args, '-fw_cfg'), ['name=opt/org.tianocore/IPv4Support,string=no']);
  assert.deepEqual(after(argsOf({ ...base, firmware: 'uefi' }), '-fw_cfg'), [], 'the iPXE-ROM guest keeps IPv4');
  assert.throws(() => { validateHostSpec({ ...base, uefiPxe6: true }); }, /uefiPxe6 needs firmware uefi/);
});
