// Firmware matrix (c): OVMF with Secure Boot enforced (OVMF_CODE_4M.secboot.fd, a copy of
// OVMF_VARS_4M.ms.fd with Microsoft's keys, q35 with SMM, secure pflash), virtio NIC without
// option ROM, booting from rackside alone.
// - A host with `bootMode: UEFISecureBoot` chains over TFTP: Microsoft-signed shimx64.efi →
//   Debian-signed grubnetx64.efi served as grubx64.efi → rackside's grub/grub.cfg → the per-MAC
//   grub/<mac>.cfg → Debian's signed kernel and the busybox test OS, which reports Secure Boot
//   enabled and fetches this run's marker. shim's revocation/certificate probes get a fast
//   "file not found".
// - The negative case: a host left at `bootMode: UEFI` gets the unsigned ipxe.efi; the firmware
//   downloads it and refuses it ("Access Denied"), and rackside's boot timeline shows the TFTP
//   fetch with no follow-up (no iPXE DHCP, no script, no kernel).
// Namespace prefixes `fwsb` and `fwsbneg`; everything is removed by PID in t.after. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { assertInOrder, formatTimeline, readTimeline, type TimelineStep, prepareFirmwareTest, secondsSincePowerOn, signedBootLoadersOrSkip, startLab, Steps, waitForMarker } from '../lab/firmware/firmware-e2e.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';

const MAC = '52:54:00:f3:00:01';
const NEGATIVE_MAC = '52:54:00:f3:00:02';
const BOOT_DEADLINE_MS = 4 * 60_000;

test('Secure Boot: shimx64 → signed GRUB → per-host grub.cfg → signed kernel over TFTP; the test OS runs with Secure Boot enabled', { timeout: 8 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-secure-boot');
  if (os === undefined) return;
  const loaders = await signedBootLoadersOrSkip(t, 'secure-boot-x64', 'shim-signed / grub-efi-amd64-signed');
  if (loaders === undefined) return;
  const lab = await startLab(t, { prefix: 'fwsb', firmware: 'ovmf-secure-boot', bootMode: 'UEFISecureBoot', mac: MAC, os, tftpFiles: loaders });
  const seconds = await waitForMarker(lab, BOOT_DEADLINE_MS);
  t.diagnostic(`boot time, BMC power-on → marker from the test OS: ${seconds.toFixed(1)} s`);

  const serial = await lab.serialLog();
  assert.match(serial, /NBP filename is shimx64\.efi/);
  assert.match(serial, new RegExp(`rackside: ${lab.host} \\(${MAC}\\): loading the rackside ramdisk`), 'GRUB ran the per-host config');
  assert.match(serial, /EFI stub: UEFI Secure Boot is enabled\./, 'the kernel was started by the verified chain with Secure Boot on');
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${os.kernelRelease} on x86_64`));
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} firmware: UEFI, Secure Boot enabled`));

  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'PXEClient:Arch:00007' }),
    Steps.dhcp('ack', { bootFile: 'shimx64.efi' }),
    Steps.tftpDone('shimx64.efi'),
    Steps.tftpDone('grubx64.efi'),
    Steps.tftpDone('grub/grub.cfg'),
    Steps.tftpDone(`grub/${MAC}.cfg`),
    Steps.tftpDone('ramdisk/vmlinuz'),
    Steps.tftpDone('ramdisk/initrd'),
    Steps.dhcp('request', { vendor: 'udhcp' }),
    Steps.http('/ramdisk/marker'),
  ];
  const items = await readTimeline(lab, chain);
  assertInOrder(items, chain);
  // shim 16's probes next to itself are answered "file not found" (TFTP error 1), not refused or left to time out.
  for (const probe of ['revocations_sku.efi', 'revocations_sbat.efi', 'shim_certificate_0.efi']) {
    const answer = items.find((e) => e.source === 'bootsvc:tftp' && e.data?.phase === 'error' && String(e.data.file).replace(/^\/+/, '') === probe);
    if (answer !== undefined) assert.equal(answer.data?.errorCode, 1, `${probe}: file not found\n${formatTimeline(items)}`);
  }
  assert.ok(!items.some((e) => e.source === 'bootsvc:http' && e.data?.path === `/boot/${hyphenMac(MAC)}.ipxe`), 'no iPXE on the Secure Boot chain');
});

test('Secure Boot refuses the unsigned ipxe.efi: the timeline shows the TFTP fetch and nothing after it', { timeout: 6 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-secure-boot');
  if (os === undefined) return;
  const lab = await startLab(t, { prefix: 'fwsbneg', firmware: 'ovmf-secure-boot', bootMode: 'UEFI', mac: NEGATIVE_MAC, os });
  await lab.waitForSerial(/failed to load Boot\d+ "UEFI PXEv4[^\n]*: Access Denied/, BOOT_DEADLINE_MS);
  t.diagnostic(`BMC power-on → firmware refused ipxe.efi: ${secondsSincePowerOn(lab).toFixed(1)} s`);
  // Give anything that would follow a started iPXE (its DHCP, the script fetch) time to show up.
  await new Promise((r) => setTimeout(r, 5000));

  const serial = await lab.serialLog();
  assert.match(serial, /NBP filename is ipxe\.efi/);
  assert.doesNotMatch(serial, /iPXE initialising devices/, 'the unsigned iPXE never ran');
  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'PXEClient:Arch:00007' }),
    Steps.dhcp('ack', { bootFile: 'ipxe.efi' }),
    Steps.tftpDone('ipxe.efi'),
  ];
  const items = await readTimeline(lab, chain);
  const done = assertInOrder(items, chain);
  // The chain's next steps would be iPXE's own DHCP, the per-host script and the kernel; the
  // firmware moving on to its next boot option (PXE over IPv6, then HTTP boot) is not one of them.
  const script = `/boot/${hyphenMac(NEGATIVE_MAC)}.ipxe`;
  const after: StoredEvent[] = items.slice(done + 1);
  const followUp = after.filter((e) => Steps.dhcp('discover', { userClass: 'iPXE' }).match(e)
    || (e.source === 'bootsvc:http' && (e.data?.path === script || String(e.data?.path).startsWith('/ramdisk/'))));
  assert.deepEqual(followUp.map((e) => e.message), [], `nothing follows the refused ipxe.efi:\n${formatTimeline(items)}`);
  assert.doesNotMatch(serial, new RegExp(TEST_OS_PREFIX));
});
