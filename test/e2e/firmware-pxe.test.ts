// Firmware matrix (a): OVMF with a virtio NIC and no option ROM (`romfile=`) boots from rackside
// alone. rackside registers the guest (virtual Redfish BMC over QMP), starts inspection and
// powers it on; OVMF's own UEFI PXE client (option 93 = 7) gets `ipxe.efi` in DHCP and fetches it
// over rackside's TFTP, iPXE asks again (user class iPXE) and runs the per-host script from boot
// HTTP, which loads Debian's kernel and the busybox test OS (test/lab/firmware/); the test OS
// leases an address, fetches this run's marker from boot HTTP, prints it on the serial console
// and powers off. Asserted: the serial console (firmware, iPXE, kernel, test OS lines) and
// rackside's boot timeline (GET /api/v1/boot/<mac>/timeline) step by step. Namespace prefix
// `fwpxe`; guest, agent and namespace are removed by PID in t.after, pass or fail. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { assertInOrder, formatTimeline, readTimeline, type TimelineStep, prepareFirmwareTest, startLab, Steps, waitForMarker } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';

const MAC = '52:54:00:f1:00:01';
/** BMC power-on → marker: ~45 s here under TCG with a loaded machine; generous for CI. */
const BOOT_DEADLINE_MS = 4 * 60_000;

test('OVMF, virtio NIC without option ROM: UEFI PXE fetches ipxe.efi over TFTP, iPXE runs the per-host script, the test OS reports back', { timeout: 8 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-pxe');
  if (os === undefined) return;
  const lab = await startLab(t, { prefix: 'fwpxe', firmware: 'ovmf-pxe', bootMode: 'UEFI', mac: MAC, os });
  const seconds = await waitForMarker(lab, BOOT_DEADLINE_MS);
  t.diagnostic(`boot time, BMC power-on → marker from the test OS: ${seconds.toFixed(1)} s`);

  const serial = await lab.serialLog();
  assert.match(serial, /Start PXE over IPv4/, 'OVMF\'s own PXE client booted (no option ROM)');
  assert.match(serial, /NBP filename is ipxe\.efi/);
  assert.match(serial, /iPXE initialising devices/);
  assert.match(serial, new RegExp(`rackside: ${lab.host} \\(${MAC}\\): loading the rackside ramdisk`), 'iPXE ran the per-host script');
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${os.kernelRelease} on x86_64`));
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} firmware: UEFI, Secure Boot disabled`));

  const script = `/boot/${hyphenMac(MAC)}.ipxe`;
  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'PXEClient:Arch:00007' }),
    Steps.dhcp('ack', { bootFile: 'ipxe.efi' }),
    Steps.tftpDone('ipxe.efi'),
    Steps.dhcp('discover', { userClass: 'iPXE' }),
    Steps.dhcp('ack', { bootFile: `http://10.250.0.1:8081${script}` }),
    Steps.http(script),
    Steps.http('/ramdisk/vmlinuz'),
    Steps.http('/ramdisk/initrd'),
    Steps.dhcp('request', { vendor: 'udhcp' }),
    Steps.http('/ramdisk/marker'),
  ];
  const items = await readTimeline(lab, chain);
  assertInOrder(items, chain);
  // The firmware's PXE path worked by itself: no fall-back to its HTTP boot option.
  assert.ok(!items.some(Steps.dhcp('discover', { vendor: 'HTTPClient' }).match), `no UEFI HTTP boot attempt:\n${formatTimeline(items)}`);
});
