/**
 * @module Structural decoding of a BareMetalHost `spec` from untrusted JSON: every field's
 * type, enums and required keys as the upstream CRD schema declares them
 * (`metal3.io_baremetalhosts.yaml`, docs/metal3-mapping.md, "Spec and status"), unknown fields rejected with
 * their path. Cross-field rules (checksums, RAID, BMC capabilities…) live in
 * validation-rules.ts and run on the decoded spec.
 * @pure
 */
import type {
  BareMetalHostSpec,
  HardwareRAIDVolume,
  RAIDConfig,
  RootDeviceHints,
  SecretReference,
  SoftwareRAIDVolume,
} from './types.js';
import {
  asObject,
  fail,
  fieldPath,
  indexPath,
  present,
  readArray,
  readFields,
  readObject,
  readStringArray,
  rejectUnknown,
} from './decode.js';

/** `spec.bootMode` values. */
export const BOOT_MODES = ['UEFI', 'UEFISecureBoot', 'legacy'] as const;
/** `spec.automatedCleaningMode` values; `metadata` is the CRD default. */
export const CLEANING_MODES = ['metadata', 'disabled'] as const;
/** `spec.inspectionMode` values (`fast`: out-of-band inspection, main branch). */
export const INSPECTION_MODES = ['disabled', 'agent', 'fast'] as const;
/** Deprecated hardware profile names (upstream `pkg/hardware/profile.go`); '' = unset. */
export const HARDWARE_PROFILES = ['', 'unknown', 'libvirt', 'dell', 'dell-raid', 'openstack', 'empty'] as const;
/** `spec.image.checksumType` values; empty or `auto` lets the backend detect the algorithm. */
export const CHECKSUM_TYPES = ['md5', 'sha256', 'sha512', 'auto', ''] as const;
/** `spec.image.format` values. */
export const DISK_FORMATS = ['raw', 'qcow2', 'vdi', 'vmdk', 'live-iso'] as const;
/** Hardware RAID levels. */
export const HARDWARE_RAID_LEVELS = ['0', '1', '2', '5', '6', '1+0', '5+0', '6+0'] as const;
/** Software RAID levels (mdadm via the ramdisk). */
export const SOFTWARE_RAID_LEVELS = ['0', '1', '1+0'] as const;
/** Kubernetes taint effects. */
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

/** Scalar spec fields; objects and arrays are decoded by the functions below. */
const SPEC_SCALARS = {
  bootMACAddress: 'string',
  online: 'boolean',
  preprovisioningNetworkDataName: 'string',
  externallyProvisioned: 'boolean',
  architecture: 'string',
  disablePowerOff: 'boolean',
  hardwareProfile: HARDWARE_PROFILES,
  bootMode: BOOT_MODES,
  automatedCleaningMode: CLEANING_MODES,
  description: 'string',
  inspectionMode: INSPECTION_MODES,
} as const;
const SPEC_OBJECTS = ['bmc', 'image', 'customDeploy', 'userData', 'networkData', 'metaData', 'rootDeviceHints', 'raid', 'firmware', 'consumerRef', 'taints'] as const;

const BMC_FIELDS = { address: 'string', credentialsName: 'string', disableCertificateVerification: 'boolean' } as const;
const IMAGE_FIELDS = { url: 'string', checksum: 'string', checksumType: CHECKSUM_TYPES, format: DISK_FORMATS, ociAuthSecretName: 'string' } as const;
const SECRET_REF_FIELDS = { name: 'string', namespace: 'string' } as const;
/** Root device hints (also the items of a software RAID volume's `physicalDisks`). */
export const HINT_FIELDS = {
  deviceName: 'string',
  hctl: 'string',
  model: 'string',
  vendor: 'string',
  serialNumber: 'string',
  minSizeGigabytes: 'uint',
  wwn: 'string',
  wwnWithExtension: 'string',
  wwnVendorExtension: 'string',
  rotational: 'boolean',
} as const;
/** `corev1.ObjectReference` fields of `spec.consumerRef`. */
const CONSUMER_REF_FIELDS = { apiVersion: 'string', kind: 'string', name: 'string', namespace: 'string', uid: 'string', resourceVersion: 'string', fieldPath: 'string' } as const;
/** `timeAdded` is accepted (Cluster API writes it) but not kept. */
const TAINT_FIELDS = { key: 'string', value: 'string', effect: TAINT_EFFECTS, timeAdded: 'string' } as const;
const HARDWARE_VOLUME_FIELDS = { level: HARDWARE_RAID_LEVELS, sizeGibibytes: 'uint', name: 'string', rotational: 'boolean', numberOfPhysicalDisks: 'int', controller: 'string' } as const;
const SOFTWARE_VOLUME_FIELDS = { level: SOFTWARE_RAID_LEVELS, sizeGibibytes: 'uint', rootVolume: 'boolean' } as const;

/** Fails at `path.key` when a decoded field is absent. */
function required<T>(value: T | undefined, path: string, key: string): T {
  if (value === undefined) fail(fieldPath(path, key), 'required field is missing');
  return value;
}

/** Decodes root device hints at `path` (structure only; the `/dev/` rule is in validation-rules.ts). */
export function decodeHints(value: unknown, path: string): RootDeviceHints {
  return readFields(value, HINT_FIELDS, path);
}

function decodeSecretRef(value: unknown, path: string): SecretReference {
  const ref = readFields(value, SECRET_REF_FIELDS, path);
  const name = required(ref.name, path, 'name');
  if (name === '') fail(fieldPath(path, 'name'), 'must not be empty');
  return ref.namespace === undefined ? { name } : { name, namespace: ref.namespace };
}

function decodeHardwareVolume(value: unknown, path: string): HardwareRAIDVolume {
  const fields = readFields(value, HARDWARE_VOLUME_FIELDS, path, ['physicalDisks']);
  const volume: HardwareRAIDVolume = { ...fields, level: required(fields.level, path, 'level') };
  if (volume.numberOfPhysicalDisks !== undefined && volume.numberOfPhysicalDisks < 1) {
    fail(fieldPath(path, 'numberOfPhysicalDisks'), `must be at least 1, got ${volume.numberOfPhysicalDisks}`);
  }
  const disks = readStringArray(asObject(value, path), 'physicalDisks', path);
  if (disks !== undefined) volume.physicalDisks = disks;
  return volume;
}

function decodeSoftwareVolume(value: unknown, path: string): SoftwareRAIDVolume {
  const fields = readFields(value, SOFTWARE_VOLUME_FIELDS, path, ['physicalDisks']);
  const volume: SoftwareRAIDVolume = { ...fields, level: required(fields.level, path, 'level') };
  const disksPath = fieldPath(path, 'physicalDisks');
  const disks = readArray(asObject(value, path), 'physicalDisks', path);
  if (disks !== undefined) volume.physicalDisks = disks.map((d, i) => decodeHints(d, indexPath(disksPath, i)));
  return volume;
}

function decodeRaid(value: unknown, path: string): RAIDConfig {
  const raw = asObject(value, path);
  rejectUnknown(raw, ['hardwareRAIDVolumes', 'softwareRAIDVolumes'], path);
  const raid: RAIDConfig = {};
  const hwPath = fieldPath(path, 'hardwareRAIDVolumes');
  const hw = readArray(raw, 'hardwareRAIDVolumes', path);
  if (hw !== undefined) raid.hardwareRAIDVolumes = hw.map((v, i) => decodeHardwareVolume(v, indexPath(hwPath, i)));
  const swPath = fieldPath(path, 'softwareRAIDVolumes');
  const sw = readArray(raw, 'softwareRAIDVolumes', path);
  if (sw !== undefined) raid.softwareRAIDVolumes = sw.map((v, i) => decodeSoftwareVolume(v, indexPath(swPath, i)));
  return raid;
}

/**
 * Decodes `spec` at `path` (usually `spec` with the caller's prefix): field types, enums and
 * required keys; unknown fields rejected; `automatedCleaningMode` defaulted to `metadata`
 * as the CRD does. `spec.firmware` is refused as deprecated.
 */
export function decodeSpecStructure(value: unknown, path: string): BareMetalHostSpec {
  const raw = asObject(value, path);
  if (present(raw, 'firmware') !== undefined) {
    fail(fieldPath(path, 'firmware'), 'deprecated and no longer supported by any driver; set BIOS settings with HostFirmwareSettings instead');
  }
  const scalars = readFields(raw, SPEC_SCALARS, path, SPEC_OBJECTS);
  const { hardwareProfile, ...rest } = scalars;
  const spec: BareMetalHostSpec = {
    ...rest,
    online: required(scalars.online, path, 'online'),
    automatedCleaningMode: scalars.automatedCleaningMode ?? 'metadata',
  };
  if (hardwareProfile !== undefined && hardwareProfile !== '') spec.hardwareProfile = hardwareProfile;

  const bmcPath = fieldPath(path, 'bmc');
  const bmcRaw = readObject(raw, 'bmc', path);
  if (bmcRaw !== undefined) {
    const bmc = readFields(bmcRaw, BMC_FIELDS, bmcPath);
    spec.bmc = { ...bmc, address: required(bmc.address, bmcPath, 'address'), credentialsName: required(bmc.credentialsName, bmcPath, 'credentialsName') };
  }
  const imagePath = fieldPath(path, 'image');
  const imageRaw = readObject(raw, 'image', path);
  if (imageRaw !== undefined) {
    const image = readFields(imageRaw, IMAGE_FIELDS, imagePath);
    const url = required(image.url, imagePath, 'url');
    if (url === '') fail(fieldPath(imagePath, 'url'), 'must not be empty');
    spec.image = { ...image, url };
  }
  const deployPath = fieldPath(path, 'customDeploy');
  const deployRaw = readObject(raw, 'customDeploy', path);
  if (deployRaw !== undefined) {
    const method = required(readFields(deployRaw, { method: 'string' }, deployPath).method, deployPath, 'method');
    if (method === '') fail(fieldPath(deployPath, 'method'), 'must not be empty');
    spec.customDeploy = { method };
  }
  for (const key of ['userData', 'networkData', 'metaData'] as const) {
    const refRaw = readObject(raw, key, path);
    if (refRaw !== undefined) spec[key] = decodeSecretRef(refRaw, fieldPath(path, key));
  }
  const hintsRaw = readObject(raw, 'rootDeviceHints', path);
  if (hintsRaw !== undefined) spec.rootDeviceHints = decodeHints(hintsRaw, fieldPath(path, 'rootDeviceHints'));
  const raidRaw = readObject(raw, 'raid', path);
  if (raidRaw !== undefined) spec.raid = decodeRaid(raidRaw, fieldPath(path, 'raid'));
  const consumerRaw = readObject(raw, 'consumerRef', path);
  if (consumerRaw !== undefined) {
    const ref = readFields(consumerRaw, CONSUMER_REF_FIELDS, fieldPath(path, 'consumerRef'));
    spec.consumerRef = Object.fromEntries(Object.entries(ref).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }
  const taintsPath = fieldPath(path, 'taints');
  const taints = readArray(raw, 'taints', path);
  if (taints !== undefined) {
    spec.taints = taints.map((t, i) => {
      const taintPath = indexPath(taintsPath, i);
      const taint = readFields(t, TAINT_FIELDS, taintPath);
      const key = required(taint.key, taintPath, 'key');
      if (key === '') fail(fieldPath(taintPath, 'key'), 'must not be empty');
      const effect = required(taint.effect, taintPath, 'effect');
      return taint.value === undefined ? { key, effect } : { key, value: taint.value, effect };
    });
  }
  return spec;
}
