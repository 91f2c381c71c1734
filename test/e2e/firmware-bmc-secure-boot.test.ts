// Firmware matrix: Secure Boot switched on through the BMC. The guest is the Secure Boot OVMF
// (OVMF_CODE_4M.secboot.fd, Microsoft's keys enrolled from OVMF_VARS_4M.ms.fd) with Secure Boot
// **off** in its variable store at start (SecureBootEnable 0, test/lab/firmware/ovmf-settings.ts).
// The host is applied with `bootMode: UEFISecureBoot` and inspection disabled, so it reaches
// `available` without a boot; then an image is given. rackside's deploy reads the BMC's
// SecureBoot resource (off), PATCHes `SecureBootEnable: true` (agent/provisioner/local/secure-boot.ts)
// and boots the ramdisk by PXE. The lab's BMC writes SecureBootEnable 1 into the store at that
// power-on (QEMU restarted around the write) and the firmware chains shimx64 → signed GRUB →
// per-host grub.cfg → signed kernel → the busybox test OS standing in for the ramdisk, which
// reads `SecureBoot` from efivars: enabled. The deploy itself is not followed (the test OS does
// not heartbeat). Namespace prefix `fwsbbmc`; everything is removed by PID in t.after. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { prepareFirmwareTest, signedBootLoadersOrSkip, startLab, waitForMarker } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_MARKER_PATH, TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';
import { RACK_NETWORK } from '../lab/rack/rack-config.js';

const MAC = '52:54:00:f3:00:11';
const BOOT_DEADLINE_MS = 4 * 60_000;

test('Secure Boot through the BMC: a UEFISecureBoot deploy switches it on (Redfish SecureBoot PATCH), the firmware then boots shim → signed GRUB → signed kernel, and the OS reads SecureBoot enabled from efivars', { timeout: 8 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-secure-boot');
  if (os === undefined) return;
  const loaders = await signedBootLoadersOrSkip(t, 'secure-boot-x64', 'shim-signed / grub-efi-amd64-signed');
  if (loaders === undefined) return;
  const lab = await startLab(t, {
    prefix: 'fwsbbmc', firmware: 'ovmf-secure-boot', bootMode: 'UEFISecureBoot', mac: MAC, os, tftpFiles: loaders, secureBootOff: true, inspectionDisabled: true,
  });
  for (let i = 0; ; i += 1) {
    const { state, error } = await lab.hostStatus();
    if (state === 'available') break;
    assert.ok(i < 240 && error === '', `the host reaches available without a boot (inspection disabled): ${state} ${error}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.deepEqual(lab.bmcCalls.filter((c) => /^(powerOn|reset)/.test(c.call)), [], 'never powered on before the deploy');

  // The image: any verified file will do, the deploy is followed only to its ramdisk boot.
  const marker = `${lab.nonce}\n`;
  const imageUrl = `http://${RACK_NETWORK.agentAddress}:${RACK_NETWORK.httpPort}${TEST_OS_MARKER_PATH}`;
  await lab.applySpec({ online: true, automatedCleaningMode: 'disabled', image: { url: imageUrl, checksum: createHash('sha256').update(marker).digest('hex'), checksumType: 'sha256', format: 'raw' } });
  // The deploy prepares the image, switches Secure Boot on, then powers the guest on.
  for (let i = 0; !lab.bmcCalls.some((c) => c.call.startsWith('powerOn')); i += 1) {
    const { state, error, events } = await lab.hostStatus();
    assert.ok(i < 240 && error === '', `the deploy powers the guest on (state ${state}, error ${JSON.stringify(error)}):\n${events.map((e) => `${e.reason} ${e.message}`).join('\n')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = await waitForMarker(lab, BOOT_DEADLINE_MS);
  t.diagnostic(`boot time, BMC power-on (Secure Boot written into the store) → marker from the test OS: ${seconds.toFixed(1)} s`);

  const calls = lab.bmcCalls.map((c) => c.call);
  const on = calls.findIndex((c) => c === 'powerOn Pxe');
  assert.ok(on >= 0, `the deploy powered the guest on to PXE: ${JSON.stringify(calls)}`);
  assert.equal(calls[on + 1], 'firmware SecureBootEnable 1', `the BMC wrote SecureBootEnable 1 into the store at that power-on: ${JSON.stringify(calls)}`);
  assert.ok(!calls.slice(0, on).some((c) => c.startsWith('firmware')), 'no firmware change before the deploy boot');

  const { events } = await lab.hostStatus();
  const enabled = events.find((e) => e.reason === 'SecureBootEnabled');
  assert.match(enabled?.message ?? '', /switched on through the BMC/, `rackside found Secure Boot off and switched it on:\n${events.map((e) => `${e.reason} ${e.message}`).join('\n')}`);

  const serial = await lab.serialLog();
  assert.match(serial, /NBP filename is shimx64\.efi/);
  assert.match(serial, new RegExp(`rackside: ${lab.host} \\(${MAC}\\): loading the rackside ramdisk`), 'GRUB ran the per-host config');
  assert.match(serial, /EFI stub: UEFI Secure Boot is enabled\./, 'the kernel was started by the verified chain with Secure Boot on');
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} firmware: UEFI, Secure Boot enabled`), 'the OS read SecureBoot = 1 from efivars');
});
