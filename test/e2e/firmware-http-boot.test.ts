// Firmware matrix (b): OVMF UEFI HTTP boot from rackside alone. PXE is switched off in the guest
// (fw_cfg `opt/org.tianocore/IPv4PXESupport` and `IPv6PXESupport` = no), so the firmware's first
// network option is "UEFI HTTPv4": it sends option 60 `HTTPClient:Arch:00016` (option 93 = 16)
// and accepts only an offer that answers `HTTPClient` in option 60 with an http:// URL in
// option 67 and the file field — rackside's `http://<agent>/boot/ipxe.efi`. iPXE then asks
// again and runs the per-host script (kernel and the busybox test OS over boot HTTP); the test
// OS fetches this run's marker and powers off. Asserted: serial console and rackside's boot
// timeline; no TFTP at all. Namespace prefix `fwhttp`; everything is removed by PID in t.after.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { assertInOrder, formatTimeline, readTimeline, type TimelineStep, prepareFirmwareTest, startLab, Steps, waitForMarker } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';

const MAC = '52:54:00:f2:00:01';
const BOOT_DEADLINE_MS = 4 * 60_000;

test('OVMF UEFI HTTP boot: HTTPClient (arch 16) gets an http:// ipxe.efi URL, iPXE runs the per-host script, the test OS reports back', { timeout: 8 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-http');
  if (os === undefined) return;
  const lab = await startLab(t, { prefix: 'fwhttp', firmware: 'ovmf-http', bootMode: 'UEFI', mac: MAC, os });
  const seconds = await waitForMarker(lab, BOOT_DEADLINE_MS);
  t.diagnostic(`boot time, BMC power-on → marker from the test OS: ${seconds.toFixed(1)} s`);

  const serial = await lab.serialLog();
  assert.doesNotMatch(serial, /Start PXE over IPv4/, 'PXE is off in this guest');
  assert.match(serial, /iPXE initialising devices/);
  assert.match(serial, new RegExp(`rackside: ${lab.host} \\(${MAC}\\): loading the rackside ramdisk`));
  assert.match(serial, new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${os.kernelRelease} on x86_64`));

  const url = 'http://10.250.0.1:8081/boot/ipxe.efi';
  const script = `/boot/${hyphenMac(MAC)}.ipxe`;
  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'HTTPClient:Arch:00016' }),
    Steps.dhcp('offer', { bootFile: url }),
    Steps.dhcp('ack', { bootFile: url }),
    Steps.http('/boot/ipxe.efi'),
    Steps.dhcp('discover', { userClass: 'iPXE' }),
    Steps.http(script),
    Steps.http('/ramdisk/vmlinuz'),
    Steps.http('/ramdisk/initrd'),
    Steps.dhcp('request', { vendor: 'udhcp' }),
    Steps.http('/ramdisk/marker'),
  ];
  const items = await readTimeline(lab, chain);
  const discover = items.find(Steps.dhcp('discover', { vendor: 'HTTPClient' }).match);
  assert.equal(discover?.data?.archType, 16, `the firmware's DHCPDISCOVER carries option 93 = 16 (x64 UEFI HTTP):\n${formatTimeline(items)}`);
  assertInOrder(items, chain);
  assert.ok(!items.some((e) => e.source === 'bootsvc:tftp'), `HTTP boot uses no TFTP:\n${formatTimeline(items)}`);
});
