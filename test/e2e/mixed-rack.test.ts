// End to end: a mixed rack (issue #32, item 2). One agent on a virtual rack (test/lab/virtual-rack.ts)
// runs the metal3 lifecycle of an amd64 guest (SeaBIOS, iPXE ROM, virtual Redfish BMC) and an
// arm64 guest (qemu-system-aarch64 `virt`, AAVMF, no option ROM, virtual Redfish BMC) at the
// same time, both under TCG with 1 vCPU and 512 MiB. Neither declares spec.architecture: the
// arm64 firmware's DHCP request (option 93 = 11) gets shimaa64 → signed GRUB over TFTP and the
// arm64 ramdisk (`ramdisk/arm64/`, built from Debian's arm64 packages and cached like the amd64
// one, test/lab/rack/ramdisk-cache.ts); the amd64 guest gets iPXE and the amd64 ramdisk.
//   apply → inspected → available with HardwareDetails cpu.arch x86_64 / aarch64;
//   image → provisioning (cleaning, fast-track deploy) → provisioned, and the guest boots its
//     disk: amd64 an MBR that prints a marker on COM1, arm64 an EFI system partition whose
//     \EFI\BOOT\BOOTAA64.EFI is Debian's signed monolithic GRUB echoing the marker
//     (test/lab/rack/os-image.ts); the disk holds the image's marker file;
//   image removed → deprovisioning → cleaning (metadata) → available; the disk's ends are zero.
// Everything is killed by PID and the namespace deleted at the end, pass or fail. Under
// RACKSIDE_REQUIRE_INTEGRATION=1 missing tools, root or Debian packages fail the test.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DebianPackageError } from '../../images/debian-package.js';
import { findTool } from '../helpers/netns.js';
import { fetchBootAssetLayout } from '../lab/firmware/boot-assets.js';
import { fetchArm64Package } from '../lab/firmware/arm64-apt.js';
import { missingFirmwarePrerequisites } from '../lab/firmware/firmware-e2e.js';
import { startRackImageServer } from '../lab/rack/image-server.js';
import { buildRackOsImage, OS_IMAGE_TOOLS, readGuestDisk, type RackOsImage } from '../lab/rack/os-image.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import type { HostManifestExtras } from '../lab/rack/rack-config.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import { apply, manifests, seconds, skipOrFail, timeline, waitForGuest, waitState } from './provision-steps.js';

const IMAGE_PORT = 9090;
/** Each phase of the arm64 guest under TCG (ramdisk boot ≈ 1–2 min here); generous for a loaded CI machine. */
const PHASE_MS = 8 * 60_000;

const HOSTS: RackHostSpec[] = [
  { name: 'mix-amd64', bmc: 'redfish', firmware: 'bios', memoryMb: 512, disks: [{ sizeMb: 32, serial: 'RSMIX0001' }], mac: '52:54:00:ab:10:01' },
  { name: 'mix-arm64', bmc: 'redfish', firmware: 'aavmf', memoryMb: 512, disks: [{ sizeMb: 32, serial: 'RSMIX0002' }], mac: '52:54:00:ab:10:02' },
];

/**
 * The arm64 signed boot loaders: shimaa64 + network GRUB as unpacked into the agent's boot assets
 * directory (it serves them over TFTP itself), and the monolithic GRUB for the disk image; undefined when skipped.
 */
async function arm64Loaders(t: TestContext): Promise<{ assets: Map<string, string>; diskGrub: string } | undefined> {
  try {
    const assets = await fetchBootAssetLayout('arm64');
    const grub = await fetchArm64Package('grub-efi-arm64-signed');
    return { assets, diskGrub: join(grub.rootDir, 'usr/lib/grub/arm64-efi-signed/grubaa64.efi.signed') };
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    skipOrFail(t, `arm64 shim-signed / grub-efi-arm64-signed cannot be fetched: ${err.message}`);
    return undefined;
  }
}

/** One guest's lifecycle: inspected, provisioned (disk boot marker), deprovisioned; returns its phase timings. */
async function lifecycle(t: TestContext, rack: VirtualRack, host: RackHost, image: RackOsImage, cpuArch: string, scratch: string): Promise<string> {
  const name = host.spec.name;
  const url = `http://127.0.0.1:${IMAGE_PORT}/${basename(image.path)}`;
  const metal3Image = { url, checksum: image.sha256, checksumType: 'sha256', format: 'raw' };
  const base: HostManifestExtras = { spec: { automatedCleaningMode: 'metadata', rootDeviceHints: { serialNumber: host.spec.disks[0]?.serial ?? '' } } };
  const timings: string[] = [];
  await mkdir(scratch, { recursive: true });

  let phase = Date.now();
  await apply(rack, manifests(host, false, base));
  const available = await waitState(t, rack, host, 'available', PHASE_MS);
  timings.push(`inspected → available ${seconds(phase)}`);
  assert.equal(available.status.hardware?.cpu.arch, cpuArch, `${name}: HardwareDetails cpu.arch`);
  assert.ok((available.status.hardware.nics ?? []).some((n) => n.mac === host.spec.mac), `${name}: the boot NIC in ${JSON.stringify(available.status.hardware.nics)}`);

  phase = Date.now();
  await apply(rack, manifests(host, true, { ...base, spec: { ...base.spec, image: metal3Image } }));
  await waitState(t, rack, host, 'provisioned', PHASE_MS);
  timings.push(`provisioned ${seconds(phase)}`);
  await waitForGuest(async () => (await host.serialLog()).includes(image.bootMessage), `${name}: the written image's boot marker on the serial console`, 120_000, host);
  timings.push(`disk boot marker ${seconds(phase)}`);
  const disk = await readGuestDisk(host.paths.disks[0] ?? '', scratch, []);
  assert.deepEqual(disk.partitions?.[0], image.partition, `${name}: the image's partition on the disk`);
  assert.equal(disk.marker, image.marker, `${name}: MARKER.TXT of the written image`);
  const items = await timeline(rack, name);
  assert.ok(items.some((e) => e.reason === 'DeployDone'), `${name}: DeployDone in the timeline`);
  const calls = await host.bmcCalls();
  assert.ok(calls.some((c) => c === 'reset Hdd' || c === 'powerOn Hdd'), `${name}: the BMC booted the guest from its disk after the deploy: ${JSON.stringify(calls)}`);

  phase = Date.now();
  await apply(rack, manifests(host, false, base));
  await waitState(t, rack, host, 'available', PHASE_MS);
  timings.push(`deprovisioned (cleaned) ${seconds(phase)}`);
  const after = await timeline(rack, name);
  assert.ok(after.some((e) => e.reason === 'CleanDone' && e.message.startsWith('metadata clean')) && after.some((e) => e.reason === 'DeprovisioningComplete'), `${name}: cleaned on deprovision`);
  const wiped = await readGuestDisk(host.paths.disks[0] ?? '', scratch, []);
  assert.equal(wiped.partitions, undefined, `${name}: no partition table after cleaning`);
  assert.ok(wiped.endsZeroed, `${name}: the first and last MiB are zeroed`);
  return `${name}: ${timings.join(', ')}`;
}

/** `source message` of each ramdisk fetch (boot HTTP or TFTP) in a host's timeline. */
function ramdiskFetches(items: readonly { source: string; message: string }[]): string[] {
  return items.filter((e) => /ramdisk\/(arm64\/)?(vmlinuz|initrd)/.test(e.message)).map((e) => `${e.source} ${e.message}`);
}

test('mixed rack: an amd64 (SeaBIOS) and an arm64 (AAVMF) guest inspected, provisioned from disk and deprovisioned by one agent at once', { timeout: 30 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: false, uefi: false });
  const missingTools = Object.entries(OS_IMAGE_TOOLS).filter(([tool]) => findTool(tool) === undefined);
  const missingArm = missingFirmwarePrerequisites('aavmf');
  if (!prerequisites.ok || missingTools.length > 0 || missingArm !== undefined) {
    const tools = missingTools.map(([tool, pkg]) => `- ${tool} (Debian package ${pkg})`).join('\n');
    skipOrFail(t, `mixed rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}\n${tools}\n${missingArm ?? ''}`);
    return;
  }
  const started = Date.now();
  const amd64 = await rackRamdiskOrSkip(t);
  const arm64 = amd64 === undefined ? undefined : await rackRamdiskOrSkip(t, { arch: 'arm64', format: 'initrd' });
  const loaders = arm64 === undefined ? undefined : await arm64Loaders(t);
  if (amd64 === undefined || arm64 === undefined || loaders === undefined) return;
  t.diagnostic(`ramdisks amd64 ${amd64.built ? 'built' : 'reused'}, arm64 ${arm64.built ? 'built' : 'reused'}; boot loaders in ${seconds(started)}`);

  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-mixed-'));
  if (process.env.RACKSIDE_E2E_KEEP === '1') t.diagnostic(`keeping ${dir}`);
  else t.after(() => rm(dir, { recursive: true, force: true }));
  const images = [
    await buildRackOsImage(dir, 'os-amd64', 'mix-amd64', 'raw'),
    await buildRackOsImage(dir, 'os-arm64', 'mix-arm64', 'raw', { uefiLoader: loaders.diskGrub, uefiBootFile: 'BOOTAA64.EFI' }),
  ];
  const server = await startRackImageServer(dir, images);
  t.after(() => server.close());

  const rackStarted = Date.now();
  const rack = await startVirtualRack({
    hosts: HOSTS, stateDir: join(dir, 'rack'), ramdiskDir: amd64.dir, apply: false, keepFiles: process.env.RACKSIDE_E2E_KEEP === '1',
    foreignRamdisks: [{ arch: 'arm64', dir: arm64.dir }], bootAssets: loaders.assets,
    publish: [{ nsPort: IMAGE_PORT, socketPath: server.socketPath }],
  });
  t.after(() => rack.stop());
  t.diagnostic(`rack up in ${seconds(rackStarted)} (namespace ${rack.namespace}, agent pid ${rack.agent.pid})`);

  const [x86, arm] = rack.hosts;
  assert.ok(x86 !== undefined && arm !== undefined);
  const lifecycleStarted = Date.now();
  const timings = await Promise.all([
    lifecycle(t, rack, x86, images[0]!, 'x86_64', join(dir, 'x')),
    lifecycle(t, rack, arm, images[1]!, 'aarch64', join(dir, 'a')),
  ]);
  for (const line of timings) t.diagnostic(line);
  t.diagnostic(`both lifecycles ${seconds(lifecycleStarted)}`);

  // Each guest got the ramdisk of its architecture, never the other one.
  const armFetches = ramdiskFetches(await timeline(rack, arm.spec.name));
  const x86Fetches = ramdiskFetches(await timeline(rack, x86.spec.name));
  assert.ok(armFetches.length > 0 && armFetches.every((m) => m.includes('ramdisk/arm64/')), `arm64 guest fetched only the arm64 ramdisk: ${JSON.stringify(armFetches)}`);
  // GRUB fetched it from the agent's own TFTP (its ramdisk mount; the rack configures no tftp.root).
  assert.ok(armFetches.some((m) => m.startsWith('bootsvc:tftp') && m.includes('ramdisk/arm64/initrd')), `the arm64 initrd over the agent's TFTP: ${JSON.stringify(armFetches)}`);
  assert.ok(x86Fetches.length > 0 && x86Fetches.every((m) => !m.includes('arm64')), `amd64 guest fetched only the amd64 ramdisk: ${JSON.stringify(x86Fetches)}`);
  assert.match(await arm.serialLog(), /NBP filename is shimaa64\.efi/, 'the arm64 firmware network-booted shimaa64');
  t.diagnostic(`arm64 ramdisk fetches: ${armFetches.length}, amd64: ${x86Fetches.length}`);
  t.diagnostic(`total ${seconds(started)}`);
});
