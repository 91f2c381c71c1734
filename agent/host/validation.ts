/**
 * @module Admission of user manifests: decoders from untrusted JSON to BareMetalHost and
 * Secret with the upstream CRD schema and webhook rules (docs/metal3-mapping.md: "Types", "Detach"), and
 * the webhook's update (immutability) rules. Everything throws an ApiError naming the field
 * path to fix: {@link ValidationError} (400) for bad input, {@link ConflictError} (409) for a
 * change the stored host forbids. Field decoding lives in validation-spec.ts and
 * validation-meta.ts, cross-field rules in validation-rules.ts, BIOS settings in
 * validation-firmware.ts, the HostFirmwareSettings/Components and HostUpdatePolicy kinds in
 * validation-firmware-objects.ts.
 * @pure
 */
import { ConflictError } from '../errors.js';
import type { BareMetalHost, BareMetalHostStatus, Secret } from './types.js';
import { asObject, fail, fieldPath, present, readString, rejectUnknown } from './decode.js';
import { checkTypeMeta, decodeObjectMeta, decodeSecret, rootPath } from './validation-meta.js';
import { decodeSpecStructure } from './validation-spec.js';
import { checkHostRules } from './validation-rules.js';
import type { HostFirmwareComponents, HostFirmwareSettings, HostUpdatePolicy } from './firmware-types.js';
import { decodeHostFirmwareComponents, decodeHostFirmwareSettings, decodeHostUpdatePolicy } from './validation-firmware-objects.js';
import type { BMCEventSubscriptionObject } from './bmc-event-subscription-types.js';
import { decodeBMCEventSubscription } from './validation-bmc-event-subscription.js';

export { decodeSecret } from './validation-meta.js';
export { validateFirmwareSettings, validateFirmwareSetting } from './validation-firmware.js';

/** The API version and kind of a BareMetalHost. */
export const HOST_API_VERSION = 'metal3.io/v1alpha1';
/** Kinds {@link decodeManifest} accepts. */
export const SUPPORTED_KINDS = ['BareMetalHost', 'Secret', 'HostFirmwareSettings', 'HostFirmwareComponents', 'HostUpdatePolicy', 'BMCEventSubscription'] as const;

/** A decoded manifest of one of the {@link SUPPORTED_KINDS}. */
export type DecodedManifest =
  | { kind: 'BareMetalHost'; host: BareMetalHost }
  | { kind: 'Secret'; secret: Secret }
  | { kind: 'HostFirmwareSettings' | 'HostFirmwareComponents' | 'HostUpdatePolicy'; firmware: HostFirmwareSettings | HostFirmwareComponents | HostUpdatePolicy }
  | { kind: 'BMCEventSubscription'; subscription: BMCEventSubscriptionObject };

/** A fresh, empty `status` for a newly created host (what the controller starts from). */
export function emptyHostStatus(): BareMetalHostStatus {
  const metric = (): { start: string; end: string } => ({ start: '', end: '' });
  return {
    operationalStatus: '',
    errorType: '',
    errorMessage: '',
    errorCount: 0,
    hardwareProfile: '',
    poweredOn: false,
    goodCredentials: {},
    triedCredentials: {},
    operationHistory: { register: metric(), inspect: metric(), provision: metric(), deprovision: metric() },
    provisioning: { state: '', ID: '', image: { url: '' } },
  };
}

/**
 * Decodes and validates a BareMetalHost manifest (apiVersion `metal3.io/v1alpha1`): metadata
 * name rules, every spec field's type and enum, unknown fields refused, and the upstream
 * webhook's rules (BMC address, boot MAC, root device hints, RAID, image checksum, secret
 * namespaces, annotations, inspection mode, power). `status` and server-owned metadata in
 * the input are accepted but ignored: the result has {@link emptyHostStatus} and empty uid,
 * resourceVersion, timestamps and generation 0, which the caller fills. `fieldPrefix`
 * (e.g. `items[2].`) is prepended to every error path.
 */
export function decodeHost(input: unknown, fieldPrefix?: string): BareMetalHost {
  const root = rootPath(fieldPrefix);
  const obj = asObject(input, root);
  rejectUnknown(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status'], root);
  checkTypeMeta(obj, root, HOST_API_VERSION, 'BareMetalHost');
  const metadataPath = fieldPath(root, 'metadata');
  const specPath = fieldPath(root, 'spec');
  const metadataRaw = present(obj, 'metadata');
  if (metadataRaw === undefined) fail(metadataPath, 'required field is missing');
  const metadata = decodeObjectMeta(metadataRaw, metadataPath, { forbidUuidName: true });
  const specRaw = present(obj, 'spec');
  if (specRaw === undefined) fail(specPath, 'required field is missing');
  const spec = decodeSpecStructure(specRaw, specPath);
  const statusRaw = present(obj, 'status');
  if (statusRaw !== undefined) asObject(statusRaw, fieldPath(root, 'status'));
  checkHostRules(spec, metadata, { metadata: metadataPath, spec: specPath });
  return { apiVersion: HOST_API_VERSION, kind: 'BareMetalHost', metadata, spec, status: emptyHostStatus() };
}

/**
 * Decodes a manifest of any supported kind, dispatching on `kind`; an unknown or missing
 * kind is a ValidationError at `kind` listing the supported kinds.
 */
export function decodeManifest(input: unknown, fieldPrefix?: string): DecodedManifest {
  const root = rootPath(fieldPrefix);
  const obj = asObject(input, root);
  const kind = readString(obj, 'kind', root);
  const supported = SUPPORTED_KINDS.join(', ');
  if (kind === undefined) fail(fieldPath(root, 'kind'), `required field is missing; supported kinds: ${supported}`);
  if (kind === 'BareMetalHost') return { kind, host: decodeHost(input, fieldPrefix) };
  if (kind === 'Secret') return { kind, secret: decodeSecret(input, fieldPrefix) };
  if (kind === 'HostFirmwareSettings') return { kind, firmware: decodeHostFirmwareSettings(input, fieldPrefix) };
  if (kind === 'HostFirmwareComponents') return { kind, firmware: decodeHostFirmwareComponents(input, fieldPrefix) };
  if (kind === 'HostUpdatePolicy') return { kind, firmware: decodeHostUpdatePolicy(input, fieldPrefix) };
  if (kind === 'BMCEventSubscription') return { kind, subscription: decodeBMCEventSubscription(input, fieldPrefix) };
  return fail(fieldPath(root, 'kind'), `unsupported kind "${kind}"; supported kinds: ${supported}`);
}

/**
 * The webhook's update rules between the stored host and a new version, throwing
 * {@link ConflictError}: name and namespace never change; `bootMACAddress` is immutable once
 * set (case-insensitive); `bmc.address` may change only while the stored host is registering
 * or detached; `externallyProvisioned` may be turned on only while the stored host is
 * `available` (or its alias `ready`). The stored host's status decides, since the new
 * version's status is not the user's to set.
 */
export function checkHostUpdate(oldHost: BareMetalHost, newHost: BareMetalHost): void {
  if (newHost.metadata.namespace !== oldHost.metadata.namespace) {
    throw new ConflictError('metadata.namespace', `is immutable: "${oldHost.metadata.namespace}" cannot become "${newHost.metadata.namespace}"`);
  }
  if (newHost.metadata.name !== oldHost.metadata.name) {
    throw new ConflictError('metadata.name', `is immutable: "${oldHost.metadata.name}" cannot become "${newHost.metadata.name}"`);
  }
  const oldMac = oldHost.spec.bootMACAddress ?? '';
  const newMac = newHost.spec.bootMACAddress ?? '';
  if (oldMac !== '' && oldMac.toLowerCase() !== newMac.toLowerCase()) {
    throw new ConflictError('spec.bootMACAddress', `can not be changed once it is set (is "${oldMac}")`);
  }
  const state = oldHost.status.provisioning.state;
  const oldAddress = oldHost.spec.bmc?.address ?? '';
  const newAddress = newHost.spec.bmc?.address ?? '';
  if (oldAddress !== '' && newAddress !== oldAddress && state !== 'registering' && oldHost.status.operationalStatus !== 'detached') {
    throw new ConflictError('spec.bmc.address', `can only be changed while the host is registering or detached (state "${state}"); detach the host first`);
  }
  if (oldHost.spec.externallyProvisioned !== true && newHost.spec.externallyProvisioned === true && state !== 'available' && state !== 'ready') {
    throw new ConflictError('spec.externallyProvisioned', `can only be enabled at creation or while the host is available, currently "${state}"`);
  }
}
