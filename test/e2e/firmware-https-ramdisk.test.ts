// Firmware matrix: the real rack ramdisk booted by OVMF UEFI HTTPS and inspected over TLS only
// (docs/https-boot.md). The agent runs with `http.tls: auto` and `http.tlsBoot: on`; the guest's
// firmware trusts its boot CA (fw_cfg `etc/edk2/https/cacerts`) and has PXE off, so its HTTPClient
// DISCOVER is answered with `https://<agent>:8443/uki/<mac>.efi`: the host's unified kernel image
// built from the rack ramdisk (test/lab/rack/ramdisk-cache.ts, with curl), whose command line
// names the `https://` agent URL and whose extra initrd holds the CA. The ramdisk inspects the
// guest and the host becomes `available`. Asserted from rackside's own flight recorder: every
// ramdisk API request of that host came over TLS, none over plain HTTP, and no kernel, initrd or
// iPXE script was fetched in clear text. Namespace prefix `fwtlsrd`; everything is removed by PID
// in t.after. Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool, package or root fails the test.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { test, type TestContext } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { UKI_STUB_X64 } from '../../images/uki.js';
import { formatTimeline, missingFirmwarePrerequisites, secondsSincePowerOn, skipOrFail, startLab } from '../lab/firmware/firmware-e2e.js';
import type { FirmwareLab } from '../lab/firmware/firmware-lab.js';
import type { FirmwareTestOs } from '../lab/firmware/test-os.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';

const MAC = '52:54:00:f5:00:21';
const AGENT_TLS = 'https://10.250.0.1:8443';
const INSPECT_DEADLINE_MS = 6 * 60_000;

/** The rack ramdisk as the firmware lab's "OS" (it only needs the files and the architecture). */
async function rackRamdiskAsOs(t: TestContext): Promise<FirmwareTestOs | undefined> {
  const started = Date.now();
  const ramdisk = await rackRamdiskOrSkip(t);
  if (ramdisk === undefined) return undefined;
  const tools = ramdisk.manifest.inputs.tools.map((tool) => tool.name);
  assert.ok(tools.includes('curl'), `the rack ramdisk carries curl: tools ${tools.join(', ')}; missing ${JSON.stringify(ramdisk.manifest.missing.tools)}`);
  const initrdBytes = (await readFile(ramdisk.initrd)).length;
  t.diagnostic(`rack ramdisk ${ramdisk.built ? 'built' : 'reused'} in ${((Date.now() - started) / 1000).toFixed(1)} s (${ramdisk.dir}, initrd ${(initrdBytes / 1048576).toFixed(1)} MiB)`);
  const release = ramdisk.manifest.inputs.kernel.release;
  return { arch: 'amd64', dir: ramdisk.dir, vmlinuz: ramdisk.vmlinuz, initrd: ramdisk.initrd, kernelRelease: release, kernelPackage: 'linux-image-amd64', kernelVersion: release, initrdBytes, built: ramdisk.built };
}

/** Polls the host until `available`; fails with the serial log, the timeline and the agent log at the deadline. */
async function waitAvailable(lab: FirmwareLab): Promise<BareMetalHost> {
  const deadline = Date.now() + INSPECT_DEADLINE_MS;
  let last: BareMetalHost | undefined;
  while (Date.now() < deadline) {
    const res = await fetch(`${lab.managementUrl}/api/v1/hosts/${lab.host}`);
    if (res.ok) {
      last = (await res.json()) as BareMetalHost;
      if (last.status.provisioning.state === 'available') return last;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  const tail = (text: string): string => text.split('\n').slice(-30).join('\n');
  assert.fail(
    `${lab.host} did not become available: state ${last?.status.provisioning.state ?? '?'}, error ${JSON.stringify(last?.status.errorMessage ?? '')}\n` +
    `--- serial log (tail)\n${tail(await lab.serialLog())}\n--- boot timeline\n${formatTimeline(await lab.bootTimeline().catch(() => []))}\n` +
    `--- agent log (tail)\n${tail(await readFile(lab.agentLog, 'utf8').catch(() => ''))}`,
  );
}

test('OVMF UEFI HTTPS boot of the rack ramdisk: its unified image names the https:// agent URL and carries the CA; inspection to available with every ramdisk call over TLS', { timeout: 12 * 60_000 }, async (t) => {
  if (!existsSync(UKI_STUB_X64)) {
    skipOrFail(t, `${UKI_STUB_X64} missing (Debian package systemd-boot-efi)`);
    return;
  }
  const missing = missingFirmwarePrerequisites('ovmf-http');
  if (missing !== undefined) {
    skipOrFail(t, `firmware ovmf-http prerequisites missing:\n${missing}`);
    return;
  }
  const os = await rackRamdiskAsOs(t);
  if (os === undefined) return;
  const lab = await startLab(t, {
    prefix: 'fwtlsrd', firmware: 'ovmf-http', bootMode: 'UEFI', mac: MAC, os, httpsBoot: true, memoryMb: 768,
    // As the virtual rack's (rack-config.ts): TCG timer check off, no 30 s LLDP listen on a bridge without a speaker.
    ramdiskKernelParams: 'no_timer_check rackside.lldp_seconds=0',
  });
  const available = await waitAvailable(lab);
  const seconds = secondsSincePowerOn(lab);
  t.diagnostic(`boot time, BMC power-on → available (UEFI HTTPS boot of the unified image, inspection over TLS): ${seconds.toFixed(1)} s`);
  assert.equal(available.status.errorMessage, '');
  assert.ok(available.status.hardware?.nics?.some((n) => n.mac === MAC), `the inventory names the boot NIC: ${JSON.stringify(available.status.hardware?.nics)}`);

  const serial = await lab.serialLog();
  assert.match(serial, new RegExp(`rackside-ramdisk: agent: reporting to ${AGENT_TLS.replaceAll('.', '\\.')}`), 'the ramdisk reports to the https:// URL');
  assert.doesNotMatch(serial, /not calling rackside/);
  assert.doesNotMatch(serial, /iPXE initialising devices/, 'no iPXE');

  const items = await lab.bootTimeline();
  const timeline = formatTimeline(items);
  const image = `/uki/${hyphenMac(MAC)}.efi`;
  const http = items.filter((e) => e.source === 'bootsvc:http');
  const path = (e: (typeof items)[number]): string => (typeof e.data?.path === 'string' ? e.data.path : '');
  assert.ok(items.some((e) => e.source === 'bootsvc:dhcp' && e.data?.bootFile === `${AGENT_TLS}${image}`), `DHCP named the image's https:// URL:\n${timeline}`);
  const fetched = http.filter((e) => path(e) === image);
  assert.ok(fetched.length > 0 && fetched.every((e) => e.data?.tls === true), `the image came over TLS:\n${timeline}`);
  const api = http.filter((e) => path(e).startsWith('/ramdisk/v1/'));
  const calls = new Set(api.map(path));
  assert.ok(calls.has('/ramdisk/v1/heartbeat') && calls.has('/ramdisk/v1/inventory'), `the ramdisk's heartbeat and inventory are in the timeline:\n${timeline}`);
  const clear = api.filter((e) => e.data?.tls !== true);
  assert.deepEqual(clear.map((e) => e.message), [], `every ramdisk API request came over TLS (${api.length} did):\n${timeline}`);
  assert.ok(!http.some((e) => /^\/ramdisk\/(vmlinuz|initrd)$/.test(path(e)) || path(e).endsWith('.ipxe')), `no kernel, initrd or iPXE script was fetched:\n${timeline}`);
  assert.ok(!items.some((e) => e.source === 'bootsvc:tftp'), `no TFTP:\n${timeline}`);
  assert.ok(items.some((e) => e.reason === 'RamdiskInventory'), `the inventory was taken:\n${timeline}`);
  t.diagnostic(`ramdisk API requests over TLS: ${api.length} (${[...calls].sort().join(', ')}), over plain HTTP: ${clear.length}`);
});
