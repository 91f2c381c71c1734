/**
 * @module The BareMetalHost resource (metal3.io/v1alpha1) and its vocabulary, with upstream
 * JSON field names so metal3 manifests round-trip unchanged (docs/metal3-mapping.md, "Types").
 * Types only: no logic lives here.
 * @pure
 */

/** `status.provisioning.state` values (metal3 `ProvisioningState`). `ready` is the deprecated alias of `available`. */
export type ProvisioningState =
  | ''
  | 'unmanaged'
  | 'registering'
  | 'match profile'
  | 'preparing'
  | 'ready'
  | 'available'
  | 'provisioning'
  | 'provisioned'
  | 'externally provisioned'
  | 'deprovisioning'
  | 'inspecting'
  | 'powering off before delete'
  | 'deleting';

/** Every provisioning state, in lifecycle order (for tables, diagrams and validation). */
export const PROVISIONING_STATES = [
  '',
  'unmanaged',
  'registering',
  'inspecting',
  'match profile',
  'preparing',
  'ready',
  'available',
  'provisioning',
  'provisioned',
  'externally provisioned',
  'deprovisioning',
  'powering off before delete',
  'deleting',
] as const satisfies readonly ProvisioningState[];

/** `status.operationalStatus` values. */
export type OperationalStatus = '' | 'OK' | 'discovered' | 'error' | 'delayed' | 'detached' | 'servicing';

/** `status.errorType` values. `detach error` is missing from upstream's CRD enum; we allow it. */
export type ErrorType =
  | 'provisioned registration error'
  | 'registration error'
  | 'inspection error'
  | 'preparation error'
  | 'provisioning error'
  | 'power management error'
  | 'detach error'
  | 'servicing error';

/** Boot mode; an empty `spec.bootMode` means `UEFI`. */
export type BootMode = 'UEFI' | 'UEFISecureBoot' | 'legacy';
/** Cleaning on provision and deprovision: `metadata` wipes partition tables; `disabled` skips cleaning. */
export type AutomatedCleaningMode = 'metadata' | 'disabled';
/** Image checksum algorithm; empty or `auto` means detect. */
export type ChecksumType = 'md5' | 'sha256' | 'sha512' | 'auto' | '';
/** OS image disk format. */
export type DiskFormat = 'raw' | 'qcow2' | 'vdi' | 'vmdk' | 'live-iso';
/** Preprovisioning image format: an ISO for virtual media, or kernel + initrd for (i)PXE. */
export type ImageFormat = 'iso' | 'initrd';
/** Power-off style for reboots and power-off. */
export type RebootMode = 'hard' | 'soft';
/** `spec.inspectionMode`: `fast` is out-of-band (Redfish) inspection without a ramdisk. */
export type InspectionMode = 'disabled' | 'agent' | 'fast';
/** Disk class in hints and inventory. */
export type DiskType = 'HDD' | 'SSD' | 'NVME';

/** `spec.image`. */
export interface Image {
  url: string;
  checksum?: string;
  checksumType?: ChecksumType;
  format?: DiskFormat;
  ociAuthSecretName?: string;
}

/** `spec.customDeploy`: a named deploy method run by the ramdisk instead of writing an image. */
export interface CustomDeploy {
  method: string;
}

/** Root device hints; every set field must match (AND). Sizes in GB (10⁹). */
export interface RootDeviceHints {
  deviceName?: string;
  hctl?: string;
  model?: string;
  vendor?: string;
  serialNumber?: string;
  minSizeGigabytes?: number;
  wwn?: string;
  wwnWithExtension?: string;
  wwnVendorExtension?: string;
  rotational?: boolean;
}

/** A hardware RAID volume (`spec.raid.hardwareRAIDVolumes[]`). */
export interface HardwareRAIDVolume {
  level: '0' | '1' | '2' | '5' | '6' | '1+0' | '5+0' | '6+0';
  sizeGibibytes?: number;
  name?: string;
  rotational?: boolean;
  numberOfPhysicalDisks?: number;
  controller?: string;
  physicalDisks?: string[];
}

/** A software RAID volume built by the ramdisk (`spec.raid.softwareRAIDVolumes[]`). */
export interface SoftwareRAIDVolume {
  level: '0' | '1' | '1+0';
  sizeGibibytes?: number;
  rootVolume?: boolean;
  physicalDisks?: RootDeviceHints[];
}

/** `spec.raid`: `null`/absent keeps the current hardware RAID; `[]` deletes all. */
export interface RAIDConfig {
  hardwareRAIDVolumes?: HardwareRAIDVolume[] | null;
  softwareRAIDVolumes?: SoftwareRAIDVolume[] | null;
}

/** Deprecated `spec.firmware` (the webhook rejects it; kept for reading old manifests). */
export interface FirmwareConfig {
  virtualizationEnabled?: boolean;
  simultaneousMultithreadingEnabled?: boolean;
  sriovEnabled?: boolean;
}

/** Actual BIOS settings as read from the BMC. */
export type SettingsMap = Record<string, string>;
/** Desired BIOS settings (Kubernetes IntOrString values). */
export type DesiredSettingsMap = Record<string, string | number>;

/** A BIOS attribute's schema (JSON snake_case, as upstream). */
export interface SettingSchema {
  attribute_type?: 'Enumeration' | 'String' | 'Integer' | 'Boolean' | 'Password' | '';
  allowable_values?: string[];
  lower_bound?: number;
  upper_bound?: number;
  min_length?: number;
  max_length?: number;
  read_only?: boolean;
  unique?: boolean;
}

/** A firmware update request: component `bmc`, `bios` or `nic:<id>`. */
export interface FirmwareUpdate {
  component: string;
  url: string;
}

/** Firmware component versions as reported by the provisioner. */
export interface FirmwareComponentStatus {
  component: string;
  initialVersion: string;
  currentVersion?: string;
  lastVersionFlashed?: string;
  updatedAt?: string;
}

/** `status.hardware` (HardwareDetails). Sizes in bytes, clock in MHz. */
export interface HardwareDetails {
  systemVendor: { manufacturer?: string; productName?: string; serialNumber?: string };
  firmware: { bios: { date?: string; vendor?: string; version?: string } };
  ramMebibytes?: number;
  nics?: NIC[];
  storage?: Storage[];
  cpu: { arch?: string; model?: string; clockMegahertz?: number; flags?: string[]; count?: number };
  hostname?: string;
}

/** One network interface (a dual-stack NIC appears twice, once per IP). */
export interface NIC {
  name?: string;
  model?: string;
  mac?: string;
  ip?: string;
  speedGbps?: number;
  vlans?: { id?: number; name?: string }[];
  vlanId?: number;
  pxe?: boolean;
  lldp?: { switchID?: string; portID?: string; switchSystemName?: string };
  pciAddress?: string;
}

/** One disk. `name` is the stable by-path name when there is one. */
export interface Storage {
  name?: string;
  alternateNames?: string[];
  rotational?: boolean;
  type?: DiskType;
  sizeBytes?: number;
  vendor?: string;
  model?: string;
  serialNumber?: string;
  wwn?: string;
  wwnVendorExtension?: string;
  wwnWithExtension?: string;
  hctl?: string;
}

/** A reference to a Secret; `namespace` must equal the host's. */
export interface SecretReference {
  name: string;
  namespace?: string;
}

/** `spec.bmc`. */
export interface BMCDetails {
  address: string;
  credentialsName: string;
  disableCertificateVerification?: boolean;
}

/** `spec` of a BareMetalHost (fields rackside acts on; unknown upstream fields are refused by validation). */
export interface BareMetalHostSpec {
  bmc?: BMCDetails;
  bootMACAddress?: string;
  online: boolean;
  image?: Image;
  customDeploy?: CustomDeploy;
  userData?: SecretReference;
  networkData?: SecretReference;
  metaData?: SecretReference;
  preprovisioningNetworkDataName?: string;
  externallyProvisioned?: boolean;
  architecture?: string;
  disablePowerOff?: boolean;
  rootDeviceHints?: RootDeviceHints;
  raid?: RAIDConfig | null;
  firmware?: FirmwareConfig;
  hardwareProfile?: string;
  bootMode?: BootMode;
  automatedCleaningMode?: AutomatedCleaningMode;
  consumerRef?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  description?: string;
  inspectionMode?: InspectionMode;
}

/** `{start, end}` of one operation, RFC 3339 timestamps; empty string = not set. */
export interface OperationMetric {
  start: string;
  end: string;
}

/** `status.operationHistory`. */
export interface OperationHistory {
  register: OperationMetric;
  inspect: OperationMetric;
  provision: OperationMetric;
  deprovision: OperationMetric;
}

/** Which credentials (secret name and its resourceVersion) were tried or known good. */
export interface CredentialsStatus {
  credentials?: { name: string; namespace: string };
  credentialsVersion?: string;
}

/** `status.provisioning`: what has actually been applied to the host. */
export interface ProvisionStatus {
  state: ProvisioningState;
  /** The provisioner's node id (JSON key capital `ID`, as upstream). */
  ID: string;
  image: Image;
  rootDeviceHints?: RootDeviceHints;
  bootMode?: BootMode;
  raid?: RAIDConfig;
  firmware?: FirmwareConfig;
  customDeploy?: CustomDeploy;
}

/** `status` of a BareMetalHost. */
export interface BareMetalHostStatus {
  operationalStatus: OperationalStatus;
  errorType?: ErrorType | '';
  errorMessage: string;
  errorCount: number;
  provisioningFailCount?: number;
  lastAttemptedImage?: Image;
  lastUpdated?: string;
  hardwareProfile: string;
  hardware?: HardwareDetails;
  poweredOn: boolean;
  goodCredentials: CredentialsStatus;
  triedCredentials: CredentialsStatus;
  operationHistory: OperationHistory;
  provisioning: ProvisionStatus;
}

/** Kubernetes-style object metadata, as rackside keeps it. */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  /** Monotonic per object; a write naming a stale version is refused (409). */
  resourceVersion: string;
  /** Bumped on every spec change. */
  generation: number;
  creationTimestamp: string;
  /** Set by a delete request; the object stays until the delete flow completes. */
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
}

/** The BareMetalHost resource. */
export interface BareMetalHost {
  apiVersion: 'metal3.io/v1alpha1';
  kind: 'BareMetalHost';
  metadata: ObjectMeta;
  spec: BareMetalHostSpec;
  status: BareMetalHostStatus;
}

/** A Kubernetes `v1` Secret (BMC credentials, userData, networkData…). `data` values are base64. */
export interface Secret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: ObjectMeta;
  type?: string;
  data: Record<string, string>;
}

/** The annotation keys with upstream meaning (docs/metal3-mapping.md, "Enums and annotations"). */
export const Annotations = {
  paused: 'baremetalhost.metal3.io/paused',
  detached: 'baremetalhost.metal3.io/detached',
  status: 'baremetalhost.metal3.io/status',
  reboot: 'reboot.metal3.io',
  rebootPrefix: 'reboot.metal3.io/',
  inspect: 'inspect.metal3.io',
  hardwareDetails: 'inspect.metal3.io/hardwaredetails',
  /**
   * rackside's own, not upstream's: the automated cleaning's mode, `metadata` (the default, IPA's
   * erase_devices_metadata) or `erase` (every disk zeroed whole, IPA's erase_devices). Each clean
   * leaves a signed erase record (docs/erase-records.md).
   */
  cleaningMode: 'rackside.io/cleaning-mode',
} as const;

/** The finalizer rackside keeps on every host until its delete flow completes. */
export const HOST_FINALIZER = 'baremetalhost.metal3.io';
