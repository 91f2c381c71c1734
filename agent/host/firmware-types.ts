/**
 * @module The firmware resources of metal3.io/v1alpha1 beside a BareMetalHost, with upstream JSON
 * field names (docs/metal3-mapping.md, "Firmware objects"): HostFirmwareSettings (BIOS settings; named after the
 * host), HostFirmwareComponents (firmware updates; named after the host), HostUpdatePolicy
 * (opt-in to servicing; named after the host) and FirmwareSchema (the BIOS attribute schema an
 * HFS status refers to, named `schema-<hash>` and shared by hosts with the same registry).
 * Types and constants only.
 * @pure
 */
import type { DesiredSettingsMap, FirmwareComponentStatus, FirmwareUpdate, ObjectMeta, SettingSchema, SettingsMap } from './types.js';
import type { BMCEventSubscriptionObject } from './bmc-event-subscription-types.js';

/** The API version of every firmware resource (the BareMetalHost's group and version). */
export const FIRMWARE_API_VERSION = 'metal3.io/v1alpha1';

/** A `metav1.Condition`, as HFS/HFC status keep them (`ChangeDetected`, `Valid`). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** The object's `metadata.generation` the condition was computed for. */
  observedGeneration: number;
  /** RFC 3339; changes only when `status` changes. */
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** Condition types of HostFirmwareSettings and HostFirmwareComponents. */
export const FirmwareCondition = {
  /** The spec differs from what status says is on the host. */
  changeDetected: 'ChangeDetected',
  /** The spec can be applied (every setting valid against the schema; known components). */
  valid: 'Valid',
} as const;

/** When a HostUpdatePolicy lets changes be applied. Servicing acts on `onReboot` only. */
export type UpdatePolicy = 'onPreparing' | 'onReboot';
/** Every {@link UpdatePolicy} value (CRD enum). */
export const UPDATE_POLICIES = ['onPreparing', 'onReboot'] as const satisfies readonly UpdatePolicy[];

/** `status.schema` of a HostFirmwareSettings: the FirmwareSchema it was validated against. */
export interface SchemaReference {
  namespace: string;
  name: string;
}

/** `status` of a HostFirmwareSettings (written by the agent only). */
export interface HostFirmwareSettingsStatus {
  schema?: SchemaReference;
  /** Actual BIOS settings as last read from the host (names containing "Password" left out). */
  settings: SettingsMap;
  lastUpdated?: string;
  conditions?: Condition[];
}

/** HostFirmwareSettings: the BIOS settings wanted on the host of the same name. */
export interface HostFirmwareSettings {
  apiVersion: typeof FIRMWARE_API_VERSION;
  kind: 'HostFirmwareSettings';
  metadata: ObjectMeta;
  spec: { settings: DesiredSettingsMap };
  status: HostFirmwareSettingsStatus;
}

/** `status` of a HostFirmwareComponents (written by the agent only). */
export interface HostFirmwareComponentsStatus {
  /** The updates last handed to the provisioner (compared with `spec.updates`). */
  updates?: FirmwareUpdate[];
  /** Firmware components and versions as last read from the host. */
  components?: FirmwareComponentStatus[];
  lastUpdated?: string;
  conditions?: Condition[];
}

/** HostFirmwareComponents: firmware updates wanted on the host of the same name. */
export interface HostFirmwareComponents {
  apiVersion: typeof FIRMWARE_API_VERSION;
  kind: 'HostFirmwareComponents';
  metadata: ObjectMeta;
  spec: { updates: FirmwareUpdate[] };
  status: HostFirmwareComponentsStatus;
}

/** HostUpdatePolicy: which changes may be applied to the provisioned host of the same name, and when. */
export interface HostUpdatePolicy {
  apiVersion: typeof FIRMWARE_API_VERSION;
  kind: 'HostUpdatePolicy';
  metadata: ObjectMeta;
  spec: { firmwareSettings?: UpdatePolicy; firmwareUpdates?: UpdatePolicy };
}

/** FirmwareSchema: the BIOS attribute schema of one kind of hardware (agent-owned). */
export interface FirmwareSchema {
  apiVersion: typeof FIRMWARE_API_VERSION;
  kind: 'FirmwareSchema';
  metadata: ObjectMeta;
  spec: { hardwareVendor?: string; hardwareModel?: string; schema: Record<string, SettingSchema> };
}

/**
 * Any resource the store's `firmware` sublevel keeps: the firmware kinds, and the
 * BMCEventSubscription (bmc-event-subscription-types.ts), another metal3 object beside a host
 * keyed by kind, namespace and name.
 */
export type FirmwareObject = HostFirmwareSettings | HostFirmwareComponents | HostUpdatePolicy | FirmwareSchema | BMCEventSubscriptionObject;
/** The kind of a {@link FirmwareObject}. */
export type FirmwareKind = FirmwareObject['kind'];
/** The resource of kind `K`. */
export type FirmwareObjectOf<K extends FirmwareKind> = Extract<FirmwareObject, { kind: K }>;

/** Every firmware kind the store keeps. */
export const FIRMWARE_KINDS = ['HostFirmwareSettings', 'HostFirmwareComponents', 'HostUpdatePolicy', 'FirmwareSchema', 'BMCEventSubscription'] as const satisfies readonly FirmwareKind[];
/** The kinds users apply (FirmwareSchema is written by the agent only). */
export const USER_FIRMWARE_KINDS = ['HostFirmwareSettings', 'HostFirmwareComponents', 'HostUpdatePolicy'] as const satisfies readonly FirmwareKind[];
/** A kind users apply. */
export type UserFirmwareKind = (typeof USER_FIRMWARE_KINDS)[number];

/** True when `kind` names a firmware kind. */
export function isFirmwareKind(kind: unknown): kind is FirmwareKind {
  return typeof kind === 'string' && (FIRMWARE_KINDS as readonly string[]).includes(kind);
}

/** The firmware resources of one host, as `GET /api/v1/hosts/{name}/firmware` answers (null = none). */
export interface HostFirmware {
  hostFirmwareSettings: HostFirmwareSettings | null;
  hostFirmwareComponents: HostFirmwareComponents | null;
  hostUpdatePolicy: HostUpdatePolicy | null;
  /** The FirmwareSchema the settings' status refers to. */
  firmwareSchema: FirmwareSchema | null;
}
