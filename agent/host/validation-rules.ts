/**
 * @module Cross-field rules of the upstream BareMetalHost admission webhook
 * (`internal/webhooks/metal3.io/v1alpha1/baremetalhost_validation.go`,
 * docs/metal3-mapping.md: "Image and root device hints", "RAID", "Detach") run on a structurally decoded host: image checksums (`GetChecksum` order),
 * root device hint paths, RAID, BMC address and driver capabilities, annotations,
 * inspection mode, power and secret namespaces. Each throws a ValidationError at the field
 * the user must change.
 * @pure
 */
import { bmcCapabilities, parseBmcAddress } from '../../drivers/index.js';
import type { BareMetalHostSpec, ObjectMeta, RootDeviceHints } from './types.js';
import { Annotations } from './types.js';
import { fail, fieldPath, indexPath, isJsonObject, keyPath } from './decode.js';

/** Longest hardware RAID volume name (CRD `maxLength`). */
export const MAX_RAID_VOLUME_NAME = 64;
/** Most software RAID volumes (CRD `maxItems`; the ramdisk builds at most two md devices). */
export const MAX_SOFTWARE_RAID_VOLUMES = 2;
/** URL schemes accepted for `spec.image.url`. */
export const IMAGE_URL_SCHEMES = ['http:', 'https:', 'oci:', 'file:'] as const;

const MAC_PATTERN = /^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$/;

/** Paths of the parts of a host the rules point at (the caller's prefix included). */
export interface HostPaths {
  metadata: string;
  spec: string;
}

/** `spec.image` upstream `GetChecksum`, in order: OCI forbids a checksum, live-iso needs none, else one is required. */
export function checkImage(spec: BareMetalHostSpec, specPath: string): void {
  const image = spec.image;
  if (image === undefined) return;
  const path = fieldPath(specPath, 'image');
  let scheme = '';
  try {
    scheme = new URL(image.url).protocol;
  } catch {
    fail(fieldPath(path, 'url'), `image URL "${image.url}" is invalid: not an absolute URL`);
  }
  if (!(IMAGE_URL_SCHEMES as readonly string[]).includes(scheme)) {
    fail(fieldPath(path, 'url'), `image URL scheme "${scheme.replace(/:$/, '')}" is not supported; use ${IMAGE_URL_SCHEMES.map((s) => s.replace(/:$/, '')).join(', ')}`);
  }
  const checksum = image.checksum ?? '';
  if (image.url.toLowerCase().startsWith('oci://')) {
    if (checksum !== '') fail(fieldPath(path, 'checksum'), 'checksum must not be set for oci:// images (the registry digest verifies them)');
    return;
  }
  if (image.format === 'live-iso') {
    if (spec.customDeploy !== undefined) fail(fieldPath(specPath, 'customDeploy'), 'cannot be combined with a live-iso image: a live ISO is booted as is, nothing is deployed');
    return;
  }
  if (checksum === '') fail(fieldPath(path, 'checksum'), 'checksum is required for normal images (only live-iso and oci:// images may omit it)');
}

/** Upstream `validateRootDeviceHints`: `deviceName` is `/dev/<name>` or `/dev/disk/by-path/<link>`. */
export function checkHints(hints: RootDeviceHints | undefined, path: string): void {
  const name = hints?.deviceName;
  if (name === undefined || name === '') return;
  const where = fieldPath(path, 'deviceName');
  if (!name.startsWith('/dev/')) fail(where, `must be a /dev/ path, not "${name}"`);
  const rest = name.slice('/dev/'.length);
  const sub = rest.startsWith('disk/by-path/') ? rest.slice('disk/by-path/'.length) : rest;
  if (sub === '' || sub.includes('/')) fail(where, `must be a path in /dev/ or /dev/disk/by-path/, not "${name}"`);
}

/** RAID rules (docs/metal3-mapping.md, "RAID") on a decoded `spec.raid`. */
export function checkRaid(spec: BareMetalHostSpec, specPath: string): void {
  const raid = spec.raid;
  if (raid === undefined || raid === null) return;
  const path = fieldPath(specPath, 'raid');
  const hardware = raid.hardwareRAIDVolumes ?? [];
  const software = raid.softwareRAIDVolumes ?? [];
  if (hardware.length > 0 && software.length > 0) fail(path, 'hardwareRAIDVolumes and softwareRAIDVolumes can not be set at the same time');

  const hwPath = fieldPath(path, 'hardwareRAIDVolumes');
  const names = new Map<string, number>();
  hardware.forEach((volume, i) => {
    const at = indexPath(hwPath, i);
    if (volume.name !== undefined && volume.name !== '') {
      if (volume.name.length > MAX_RAID_VOLUME_NAME) fail(fieldPath(at, 'name'), `must be at most ${MAX_RAID_VOLUME_NAME} characters, got ${volume.name.length}`);
      const other = names.get(volume.name);
      if (other !== undefined) fail(fieldPath(at, 'name'), `duplicate volume name "${volume.name}" (also used by hardwareRAIDVolumes[${other}])`);
      names.set(volume.name, i);
    }
    const disks = volume.physicalDisks ?? [];
    if (disks.length > 0 && (volume.controller ?? '') === '') fail(fieldPath(at, 'controller'), 'required when physicalDisks is set');
    if (volume.numberOfPhysicalDisks !== undefined && disks.length > 0 && volume.numberOfPhysicalDisks !== disks.length) {
      fail(fieldPath(at, 'numberOfPhysicalDisks'), `is ${volume.numberOfPhysicalDisks} but physicalDisks lists ${disks.length} disks`);
    }
  });

  const swPath = fieldPath(path, 'softwareRAIDVolumes');
  if (software.length > MAX_SOFTWARE_RAID_VOLUMES) fail(swPath, `at most ${MAX_SOFTWARE_RAID_VOLUMES} software RAID volumes are supported, got ${software.length}`);
  let rootIndex: number | undefined;
  software.forEach((volume, i) => {
    const at = indexPath(swPath, i);
    if (i === 0 && volume.level !== '1') fail(fieldPath(at, 'level'), `the first software RAID volume must be RAID1 ("1") because it holds the root file system, got "${volume.level}"`);
    if (volume.rootVolume === true) {
      if (rootIndex !== undefined) fail(fieldPath(at, 'rootVolume'), `only one volume can be the root volume (softwareRAIDVolumes[${rootIndex}] already is)`);
      if (volume.level !== '1') fail(fieldPath(at, 'rootVolume'), `the root volume must be RAID1 ("1"), got "${volume.level}"`);
      rootIndex = i;
    }
    const disks = volume.physicalDisks;
    if (disks !== undefined) {
      if (disks.length < 2) fail(fieldPath(at, 'physicalDisks'), `must list at least 2 disks, got ${disks.length}`);
      disks.forEach((d, j) => { checkHints(d, indexPath(fieldPath(at, 'physicalDisks'), j)); });
    }
  });
  if (rootIndex !== undefined && spec.rootDeviceHints !== undefined && Object.keys(spec.rootDeviceHints).length > 0) {
    fail(fieldPath(specPath, 'rootDeviceHints'), `cannot be combined with a software RAID root volume (raid.softwareRAIDVolumes[${rootIndex}].rootVolume)`);
  }
}

/** True when inspection is disabled by the field or the legacy annotation. */
export function inspectionDisabledBy(spec: BareMetalHostSpec, annotations: Record<string, string>): boolean {
  return spec.inspectionMode === 'disabled' || annotations[Annotations.inspect] === 'disabled';
}

/**
 * BMC rules: the address must parse (`parseBmcAddress`); `bootMACAddress` has the
 * `xx:xx:xx:xx:xx:xx` form and is required by drivers that need it or when inspection is
 * disabled; secure boot and hardware RAID need driver support.
 */
export function checkBmc(spec: BareMetalHostSpec, annotations: Record<string, string>, specPath: string): void {
  const mac = spec.bootMACAddress;
  if (mac !== undefined && mac !== '' && !MAC_PATTERN.test(mac)) {
    fail(fieldPath(specPath, 'bootMACAddress'), `must be a MAC address like 52:54:00:a1:b2:c3, got "${mac}"`);
  }
  const address = spec.bmc?.address ?? '';
  if (address === '') return;
  let capabilities;
  try {
    capabilities = bmcCapabilities(parseBmcAddress(address));
  } catch (err) {
    fail(fieldPath(fieldPath(specPath, 'bmc'), 'address'), err instanceof Error ? err.message : String(err));
  }
  const disabled = inspectionDisabledBy(spec, annotations);
  if ((capabilities.needsMac || disabled) && (mac ?? '') === '') {
    const why = capabilities.needsMac ? `BMC driver ${capabilities.driver} requires a bootMACAddress value` : 'a bootMACAddress value is required when inspection is disabled';
    fail(fieldPath(specPath, 'bootMACAddress'), why);
  }
  if (spec.bootMode === 'UEFISecureBoot' && !capabilities.supportsSecureBoot) {
    fail(fieldPath(specPath, 'bootMode'), `BMC driver ${capabilities.driver} does not support secure boot`);
  }
  const hardware = spec.raid?.hardwareRAIDVolumes ?? [];
  if (hardware.length > 0 && capabilities.raidInterface === 'no-raid') {
    fail(fieldPath(fieldPath(specPath, 'raid'), 'hardwareRAIDVolumes'), `BMC driver ${capabilities.driver} does not support configuring RAID`);
  }
}

/** Secret references must stay in the host's namespace (webhook `validateCrossNamespaceSecretReferences`). */
export function checkSecretNamespaces(spec: BareMetalHostSpec, namespace: string, specPath: string): void {
  for (const key of ['userData', 'networkData', 'metaData'] as const) {
    const ref = spec[key];
    if (ref?.namespace !== undefined && ref.namespace !== '' && ref.namespace !== namespace) {
      fail(fieldPath(fieldPath(specPath, key), 'namespace'), `cross-namespace Secret references are not allowed: "${ref.namespace}" is not the host's namespace "${namespace}"`);
    }
  }
}

/** Power and inspection consistency: `disablePowerOff` needs `online`; `inspectionMode` must agree with `inspect.metal3.io`. */
export function checkModes(spec: BareMetalHostSpec, annotations: Record<string, string>, specPath: string): void {
  if (spec.disablePowerOff === true && !spec.online) {
    fail(fieldPath(specPath, 'disablePowerOff'), "a host can't have online set to false and power off disabled at the same time");
  }
  const annotation = annotations[Annotations.inspect];
  if (annotation !== undefined && annotation !== '' && spec.inspectionMode !== undefined) {
    if ((annotation === 'disabled') !== (spec.inspectionMode === 'disabled')) {
      fail(fieldPath(specPath, 'inspectionMode'), `"${spec.inspectionMode}" contradicts the ${Annotations.inspect}: "${annotation}" annotation`);
    }
  }
}

function parseJsonObject(text: string, path: string, example: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    fail(path, `must be empty or a JSON object like ${example}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isJsonObject(value)) fail(path, `must be empty or a JSON object like ${example}`);
  return value;
}

/** True when `value` is absent or one of the `allowed` strings. */
function optionalOneOf(value: unknown, allowed: readonly string[]): boolean {
  return value === undefined || (typeof value === 'string' && allowed.includes(value));
}

const OPERATIONAL_STATUSES = ['', 'OK', 'discovered', 'error', 'delayed', 'detached', 'servicing'];
const ERROR_TYPES = ['', 'provisioned registration error', 'registration error', 'inspection error', 'preparation error', 'provisioning error', 'power management error', 'detach error', 'servicing error'];

/** Upstream `validateAnnotations` (plus the detach annotation's value): values with meaning must parse. */
export function checkAnnotations(spec: BareMetalHostSpec, annotations: Record<string, string>, metadataPath: string): void {
  const base = fieldPath(metadataPath, 'annotations');
  for (const [key, value] of Object.entries(annotations)) {
    const at = keyPath(base, key);
    if (key === Annotations.reboot || key.startsWith(Annotations.rebootPrefix)) {
      if (value === '') continue;
      const args = parseJsonObject(value, at, '{"mode":"hard","force":true}');
      if (!optionalOneOf(args.mode, ['hard', 'soft', ''])) fail(at, 'invalid mode; allowed are "hard", "soft" or ""');
      if (args.force !== undefined && typeof args.force !== 'boolean') fail(at, '"force" must be a boolean');
    } else if (key === Annotations.cleaningMode) {
      if (value !== 'metadata' && value !== 'erase') fail(at, `invalid value ${JSON.stringify(value)}; allowed are "metadata" or "erase"`);
    } else if (key === Annotations.inspect) {
      if (value !== '' && value !== 'disabled') fail(at, 'invalid value; allowed are "disabled" or ""');
    } else if (key === Annotations.hardwareDetails && value !== '') {
      if (!inspectionDisabledBy(spec, annotations)) fail(at, 'hardware details may only be given when inspection is disabled (inspectionMode: disabled or the inspect.metal3.io: disabled annotation)');
      parseJsonObject(value, at, '{"cpu":{"arch":"x86_64"}}');
    } else if (key === Annotations.status && value !== '') {
      const status = parseJsonObject(value, at, '{"operationalStatus":"OK"}');
      if (!optionalOneOf(status.operationalStatus, OPERATIONAL_STATUSES)) fail(at, 'invalid operationalStatus');
      if (!optionalOneOf(status.errorType, ERROR_TYPES)) fail(at, 'invalid errorType');
    } else if (key === 'rackside.io/ipmi-cipher-suite') {
      // Like Ironic's ipmi_cipher_suite (agent/provisioner/local/bmc-host-options.ts): only 17 and 3, never 0.
      if (!['17', '3', '17,3', '3,17'].includes(value.replace(/\s/g, ''))) {
        fail(at, `invalid IPMI cipher suite ${JSON.stringify(value)}; allowed are "17", "3", "17,3" or "3,17" (never 0)`);
      }
    } else if (key === Annotations.detached && value !== '') {
      const args = parseJsonObject(value, at, '{"deleteAction":"delay"}');
      if (!optionalOneOf(args.deleteAction, ['delay', 'delete'])) fail(at, 'invalid deleteAction; allowed are "delay" or "delete"');
      if (args.force !== undefined && typeof args.force !== 'boolean') fail(at, '"force" must be a boolean');
    }
  }
}

/** Every cross-field rule, in the webhook's order of concern. */
export function checkHostRules(spec: BareMetalHostSpec, metadata: ObjectMeta, paths: HostPaths): void {
  const annotations = metadata.annotations ?? {};
  checkBmc(spec, annotations, paths.spec);
  checkSecretNamespaces(spec, metadata.namespace, paths.spec);
  checkHints(spec.rootDeviceHints, fieldPath(paths.spec, 'rootDeviceHints'));
  checkRaid(spec, paths.spec);
  checkImage(spec, paths.spec);
  checkAnnotations(spec, annotations, paths.metadata);
  checkModes(spec, annotations, paths.spec);
}
