/**
 * The pure parts of the local provisioner's preparation: step planning with Ironic's RAID rules
 * (docs/metal3-mapping.md, "Ironic mapping"), firmware step checks, the stored job's decoder, the out-of-band
 * inventory → HardwareDetails mapping for fast inspection, the BIOS schema in metal3 form, and
 * the ramdisk command parameters per operation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OutOfBandInventory } from '../../../drivers/index.js';
import type { RAIDConfig, Storage } from '../../../agent/host/types.js';
import { biosChanges, settingSchemaOf } from '../../../agent/provisioner/local/firmware-settings.js';
import type { NodeOperation } from '../../../agent/provisioner/local/node.js';
import { decodeNodeEntry } from '../../../agent/provisioner/local/node.js';
import { hardwareDetailsFromOutOfBand } from '../../../agent/provisioner/local/oob-hardware.js';
import { decodePrepJob, planFirmwareSteps, planRaidSteps, withSettling, type PrepJob } from '../../../agent/provisioner/local/prep-job.js';
import { fingerprintOf } from '../../../agent/provisioner/local/prepare.js';
import { ramdiskCommandParams } from '../../../agent/provisioner/local/ramdisk-command-params.js';

const disks: Storage[] = [
  { name: '/dev/disk/by-path/pci-0000:00:05.0', alternateNames: ['/dev/vda', '/dev/disk/by-path/pci-0000:00:05.0'], serialNumber: 'S0' },
  { name: '/dev/vdb' },
  { name: 'not-a-device' },
];

const raidCases: Record<string, { target?: RAIDConfig; actual?: RAIDConfig; want: unknown[] | RegExp }> = {
  'no target: nothing': { want: [] },
  'hardware null keeps the current volumes': { target: { hardwareRAIDVolumes: null }, want: [] },
  'hardware equal to the applied one: nothing': { target: { hardwareRAIDVolumes: [{ level: '1' }] }, actual: { hardwareRAIDVolumes: [{ level: '1' }] }, want: [] },
  'hardware [] deletes every volume': { target: { hardwareRAIDVolumes: [] }, actual: { hardwareRAIDVolumes: [{ level: '1' }] }, want: [{ kind: 'hardware-raid', volumes: [], phase: 'apply' }] },
  'hardware volume mapped to the driver request': {
    target: { hardwareRAIDVolumes: [{ level: '5', name: 'data', sizeGibibytes: 100, controller: 'RAID.Integrated.1', physicalDisks: ['Disk.0', 'Disk.1', 'Disk.2'], numberOfPhysicalDisks: 3, rotational: false }] },
    want: [{ kind: 'hardware-raid', phase: 'apply', volumes: [{ level: '5', name: 'data', sizeBytes: 100 * 1024 ** 3, controller: 'RAID.Integrated.1', physicalDisks: ['Disk.0', 'Disk.1', 'Disk.2'], diskCount: 3, rotational: false }] }],
  },
  'hardware RAID 2 is refused with the field': { target: { hardwareRAIDVolumes: [{ level: '2' }] }, want: /spec\.raid\.hardwareRAIDVolumes\[0\]\.level: RAID 2 is not supported/ },
  'disk count disagreeing with the disks listed': { target: { hardwareRAIDVolumes: [{ level: '1', physicalDisks: ['a', 'b'], numberOfPhysicalDisks: 3 }] }, want: /numberOfPhysicalDisks: 3 differs from the 2 physicalDisks/ },
  'software both empty: nothing': { target: { softwareRAIDVolumes: [] }, actual: { softwareRAIDVolumes: null }, want: [] },
  'software removed: a delete-only step': { target: { softwareRAIDVolumes: [] }, actual: { softwareRAIDVolumes: [{ level: '1' }] }, want: [{ kind: 'software-raid', volumes: [], phase: 'clean' }] },
  'software without disks uses the inspected ones (serial, else device name)': {
    target: { softwareRAIDVolumes: [{ level: '1', sizeGibibytes: 20 }, { level: '0' }] },
    want: [{ kind: 'software-raid', phase: 'clean', volumes: [
      { level: '1', sizeGibibytes: 20, physicalDisks: [{ serialNumber: 'S0' }, { deviceName: '/dev/vdb' }] },
      { level: '0', physicalDisks: [{ serialNumber: 'S0' }, { deviceName: '/dev/vdb' }] },
    ] }],
  },
  'software: the first volume must be RAID 1': { target: { softwareRAIDVolumes: [{ level: '0' }] }, want: /softwareRAIDVolumes\[0\]\.level: the first software RAID volume must be RAID 1/ },
  'software: one disk is not enough': { target: { softwareRAIDVolumes: [{ level: '1', physicalDisks: [{ serialNumber: 'A' }] }] }, want: /physicalDisks: at least 2 disks are needed, 1 given/ },
};
for (const [name, c] of Object.entries(raidCases)) {
  test(`planRaidSteps: ${name}`, () => {
    if (c.want instanceof RegExp) assert.throws(() => planRaidSteps(c.target, c.actual, disks), c.want);
    else assert.deepEqual(planRaidSteps(c.target, c.actual, disks), c.want);
  });
}

test('planRaidSteps: software RAID without disks after a fast inspection fails saying why', () => {
  assert.throws(() => planRaidSteps({ softwareRAIDVolumes: [{ level: '1' }] }, undefined, []), /not given, and inspection found 0 usable disk\(s\)/);
});

const firmwareCases: Record<string, { settings: Record<string, string | number>; updates: { component: string; url: string }[]; want: unknown[] | RegExp }> = {
  'nothing': { settings: {}, updates: [], want: [] },
  'settings as strings, sorted; reboot and settle after': {
    settings: { B: 2, A: 'x' }, updates: [],
    want: [{ kind: 'bios', settings: { A: 'x', B: '2' } }, { kind: 'reboot', phase: 'request' }, { kind: 'settle' }],
  },
  'updates in order': {
    settings: {}, updates: [{ component: 'bmc', url: 'http://fw/bmc.bin' }, { component: 'nic:NIC.1', url: 'https://fw/nic.bin' }],
    want: [{ kind: 'firmware', updates: [{ component: 'bmc', url: 'http://fw/bmc.bin', state: 'start' }, { component: 'nic:NIC.1', url: 'https://fw/nic.bin', state: 'start' }] }, { kind: 'reboot', phase: 'request' }, { kind: 'settle' }],
  },
  'unknown component': { settings: {}, updates: [{ component: 'cpld', url: 'http://fw/x' }], want: /firmware update 0: component "cpld" must be bmc, bios or nic:<id>/ },
  'not an http URL': { settings: {}, updates: [{ component: 'bios', url: 'ftp://fw/x' }], want: /firmware update 0 \(bios\): url "ftp:\/\/fw\/x" must be an http\(s\) URL/ },
};
for (const [name, c] of Object.entries(firmwareCases)) {
  test(`planFirmwareSteps: ${name}`, () => {
    if (c.want instanceof RegExp) assert.throws(() => withSettling(planFirmwareSteps(c.settings, c.updates)), c.want);
    else assert.deepEqual(withSettling(planFirmwareSteps(c.settings, c.updates)), c.want);
  });
}

const job: PrepJob = {
  purpose: 'prepare', fingerprint: '{}', startedAtMs: 1, deadlineMs: 2, state: 'running', step: 1,
  steps: [{ kind: 'bios', settings: { A: 'b' } }, { kind: 'reboot', phase: 'wait' }], needsReboot: true, rebootedAtMs: 5, touchedPower: true,
};
const jobCases: Record<string, { value: unknown; want: PrepJob | undefined }> = {
  'round trip': { value: structuredClone(job), want: job },
  'not an object': { value: 'job', want: undefined },
  'unknown purpose': { value: { ...job, purpose: 'install' }, want: undefined },
  'unknown step kind': { value: { ...job, steps: [{ kind: 'reflash-everything' }] }, want: undefined },
  'negative step index': { value: { ...job, step: -1 }, want: undefined },
  'done is not a stored state': { value: { ...job, state: 'done' }, want: undefined },
};
for (const [name, c] of Object.entries(jobCases)) {
  test(`decodePrepJob: ${name}`, () => {
    assert.deepEqual(decodePrepJob(c.value), c.want);
  });
}

test('a nodes entry keeps the job and the raid operation across a store round trip', () => {
  const raid = { volumes: [{ level: '1' as const, physicalDisks: [{ serialNumber: 'A' }, { serialNumber: 'B' }] }] };
  const entry = decodeNodeEntry(JSON.parse(JSON.stringify({
    local: { provID: 'p', state: 'cleaning', prep: job, op: { kind: 'raid', commandId: 'raid-1', startedAtMs: 1, deadlineMs: 2, phase: 'sent', raid } },
  })));
  const local = entry.local;
  assert.ok(local?.op !== undefined);
  assert.deepEqual(local.prep, job);
  assert.deepEqual([local.op.kind, local.op.raid], ['raid', raid]);
});

test('fingerprintOf ignores key order and undefined fields', () => {
  assert.equal(fingerprintOf({ b: [1, { y: 1, x: 2 }], a: undefined, c: 'z' }), fingerprintOf({ c: 'z', b: [1, { x: 2, y: 1 }] }));
  assert.notEqual(fingerprintOf({ a: [1, 2] }), fingerprintOf({ a: [2, 1] }));
});

const inventory: OutOfBandInventory = {
  system: { manufacturer: 'Dell Inc.', model: 'PowerEdge R650', serialNumber: 'ABC123', uuid: undefined },
  bios: { vendor: 'Dell Inc.', version: '2.19.1', releaseDate: '2024-05-01' },
  processors: [
    { model: 'Xeon Gold 6338', architecture: 'x86_64', cores: 32, threads: 64, maxSpeedMhz: 3200 },
    { model: 'Xeon Gold 6338', architecture: 'x86_64', cores: 32, threads: undefined, maxSpeedMhz: 3000 },
  ],
  memoryMebibytes: 262144,
  nics: [
    { id: 'NIC.Integrated.1-1-1', macAddress: 'B0:7B:25:00:00:01', speedMbps: 25000, linkUp: true },
    { id: 'NIC.Integrated.1-2-1', macAddress: undefined, speedMbps: 0, linkUp: false },
  ],
  drives: [
    { id: 'Disk.Bay.0', model: 'MZ7L3480', serialNumber: 'S1', sizeBytes: 480_103_981_056, mediaType: 'SSD', protocol: 'SATA' },
    { id: 'Disk.Bay.1', model: 'ST2000', serialNumber: 'S2', sizeBytes: 2_000_398_934_016, mediaType: 'HDD', protocol: 'SAS' },
    { id: 'Disk.Direct.0', model: 'PM1733', serialNumber: 'S3', sizeBytes: undefined, mediaType: 'SSD', protocol: 'NVMe' },
  ],
};

test('hardwareDetailsFromOutOfBand maps the BMC inventory to HardwareDetails', () => {
  assert.deepEqual(hardwareDetailsFromOutOfBand(inventory, 'b0:7b:25:00:00:01', 'x86_64'), {
    systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', serialNumber: 'ABC123' },
    firmware: { bios: { date: '2024-05-01', vendor: 'Dell Inc.', version: '2.19.1' } },
    ramMebibytes: 262144,
    nics: [{ name: 'NIC.Integrated.1-1-1', mac: 'b0:7b:25:00:00:01', speedGbps: 25, pxe: true }, { name: 'NIC.Integrated.1-2-1' }],
    storage: [
      { name: 'Disk.Bay.0', rotational: false, type: 'SSD', sizeBytes: 480_103_981_056, model: 'MZ7L3480', serialNumber: 'S1' },
      { name: 'Disk.Bay.1', rotational: true, type: 'HDD', sizeBytes: 2_000_398_934_016, model: 'ST2000', serialNumber: 'S2' },
      { name: 'Disk.Direct.0', rotational: false, type: 'NVME', model: 'PM1733', serialNumber: 'S3' },
    ],
    cpu: { arch: 'x86_64', model: 'Xeon Gold 6338', clockMegahertz: 3200, count: 96 },
  });
});

test('hardwareDetailsFromOutOfBand falls back to the host architecture when the BMC names none', () => {
  const bare: OutOfBandInventory = { ...inventory, processors: [], nics: [], drives: [], memoryMebibytes: undefined };
  const d = hardwareDetailsFromOutOfBand(bare, '', 'aarch64');
  assert.deepEqual(d.cpu, { arch: 'aarch64' });
  assert.equal(d.ramMebibytes, undefined);
});

test('settingSchemaOf and biosChanges', () => {
  assert.deepEqual(settingSchemaOf({ attributeType: 'String', minLength: 0, maxLength: 32, readOnly: false }), { attribute_type: 'String', min_length: 0, max_length: 32, read_only: false });
  assert.deepEqual(biosChanges({ B: 2, A: 'same', C: 'new' }, { A: 'same', B: '1' }), { B: '2', C: 'new' });
});

const op: NodeOperation = {
  kind: 'deploy', commandId: 'c', startedAtMs: 0, deadlineMs: 1, phase: 'sent',
  deploy: { imageUrl: 'http://x/i', checksum: 'a'.repeat(64), checksumType: 'sha256' },
  raid: { volumes: [{ level: '1', physicalDisks: [{ serialNumber: 'A' }, { serialNumber: 'B' }] }] },
};
const paramCases: Record<string, { op: NodeOperation; command: Parameters<typeof ramdiskCommandParams>[1]; want: unknown }> = {
  'deploy sends its parameters': { op, command: 'deploy', want: { deploy: op.deploy } },
  'clean defaults to metadata': { op, command: 'clean', want: { clean: { mode: 'metadata' } } },
  'clean sends its mode': { op: { ...op, clean: { mode: 'erase' } }, command: 'clean', want: { clean: { mode: 'erase' } } },
  'raid sends its volumes': { op, command: 'raid', want: { raid: op.raid } },
  'raid without volumes sends none (the encoder refuses it)': { op: { ...op, raid: undefined }, command: 'raid', want: {} },
  'inspect has no parameters': { op, command: 'inspect', want: {} },
};
for (const [name, c] of Object.entries(paramCases)) {
  test(`ramdiskCommandParams: ${name}`, () => {
    assert.deepEqual(ramdiskCommandParams(c.op, c.command), c.want);
  });
}
