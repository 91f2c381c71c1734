// Firmware matrix: OVMF UEFI HTTPS boot through the whole agent (docs/https-boot.md). The agent
// runs with `http.tls: auto` and `http.tlsBoot: on`; the guest's firmware trusts its boot CA
// through fw_cfg `etc/edk2/https/cacerts` (the EFI_SIGNATURE_LIST of `rackside export boot-ca
// --format edk2`), and PXE is off, so its first network option is UEFI HTTPv4. Its HTTPClient
// DISCOVER (arch 16) is answered with `https://<agent>:8443/uki/<mac>.efi`: the host's unified
// kernel image (the test OS kernel and initrd served as the ramdisk, and the iPXE script's kernel
// parameters with the https:// agent URL), fetched over TLS with no iPXE and no TFTP. The test
// OS reaches userspace, takes a DHCP lease and tries its marker at the https:// agent URL, which
// its busybox wget (no TLS) cannot fetch: the ramdisk that can is the real one, with curl
// (test/e2e/firmware-https-ramdisk.test.ts). Asserted: serial console and rackside's boot
// timeline (the image's request marked `tls`). Namespace prefix `fwhttps`; everything is removed
// by PID in t.after.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { UKI_STUB_X64 } from '../../images/uki.js';
import { assertInOrder, formatTimeline, prepareFirmwareTest, readTimeline, secondsSincePowerOn, skipOrFail, startLab, Steps, type TimelineStep } from '../lab/firmware/firmware-e2e.js';
import { TEST_OS_PREFIX } from '../lab/firmware/test-os-init.js';

const MAC = '52:54:00:f5:00:01';
const BOOT_DEADLINE_MS = 5 * 60_000;

test('OVMF UEFI HTTPS boot: the firmware trusting the boot CA fetches the host\'s unified kernel image over TLS, no iPXE, no TFTP; the test OS boots with the https:// agent URL', { timeout: 8 * 60_000 }, async (t) => {
  if (!existsSync(UKI_STUB_X64)) {
    skipOrFail(t, `${UKI_STUB_X64} missing (Debian package systemd-boot-efi)`);
    return;
  }
  const os = await prepareFirmwareTest(t, 'ovmf-http');
  if (os === undefined) return;
  const lab = await startLab(t, { prefix: 'fwhttps', firmware: 'ovmf-http', bootMode: 'UEFI', mac: MAC, os, httpsBoot: true });
  await lab.waitForSerial(new RegExp(`${TEST_OS_PREFIX} userspace reached: kernel ${os.kernelRelease} on x86_64`), BOOT_DEADLINE_MS);
  const seconds = secondsSincePowerOn(lab);
  t.diagnostic(`boot time, BMC power-on → the test OS's userspace: ${seconds.toFixed(1)} s`);
  // The image's command line names the HTTPS listener (unified-images.ts `tls`).
  await lab.waitForSerial(new RegExp(`${TEST_OS_PREFIX} marker fetch from https://10\\.250\\.0\\.1:8443/ramdisk/marker failed`), 60_000);

  const serial = await lab.serialLog();
  assert.doesNotMatch(serial, /iPXE initialising devices/, 'no iPXE: the unified image boots the kernel itself');

  const image = `/uki/${hyphenMac(MAC)}.efi`;
  const url = `https://10.250.0.1:8443${image}`;
  const chain: TimelineStep[] = [
    Steps.dhcp('discover', { vendor: 'HTTPClient:Arch:00016' }),
    Steps.dhcp('offer', { bootFile: url }),
    Steps.dhcp('ack', { bootFile: url }),
    Steps.http(image),
    Steps.dhcp('request', { vendor: 'udhcp' }),
  ];
  const items = await readTimeline(lab, chain);
  assertInOrder(items, chain);
  const fetched = items.filter(Steps.http(image).match);
  assert.ok(fetched.length > 0 && fetched.every((e) => e.data?.tls === true), `the image came over TLS:\n${formatTimeline(items)}`);
  assert.ok(!items.some((e) => e.source === 'bootsvc:tftp'), `HTTPS boot uses no TFTP:\n${formatTimeline(items)}`);
  assert.ok(!items.some((e) => e.source === 'bootsvc:http' && typeof e.data?.path === 'string' && e.data.path.endsWith('.ipxe')), `no iPXE script was fetched:\n${formatTimeline(items)}`);
  assert.ok(!items.some((e) => e.source === 'bootsvc:http' && e.data?.path === '/ramdisk/marker'), `nothing fetched the marker over plain HTTP:\n${formatTimeline(items)}`);
});
