// End to end: an aarch64 QEMU guest (qemu-system-aarch64 `virt`, AAVMF, TCG, 1 vCPU, 512 MiB, no
// disk; test/lab/firmware/firmware-guest.ts) is inspected by the real agent with rackside's arm64
// ramdisk — built on this amd64 head node from Debian's arm64 packages (images/arch-inputs.ts),
// cached across runs like the amd64 one (test/lab/rack/ramdisk-cache.ts). The host has no
// spec.architecture: its firmware's DHCP request (option 93 = 11) makes the boot lookup hand it
// /ramdisk/arm64/* (agent/boot/host-boot-plan.ts), through shimaa64 → signed GRUB over TFTP.
// The in-ramdisk agent inspects it and the host reaches `available` with HardwareDetails
// cpu.arch aarch64. Namespace prefix `insarm`; everything is removed by PID in t.after. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { test } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import { DebianPackageError } from '../../images/debian-package.js';
import { missingFirmwarePrerequisites, secondsSincePowerOn, skipOrFail, signedBootLoadersOrSkip, startLab } from '../lab/firmware/firmware-e2e.js';
import type { FirmwareTestOs } from '../lab/firmware/test-os.js';
import { ensureRackRamdisk } from '../lab/rack/ramdisk-cache.js';

const MAC = '52:54:00:f4:00:21';
/** From power-on to available; about 2 min here under TCG on a loaded two-core machine. */
const INSPECT_DEADLINE_MS = 8 * 60_000;

/** The arm64 rackside ramdisk, as the firmware lab takes a boot OS; undefined when skipped. */
async function arm64Ramdisk(t: Parameters<typeof skipOrFail>[0]): Promise<FirmwareTestOs | undefined> {
  const started = Date.now();
  try {
    const r = await ensureRackRamdisk({ arch: 'arm64', format: 'initrd', log: (line) => { t.diagnostic(line); } });
    const kernel = r.manifest.inputs.kernel;
    t.diagnostic(`arm64 ramdisk (kernel ${kernel.release}) ${r.built ? 'built' : 'reused'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return {
      arch: 'arm64', dir: r.dir, vmlinuz: r.vmlinuz, initrd: r.initrd, kernelRelease: kernel.release,
      kernelPackage: kernel.origin.kind === 'debian' ? kernel.origin.package : kernel.origin.path, kernelVersion: kernel.origin.kind === 'debian' ? kernel.origin.version : '',
      initrdBytes: (await stat(r.initrd)).size, built: r.built,
    };
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    skipOrFail(t, `the arm64 ramdisk cannot be built: ${err.message}`);
    return undefined;
  }
}

test('arm64 AAVMF guest of no declared architecture: DHCP arch 11 → the arm64 ramdisk → inspected to available with cpu.arch aarch64', { timeout: 12 * 60_000 }, async (t) => {
  const missing = missingFirmwarePrerequisites('aavmf');
  if (missing !== undefined) {
    skipOrFail(t, `firmware aavmf prerequisites missing:\n${missing}`);
    return;
  }
  const os = await arm64Ramdisk(t);
  if (os === undefined) return;
  const loaders = await signedBootLoadersOrSkip(t, 'arm64', 'arm64 shim-signed / grub-efi-arm64-signed');
  if (loaders === undefined) return;
  const lab = await startLab(t, { prefix: 'insarm', firmware: 'aavmf', bootMode: 'UEFI', mac: MAC, os, tftpFiles: loaders, memoryMb: 512 });
  const getHost = async (): Promise<BareMetalHost> => {
    const res = await fetch(`${lab.managementUrl}/api/v1/hosts/${lab.host}`);
    assert.ok(res.ok, `GET host: HTTP ${res.status}`);
    return (await res.json()) as BareMetalHost;
  };
  const deadline = Date.now() + INSPECT_DEADLINE_MS;
  let host = await getHost();
  let ramdiskUpSeconds: number | undefined;
  while (host.status.provisioning.state !== 'available' && Date.now() < deadline) {
    if (ramdiskUpSeconds === undefined && /rackside-ramdisk: started/.test(await lab.serialLog())) ramdiskUpSeconds = secondsSincePowerOn(lab);
    await new Promise((r) => setTimeout(r, 1000));
    host = await getHost();
  }
  if (host.status.provisioning.state !== 'available') {
    const serial = (await lab.serialLog()).split('\n').slice(-40).join('\n');
    assert.fail(`${lab.host} did not become available: state ${host.status.provisioning.state}, error ${JSON.stringify(host.status.errorMessage)}\n--- serial (tail)\n${serial}`);
  }
  const total = secondsSincePowerOn(lab);
  t.diagnostic(`arm64 inspection: BMC power-on → ramdisk agent started ${ramdiskUpSeconds?.toFixed(1) ?? '?'} s, → available ${total.toFixed(1)} s`);

  assert.equal(host.status.hardware?.cpu.arch, 'aarch64', 'HardwareDetails from the arm64 ramdisk');
  assert.equal(host.status.hardware.cpu.count, 1);
  const nic = (host.status.hardware.nics ?? []).find((n) => n.mac === MAC);
  assert.ok(nic !== undefined, `the boot NIC in ${JSON.stringify(host.status.hardware.nics)}`);
  const serial = await lab.serialLog();
  assert.match(serial, /NBP filename is shimaa64\.efi/);
  const timeline = await lab.bootTimeline();
  const fetched = timeline.filter((e) => /ramdisk\/arm64\/(vmlinuz|initrd)/.test(e.message)).map((e) => `${e.source} ${e.message}`);
  assert.ok(fetched.some((m) => m.includes('ramdisk/arm64/vmlinuz')) && fetched.some((m) => m.includes('ramdisk/arm64/initrd')), `the arm64 kernel and initrd were fetched:\n${fetched.join('\n')}`);
  assert.ok(!timeline.some((e) => /ramdisk\/(vmlinuz|initrd)\b/.test(e.message) && !e.message.includes('arm64')), 'the amd64 ramdisk was never fetched');
});
