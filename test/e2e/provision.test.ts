// Provisioning end to end on a virtual rack (test/lab/virtual-rack.ts): the real agent with the
// local provisioner, two guests under TCG, and tiny bootable OS images (test/lab/rack/os-image.ts:
// a FAT partition with MARKER.TXT; for BIOS an MBR that prints a marker on COM1, for UEFI an EFI
// system partition whose GRUB echoes it) served by this test's own HTTP server, published into
// the rack namespace. node-p (SeaBIOS) has an IPMI BMC (ipmi_sim with QMP chassis control) and
// boots the ramdisk by PXE (qcow2 image, sha256 value); node-v (OVMF) has a virtual Redfish BMC
// (QMP backend) and boots it by virtual media (`redfish-virtualmedia://`: the BMC inserts
// rackside's per-host ISO, UEFI El Torito entry; raw image, checksum URL).
// Both run the metal3 lifecycle in parallel, one guest each for every phase:
//   apply → node-p: registering → inspecting (ramdisk) → available with hardware details;
//     node-v (inspection disabled): available without a boot;
//   image + userData → provisioning: automated cleaning first (a manageable node, Ironic's
//     `provide`), the deploy handed to the same running ramdisk (fast track), image and config
//     drive written, then a persistent disk boot → provisioned; the guest prints the image's
//     marker; the disk file holds the image, its marker file and a config-2 partition whose
//     meta_data.json/user_data carry the host;
//   image removed → deprovisioning → cleaning (metadata) → available; the disk's partition
//     table and both ends are wiped;
//   DELETE → the host record is gone and the guest powered off.
// Everything is killed by PID and the namespace deleted at the end, pass or fail.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 missing tools, root or Debian packages fail the test.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import { fetchDebianPackage } from '../../images/debian-package.js';
import { findTool } from '../helpers/netns.js';
import { encodeBootSector } from '../lab/rack/boot-sector.js';
import { startRackImageServer } from '../lab/rack/image-server.js';
import { buildRackOsImage, OS_IMAGE_TOOLS, readGuestDisk, type RackOsImage } from '../lab/rack/os-image.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import type { HostManifestExtras } from '../lab/rack/rack-config.js';
import { DEBIAN_PACKAGE_CACHE, rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import { apply, guestRunning, manifests, PHASE_DEADLINE_MS, seconds, skipOrFail, span, stepAfter, timeline, waitForGuest, waitState } from './provision-steps.js';
import type { EraseRecord } from '../../agent/erase/record.js';

const IMAGE_PORT = 9090;
const CONFIG_DRIVE_FILES = ['openstack/latest/meta_data.json', 'openstack/latest/user_data'];

const HOSTS: RackHostSpec[] = [
  { name: 'node-p', bmc: 'ipmi', firmware: 'bios', memoryMb: 512, disks: [{ sizeMb: 64, serial: 'RSPROV0001' }, { sizeMb: 16, serial: 'RSPROV0002' }], mac: '52:54:00:ab:00:01' },
  { name: 'node-v', bmc: 'redfish', firmware: 'uefi', memoryMb: 512, disks: [{ sizeMb: 64, serial: 'RSVMED0001' }], mac: '52:54:00:ab:00:02', virtualMedia: true },
];

/** One host's whole lifecycle; returns the phase timings. */
async function lifecycle(t: TestContext, rack: VirtualRack, host: RackHost, image: RackOsImage, scratch: string): Promise<string> {
  const name = host.spec.name;
  const vmedia = host.spec.virtualMedia === true;
  const imageUrl = `http://127.0.0.1:${IMAGE_PORT}/${basename(image.path)}`;
  const metal3Image = vmedia
    ? { url: imageUrl, checksum: `${imageUrl}.sha256sum`, checksumType: 'sha256', format: 'raw' }
    : { url: imageUrl, checksum: image.sha256, checksumType: 'sha256', format: 'qcow2' };
  const userData = `#cloud-config\nhostname: ${name}\n# rackside e2e user data for ${name}\n`;
  const rootDeviceHints = { serialNumber: host.spec.disks[0]?.serial ?? '' };
  // The IPMI host is inspected on registration; the Redfish one is not (inspection disabled).
  const inspect = host.spec.bmc === 'ipmi';
  const base: HostManifestExtras = {
    annotations: inspect ? {} : { 'inspect.metal3.io': 'disabled' },
    spec: { automatedCleaningMode: 'metadata', rootDeviceHints },
  };
  const timings: string[] = [];
  await mkdir(scratch, { recursive: true });

  // 1. Registered: inspected by the ramdisk (IPMI host) or, inspection disabled, available without a boot.
  let phase = Date.now();
  await apply(rack, manifests(host, false, base));
  const available = await waitState(t, rack, host, 'available');
  timings.push(`available ${seconds(phase)}`);
  const registered = (await timeline(rack, name)).filter((e) => e.reason === 'ProvisioningStateChanged').map((e) => e.message);
  if (inspect) {
    for (const s of ['none → registering', 'registering → inspecting', 'inspecting → ']) assert.ok(registered.some((m) => m.includes(s)), `${name}: "${s}" in ${JSON.stringify(registered)}`);
    assertHardware(host, available);
  } else {
    assert.ok(!registered.some((m) => m.includes('inspecting')), `${name}: not inspected: ${JSON.stringify(registered)}`);
    assert.equal(available.status.hardware, undefined, `${name}: no hardware details without inspection`);
  }
  const callsBeforeProvisioning = (await host.bmcCalls()).length;

  // 2. Provision.
  phase = Date.now();
  await apply(rack, manifests(host, true, { ...base, userData, spec: { ...base.spec, image: metal3Image } }));
  const provisioned = await waitState(t, rack, host, 'provisioned');
  timings.push(`provisioned ${seconds(phase)}`);
  assert.deepEqual(provisioned.status.provisioning.image, metal3Image, `${name}: status.provisioning.image is the spec's`);
  await waitForGuest(async () => (await host.serialLog()).includes(image.bootMessage), `${name}: the written image's boot marker on the serial console`, 90_000, host);
  timings.push(`disk boot marker ${seconds(phase)}`);

  const markerSeenMs = Date.now();
  let items = await timeline(rack, name);
  let at = stepAfter(name, items, -1, 'available → provisioning', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('available → provisioning'));
  const marks: Record<string, number> = {};
  if (vmedia) {
    // The BMC fetches the ISO while InsertMedia runs, before the provisioner records the start.
    at = stepAfter(name, items, at, 'the BMC fetched the ISO', (e) => e.reason === 'VirtualMediaFetched');
    at = stepAfter(name, items, at, 'CleaningStarted by virtual media', (e) => e.reason === 'CleaningStarted' && e.message.includes('virtual media'));
    assert.ok(!items.some((e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/initrd')), `${name}: no network boot of the ramdisk`);
  } else {
    at = stepAfter(name, items, at, 'CleaningStarted by network boot', (e) => e.reason === 'CleaningStarted' && e.message.includes('network-booting'));
    const script = `/boot/${host.spec.mac.replaceAll(':', '-')}.ipxe`;
    at = stepAfter(name, items, at, `GET ${script}`, (e) => e.source === 'bootsvc:http' && e.message.startsWith(`GET ${script} → 200`));
    at = stepAfter(name, items, at, 'GET /ramdisk/initrd', (e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/initrd → 200'));
  }
  marks.cleanStarted = items.findIndex((e) => e.reason === 'CleaningStarted');
  at = marks.heartbeat = stepAfter(name, items, at, 'RamdiskHeartbeat sent clean', (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent clean'));
  at = marks.cleanDone = stepAfter(name, items, at, 'CleanDone', (e) => e.reason === 'CleanDone');
  at = stepAfter(name, items, at, 'DeployStarted by fast track', (e) => e.reason === 'DeployStarted' && e.message.includes('fast track'));
  at = marks.sentDeploy = stepAfter(name, items, at, 'RamdiskHeartbeat sent deploy', (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent deploy'));
  at = marks.deployDone = stepAfter(name, items, at, 'DeployDone with the config drive', (e) => e.reason === 'DeployDone' && e.message.includes('config drive at byte'));
  at = marks.complete = stepAfter(name, items, at, 'ProvisioningComplete', (e) => e.reason === 'ProvisioningComplete');
  stepAfter(name, items, at, 'provisioning → provisioned', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('provisioning → provisioned'));
  const diskBootMs = markerSeenMs - Date.parse(items[marks.complete]?.time ?? '');
  timings.push(`[${span(items, 'ramdisk boot', marks.cleanStarted, marks.heartbeat)}, ${span(items, 'clean', marks.heartbeat, marks.cleanDone)}, ` +
    `${span(items, 'fast-track handoff', marks.cleanDone, marks.sentDeploy)}, ${span(items, 'deploy', marks.sentDeploy, marks.deployDone)}, ` +
    `${span(items, 'disk boot set', marks.deployDone, marks.complete)}, disk boot to marker ≤ ${(diskBootMs / 1000).toFixed(1)} s]`);
  assert.equal(items.filter((e) => e.reason === 'DeployStarted').length, 1, `${name}: one deploy`);
  assert.ok(!items.some((e) => e.reason === 'FastTrackFallback'), `${name}: the deploy went to the running ramdisk without a reboot`);

  // The BMC: ramdisk boot (PXE, or the ISO inserted and a CD boot), then a persistent disk boot.
  if (host.ipmi !== undefined) assertIpmiBoots(name, (await host.bmcCalls()).slice(callsBeforeProvisioning));
  else await assertRedfishBoots(host, vmedia);


  // The disk file: the image, its marker file and the config drive partition at the end.
  const disk = await readGuestDisk(host.paths.disks[0] ?? '', scratch, CONFIG_DRIVE_FILES);
  assert.equal(disk.partitions?.length, 2, `${name}: the image's partition and the config drive: ${JSON.stringify(disk.partitions)}`);
  assert.deepEqual(disk.partitions[0], image.partition, `${name}: the image's FAT partition`);
  assert.equal(disk.marker, image.marker, `${name}: MARKER.TXT of the written image`);
  const drive = disk.partitions[1];
  assert.ok(drive !== undefined && drive.type === 0x83 && (drive.startSector + drive.sectors) * 512 <= host.spec.disks[0]!.sizeMb * 1024 * 1024, `${name}: the config drive partition lies at the disk's end: ${JSON.stringify(drive)}`);
  const metaData = JSON.parse(disk.configDrive?.['openstack/latest/meta_data.json'] ?? '{}') as Record<string, unknown>;
  assert.equal(metaData.uuid, provisioned.metadata.uid, `${name}: meta_data.json uuid is the BareMetalHost UID`);
  assert.equal(metaData['local-hostname'], name);
  assert.equal(metaData['metal3-name'], name);
  assert.equal(metaData['metal3-namespace'], 'default');
  assert.equal(disk.configDrive?.['openstack/latest/user_data'], userData, `${name}: user_data is the userData secret, verbatim`);
  if (host.spec.disks.length > 1) {
    const second = await readGuestDisk(host.paths.disks[1] ?? '', scratch, []);
    assert.equal(second.partitions, undefined, `${name}: the second disk's old partition table was wiped by the cleaning before the deploy`);
  }

  // 3. Deprovision: automated cleaning (metadata) back to available.
  phase = Date.now();
  await apply(rack, manifests(host, false, base));
  await waitState(t, rack, host, 'available');
  timings.push(`deprovisioned ${seconds(phase)}`);
  items = await timeline(rack, name);
  at = stepAfter(name, items, -1, 'provisioned → deprovisioning', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('provisioned → deprovisioning'));
  at = marks.cleanStarted = stepAfter(name, items, at, 'CleaningStarted', (e) => e.reason === 'CleaningStarted' && !e.message.includes('fast track'));
  at = marks.heartbeat = stepAfter(name, items, at, 'RamdiskHeartbeat sent clean', (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent clean'));
  at = marks.cleanDone = stepAfter(name, items, at, 'CleanDone (metadata)', (e) => e.reason === 'CleanDone' && e.message.startsWith('metadata clean'));
  timings.push(`[${span(items, 'ramdisk boot', marks.cleanStarted, marks.heartbeat)}, ${span(items, 'clean', marks.heartbeat, marks.cleanDone)}]`);
  at = stepAfter(name, items, at, 'DeprovisioningComplete', (e) => e.reason === 'DeprovisioningComplete');
  stepAfter(name, items, at, 'deprovisioning → available', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('deprovisioning → available'));
  const wiped = await readGuestDisk(host.paths.disks[0] ?? '', scratch, []);
  assert.equal(wiped.partitions, undefined, `${name}: no partition table after cleaning`);
  assert.ok(wiped.endsZeroed, `${name}: the first and last MiB are zeroed`);
  if (vmedia) {
    const after = await host.bmcCalls();
    const lastCdBoot = Math.max(after.lastIndexOf('powerOn Cd'), after.lastIndexOf('reset Cd'));
    assert.ok(after.indexOf('ejectMedia', lastCdBoot) > lastCdBoot, `${name}: the ISO was ejected after the cleaning: ${JSON.stringify(after)}`);
  }

  // 4. DELETE: the record disappears; the guest is (left) powered off.
  phase = Date.now();
  const deleted = await fetch(`${rack.managementUrl}/api/v1/hosts/${name}`, { method: 'DELETE' });
  assert.ok(deleted.status >= 200 && deleted.status < 300, `${name}: DELETE answered ${deleted.status}: ${await deleted.text()}`);
  const gone = Date.now();
  while ((await fetch(`${rack.managementUrl}/api/v1/hosts/${name}`)).status !== 404) {
    assert.ok(Date.now() - gone < PHASE_DEADLINE_MS, `${name}: still present ${PHASE_DEADLINE_MS / 1000} s after DELETE`);
    await new Promise((r) => setTimeout(r, 500));
  }
  timings.push(`deleted ${seconds(phase)}`);
  assert.equal(await guestRunning(host), false, `${name}: the guest is powered off after the delete`);

  // Both cleans left an erase record, which outlives the host: every disk of the guest, wiped
  // and read back by the ramdisk on the real (virtio) disks.
  const records = ((await (await fetch(`${rack.managementUrl}/api/v1/erase-records?host=${name}`)).json()) as { items: EraseRecord[] }).items;
  assert.deepEqual(records.map((r) => [r.mode, r.host.provisioningState, r.status]), [['metadata', 'deprovisioning', 'ok'], ['metadata', 'provisioning', 'ok']], `${name}: erase records ${JSON.stringify(records)}`);
  for (const record of records) {
    assert.equal(record.disks.length, host.paths.disks.length, `${name}: one entry per disk: ${JSON.stringify(record.disks)}`);
    for (const d of record.disks) {
      assert.equal(d.method, 'metadata');
      assert.ok(d.sizeBytes > 0, JSON.stringify(d));
      assert.deepEqual(d.verification, { samples: 2, bytesRead: 2 * 1048576, nonZeroSamples: 0 }, `${name}: ${d.device} read back zeros at both ends`);
    }
  }
  return `${name} (${host.spec.bmc}, ${vmedia ? 'virtual media' : 'PXE'}${inspect ? ', inspected' : ''}): ${timings.join(', ')}`;
}

/** Redfish host: one ramdisk boot (PXE, or the ISO inserted and a CD boot) for clean + deploy, then a persistent disk boot, the ISO ejected before it. */
async function assertRedfishBoots(host: RackHost, vmedia: boolean): Promise<void> {
  const name = host.spec.name;
  const calls = await host.bmcCalls();
  const bootCalls = calls.filter((c) => /^(powerOn|reset|insertMedia|ejectMedia)/.test(c));
  const ramdiskBoots = bootCalls.filter((c) => c === (vmedia ? 'powerOn Cd' : 'powerOn Pxe') || c === (vmedia ? 'reset Cd' : 'reset Pxe'));
  assert.equal(ramdiskBoots.length, 1, `${name}: one ramdisk boot for clean + deploy (fast track): ${JSON.stringify(bootCalls)}`);
  const diskBoot = bootCalls.findIndex((c) => c === 'reset Hdd' || c === 'powerOn Hdd');
  assert.ok(diskBoot > bootCalls.indexOf(ramdiskBoots[0] ?? ''), `${name}: the host was reset onto its disk after the deploy: ${JSON.stringify(bootCalls)}`);
  const system = host.redfish?.server.state.systems.get('1')?.boot;
  assert.deepEqual({ target: system?.target, enabled: system?.enabled }, { target: 'Hdd', enabled: 'Continuous' }, `${name}: the BMC's boot override is a persistent disk boot`);
  if (vmedia) {
    const insert = bootCalls.findIndex((c) => c.startsWith('insertMedia http://10.250.0.1:8081/ramdisk/v1/vmedia/'));
    assert.ok(insert >= 0 && insert < bootCalls.indexOf(ramdiskBoots[0] ?? ''), `${name}: the per-host ISO was inserted before the CD boot: ${JSON.stringify(bootCalls)}`);
    const eject = bootCalls.indexOf('ejectMedia', insert);
    assert.ok(eject > insert && eject < diskBoot, `${name}: the ISO was ejected before the disk boot: ${JSON.stringify(bootCalls)}`);
    const serial = await host.serialLog();
    assert.ok(!serial.includes('loading the rackside ramdisk'), `${name}: no iPXE network boot of the ramdisk`);
    assert.match(serial, /rackside-ramdisk: started 0\.1\.0-rack/, `${name}: the ramdisk from the ISO started`);
  }

}

/**
 * IPMI host (calls since provisioning began, as the chassis control logged them): one PXE boot
 * of the ramdisk for clean + deploy (fast track), then a boot with a device other than PXE (the disk).
 */
function assertIpmiBoots(name: string, calls: readonly string[]): void {
  let device = 'none';
  const boots: string[] = [];
  for (const c of calls) {
    if (c.startsWith('set boot ')) device = c.slice('set boot '.length);
    else if (c === 'set power 1' || c.startsWith('set reset')) boots.push(device);
  }
  const pxe = boots.filter((d) => d === 'pxe');
  assert.equal(pxe.length, 1, `${name}: one PXE boot of the ramdisk for clean + deploy (fast track): boots ${JSON.stringify(boots)}, calls ${JSON.stringify(calls)}`);
  assert.ok(boots.slice(boots.indexOf('pxe') + 1).some((d) => d !== 'pxe' && d !== 'none'), `${name}: booted from its disk after the deploy: boots ${JSON.stringify(boots)}, calls ${JSON.stringify(calls)}`);
}

const MiB = 1024 * 1024;

/** Inspection by the ramdisk: status.hardware matches the QEMU command line. */
function assertHardware(host: RackHost, bmh: BareMetalHost): void {
  const { spec } = host;
  const hw = bmh.status.hardware;
  assert.ok(hw !== undefined, `${spec.name}: status.hardware is set after inspection`);
  assert.equal(hw.ramMebibytes, spec.memoryMb, `${spec.name}: RAM is -m ${spec.memoryMb}`);
  assert.equal(hw.cpu.arch, 'x86_64');
  assert.equal(hw.systemVendor.manufacturer, 'QEMU');
  const disks = (hw.storage ?? []).map((d) => ({ serial: d.serialNumber, sizeBytes: d.sizeBytes })).sort((a, b) => String(a.serial).localeCompare(String(b.serial)));
  assert.deepEqual(disks, spec.disks.map((d) => ({ serial: d.serial, sizeBytes: d.sizeMb * MiB })), `${spec.name}: the guest's virtio disks`);
  assert.ok((hw.nics ?? []).some((n) => n.mac === spec.mac), `${spec.name}: a NIC with MAC ${spec.mac}: ${JSON.stringify(hw.nics)}`);
}

test('virtual rack: an IPMI/PXE guest (inspected) and a Redfish virtual-media guest are cleaned, provisioned with a real image and config drive, boot it, are deprovisioned and deleted', { timeout: 15 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: true, virtualMedia: true });
  const missingTools = Object.entries(OS_IMAGE_TOOLS).filter(([tool]) => findTool(tool) === undefined);
  if (!prerequisites.ok || missingTools.length > 0) {
    const tools = missingTools.map(([tool, pkg]) => `- ${tool} (Debian package ${pkg})`).join('\n');
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}\n${tools}`);
    return;
  }
  const started = Date.now();
  const ramdisk = await rackRamdiskOrSkip(t, { format: 'iso' });
  if (ramdisk === undefined) return;
  t.diagnostic(`ramdisk + ISO ${ramdisk.built ? 'built' : 'reused'} in ${seconds(started)} (${ramdisk.dir})`);

  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-provision-'));
  // RACKSIDE_E2E_KEEP=1 keeps the rack's files (agent log, serial logs, disks) for a post-mortem.
  if (process.env.RACKSIDE_E2E_KEEP === '1') t.diagnostic(`keeping ${dir}`);
  else t.after(() => rm(dir, { recursive: true, force: true }));
  // node-v is a UEFI guest: its image boots Debian's signed GRUB (the package the ISO build already fetched).
  const grub = await fetchDebianPackage('grub-efi-amd64-signed', DEBIAN_PACKAGE_CACHE);
  const images = [
    await buildRackOsImage(dir, 'os-p', 'node-p', 'qcow2'),
    await buildRackOsImage(dir, 'os-v', 'node-v', 'raw', { uefiLoader: join(grub.rootDir, 'usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed') }),
  ];
  const server = await startRackImageServer(dir, images);
  t.after(() => server.close());

  const rackStarted = Date.now();
  const rack = await startVirtualRack({ hosts: HOSTS, stateDir: join(dir, 'rack'), ramdiskDir: ramdisk.dir, apply: false, publish: [{ nsPort: IMAGE_PORT, socketPath: server.socketPath }] });
  t.after(() => rack.stop());
  t.diagnostic(`rack up in ${seconds(rackStarted)} (namespace ${rack.namespace}, agent pid ${rack.agent.pid})`);
  // An old partition table on node-p's second disk: the cleaning before the first deploy must wipe it.
  const second = rack.hosts[0]?.paths.disks[1] ?? '';
  const stale = await readFile(second);
  stale.set(encodeBootSector('stale', [{ type: 0x83, startSector: 2048, sectors: 8192 }]), 0);
  await writeFile(second, stale);

  const [pxe, vmedia] = rack.hosts;
  assert.ok(pxe !== undefined && vmedia !== undefined);
  const timings = await Promise.all([lifecycle(t, rack, pxe, images[0]!, join(dir, 'p')), lifecycle(t, rack, vmedia, images[1]!, join(dir, 'v'))]);
  for (const line of timings) t.diagnostic(line);
  assert.ok(server.requests.some((r) => r.startsWith('GET /os-p.qcow2')) && server.requests.some((r) => r.startsWith('GET /os-v.raw')), `the agent fetched both images: ${JSON.stringify(server.requests)}`);
  t.diagnostic(`total ${seconds(started)}`);
});
