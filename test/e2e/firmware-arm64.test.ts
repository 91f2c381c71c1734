// Firmware matrix (d): arm64. qemu-system-aarch64 `-M virt -cpu cortex-a57` with AAVMF
// (qemu-efi-aarch64) and a virtio NIC without option ROM boots from rackside alone: the
// firmware's PXE client (option 93 = 11) gets shimaa64.efi over TFTP, shim loads the
// Debian-signed grubnetaa64.efi served as grubaa64.efi, GRUB reads rackside's grub/grub.cfg and
// the per-MAC config, and loads Debian's arm64 kernel and the arm64 busybox test OS over TFTP
// (packages from a private apt configuration, unpacked, never installed). The test OS must find
// its console on ttyAMA0 — rackside's GRUB config gives arm64 no `console=ttyS0` — and fetches
// this run's marker. Namespace prefix `fwarm`; everything is removed by PID in t.after. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertInOrder, causalChains, formatTimeline, readTimeline, type TimelineStep, prepareFirmwareTest, signedBootLoadersOrSkip, startLab, Steps, waitForMarker } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';

const MAC = '52:54:00:f4:00:01';
/** ~30 s here under TCG (arm64 emulation boots faster than x86's firmware). */
const BOOT_DEADLINE_MS = 4 * 60_000;

test('arm64 AAVMF: PXE (arch 11) → shimaa64 → signed GRUB → per-host grub.cfg → arm64 kernel over TFTP; the test OS reports back on ttyAMA0', { timeout: 8 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'aavmf');
  if (os === undefined) return;
  const loaders = await signedBootLoadersOrSkip(t, 'arm64', 'arm64 shim-signed / grub-efi-arm64-signed');
  if (loaders === undefined) return;
  const lab = await startLab(t, { prefix: 'fwarm', firmware: 'aavmf', bootMode: 'UEFI', mac: MAC, os, tftpFiles: loaders });
  const seconds = await waitForMarker(lab, BOOT_DEADLINE_MS);
  t.diagnostic(`boot time, BMC power-on → marker from the test OS: ${seconds.toFixed(1)} s`);

  const serial = await lab.serialLog();
  assert.match(serial, /NBP filename is shimaa64\.efi/);
  assert.match(serial, new RegExp(`rackside: ${lab.host} \\(${MAC}\\): loading the rackside ramdisk`), 'GRUB ran the per-host config');
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${os.kernelRelease} on aarch64, console ttyAMA0`), '/dev/console is the firmware-described PL011');

  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'PXEClient:Arch:00011' }),
    Steps.dhcp('ack', { bootFile: 'shimaa64.efi' }),
    Steps.tftpDone('shimaa64.efi'),
    Steps.tftpDone('grubaa64.efi'),
    Steps.tftpDone('grub/grub.cfg'),
    Steps.tftpDone(`grub/${MAC}.cfg`),
    // The arm64 ramdisk beside the head node's (docs/provisioning.md, "One ramdisk per architecture").
    Steps.tftpDone('ramdisk/arm64/vmlinuz'),
    Steps.tftpDone('ramdisk/arm64/initrd'),
    Steps.dhcp('request', { vendor: 'udhcp' }),
    Steps.http('/ramdisk/marker'),
  ];
  // GRUB may lose the initrd's final ACK as it boots the kernel: the initrd is recorded done when
  // the server's retransmissions run out, after the OS's DHCP request (causalChains).
  const chains = causalChains(chain, 'ramdisk/arm64/initrd');
  let items: Awaited<ReturnType<typeof readTimeline>> = [];
  for (const steps of chains) items = await readTimeline(lab, steps);
  const discover = items.find(Steps.dhcp('discover', { vendor: 'PXEClient:Arch:00011' }).match);
  assert.equal(discover?.data?.arch, 'arm64', `option 93 = 11 classified as arm64:\n${formatTimeline(items)}`);
  for (const steps of chains) assertInOrder(items, steps);
});
