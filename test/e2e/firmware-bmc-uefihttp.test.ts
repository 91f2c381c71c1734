// Firmware matrix: UEFI HTTP boot set through the BMC. A `redfish-uefihttp+http://` host on OVMF
// with PXE switched off: rackside inspects it by booting its per-host rackside ISO with a one-time
// `BootSourceOverrideTarget: UefiHttp` and `Boot.HttpBootUri` = the ISO's URL
// (agent/provisioner/local/ramdisk-boot.ts). The lab's BMC writes that URI into the guest's
// variable store as a boot option (PciRoot/Pci/MAC/IPv4/Uri device path) plus `BootNext` at the
// power-on (test/lab/firmware/firmware-backend.ts, QEMU restarted around the write). OVMF's
// HttpBootDxe takes the URI from the boot option: its DHCP only configures the address — rackside,
// having read the URI back from the BMC, names no boot file to this host for this boot — and it downloads the `.iso` into a RAM disk and boots its El Torito UEFI entry (shim → signed GRUB
// → the real ramdisk, the agent URL and token from the ISO's host slot), which inspects the host:
// `available`. Namespace prefix `fwuhttp`; everything is removed by PID in t.after. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatTimeline, prepareFirmwareTest, secondsSincePowerOn, startLab } from '../lab/firmware/firmware-e2e.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { RACK_NETWORK } from '../lab/rack/rack-config.js';
import type { StoredEvent } from '../../agent/store/types.js';

const MAC = '52:54:00:f2:00:11';
const INSPECT_DEADLINE_MS = 5 * 60_000;

test('UefiHttp + HttpBootUri through the BMC: OVMF boots the per-host ISO from the URI in its boot option (not from DHCP), the ramdisk inspects the host', { timeout: 12 * 60_000 }, async (t) => {
  const os = await prepareFirmwareTest(t, 'ovmf-http');
  if (os === undefined) return;
  const ramdisk = await rackRamdiskOrSkip(t, { format: 'iso', log: (line) => { t.diagnostic(line); } });
  if (ramdisk?.iso === undefined) return;
  const lab = await startLab(t, {
    prefix: 'fwuhttp', firmware: 'ovmf-http', bootMode: 'UEFI', mac: MAC, os, memoryMb: 1024,
    bmcScheme: 'redfish-uefihttp+http', iso: { iso: ramdisk.iso, manifest: join(ramdisk.dir, 'manifest.json') },
  });
  let last = { state: '', error: '' };
  const deadline = Date.now() + INSPECT_DEADLINE_MS;
  while (Date.now() < deadline) {
    last = await lab.hostStatus();
    if (last.state === 'available' || last.error !== '') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const items = await lab.bootTimeline();
  const serial = await lab.serialLog();
  const evidence = `\n--- BMC calls\n${lab.bmcCalls.map((c) => c.call).join('\n')}\n--- boot timeline\n${formatTimeline(items)}\n--- serial (tail)\n${serial.split('\n').slice(-40).join('\n')}`;
  assert.equal(last.state, 'available', `the ramdisk booted from the ISO inspected the host (state ${last.state}, error ${JSON.stringify(last.error)})${evidence}`);
  t.diagnostic(`boot time, BMC power-on → available: ${secondsSincePowerOn(lab).toFixed(1)} s`);
  const inventory = (await lab.hostStatus()).events.find((e) => e.reason === 'RamdiskInventory');
  assert.equal(inventory?.data?.bootMode, 'uefi', `the ramdisk reported a UEFI boot: ${inventory?.message ?? 'no RamdiskInventory event'}`);

  // The BMC was given the ISO's URL and wrote it into the firmware at the power-on.
  const calls = lab.bmcCalls.map((c) => c.call);
  const base = `http://${RACK_NETWORK.agentAddress}:${RACK_NETWORK.httpPort}`;
  const on = calls.find((c) => c.startsWith('powerOn UefiHttp '));
  const uri = on?.slice('powerOn UefiHttp '.length) ?? '';
  assert.match(uri, new RegExp(`^${base.replace(/\./g, '\\.')}/ramdisk/v1/vmedia/[0-9a-f]{32}\\.iso$`), `a UefiHttp power-on with the per-host ISO as HttpBootUri${evidence}`);
  assert.ok(calls.includes(`firmware BootNext Uri(${uri})`), `the URI went into the firmware's BootNext option${evidence}`);
  const path = uri.slice(base.length);

  // The URI came from the BMC: the firmware fetched the ISO, and nothing DHCP named as a boot file.
  const isHttp = (e: StoredEvent, p: string): boolean => e.source === 'bootsvc:http' && e.data?.method === 'GET' && e.data.path === p;
  assert.ok(items.some((e) => isHttp(e, path) && e.data?.status === 200), `GET ${path} → 200${evidence}`);
  const bootFiles = new Set(items.filter((e) => e.source === 'bootsvc:dhcp' && typeof e.data?.bootFile === 'string' && e.data.bootFile !== '').map((e) => String(e.data?.bootFile)));
  // The BMC took the URI, so rackside's DHCP gave this host an address and no boot file (agent/provisioner/local/node.ts).
  const acks = items.filter((e) => e.source === 'bootsvc:dhcp' && (e.data?.message === 'offer' || e.data?.message === 'ack'));
  assert.ok(acks.length >= 2, `the firmware and the ramdisk got addresses from rackside's DHCP${evidence}`);
  assert.deepEqual([...bootFiles], [], `no boot file in rackside's DHCP replies to this MAC${evidence}`);
  assert.ok(!items.some((e) => e.source === 'bootsvc:tftp'), `no TFTP${evidence}`);
  assert.doesNotMatch(serial, /Start PXE over IPv4/, 'PXE is off in this guest');
});
