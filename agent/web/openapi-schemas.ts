/**
 * @module JSON Schemas (OpenAPI 3.1 dialect = JSON Schema 2020-12) of the management API's
 * bodies: errors, the BareMetalHost resource to the depth a client needs (upstream field
 * names, docs/metal3-mapping.md, "Types"), the firmware kinds ("Firmware objects"), Secret manifests and summaries,
 * apply outcomes, events, host actions, agent info, erase records. Used by openapi.ts.
 * @pure
 */
import { PROVISIONING_STATES } from '../host/types.js';

/** A JSON Schema object. */
export type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
const int: Schema = { type: 'integer' };
const time: Schema = { type: 'string', format: 'date-time' };
const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: 'object', properties, ...(required.length > 0 ? { required } : {}), ...extra,
});
const list = (items: Schema): Schema => ({ type: 'array', items });
const nullableStr: Schema = { type: ['string', 'null'] };
const oneOf = (...values: string[]): Schema => ({ type: 'string', enum: values });

const image = obj({
  url: str,
  checksum: str,
  checksumType: oneOf('md5', 'sha256', 'sha512', 'auto', ''),
  format: oneOf('raw', 'qcow2', 'vdi', 'vmdk', 'live-iso'),
  ociAuthSecretName: str,
}, ['url']);

const rootDeviceHints = obj({
  deviceName: { type: 'string', pattern: '^/dev/' }, hctl: str, model: str, vendor: str, serialNumber: str,
  minSizeGigabytes: { type: 'integer', minimum: 0 }, wwn: str, wwnWithExtension: str, wwnVendorExtension: str, rotational: bool,
});

const operationMetric = obj({ start: str, end: str });

const hardware = obj({
  systemVendor: obj({ manufacturer: str, productName: str, serialNumber: str }),
  firmware: obj({ bios: obj({ date: str, vendor: str, version: str }) }),
  ramMebibytes: int,
  cpu: obj({ arch: str, model: str, clockMegahertz: { type: 'number' }, flags: list(str), count: int }),
  nics: list(obj({ name: str, model: str, mac: str, ip: str, speedGbps: int, vlanId: int, pxe: bool })),
  storage: list(obj({
    name: str, alternateNames: list(str), rotational: bool, type: oneOf('HDD', 'SSD', 'NVME'), sizeBytes: int,
    vendor: str, model: str, serialNumber: str, wwn: str, hctl: str,
  })),
  hostname: str,
});

const objectMeta = obj({
  name: { type: 'string', description: 'DNS-1123 subdomain name', maxLength: 253 },
  namespace: str, uid: str,
  resourceVersion: { type: 'string', description: 'Optimistic concurrency: a write naming a stale version gets 409.' },
  generation: int, creationTimestamp: time, deletionTimestamp: time,
  annotations: stringMap, labels: stringMap, finalizers: list(str),
}, ['name']);

const hostSpec = obj({
  online: bool,
  bmc: obj({ address: { type: 'string', examples: ['redfish://10.0.0.5/redfish/v1/Systems/1', 'ipmi://10.0.0.6'] }, credentialsName: str, disableCertificateVerification: bool }, ['address', 'credentialsName']),
  bootMACAddress: { type: 'string', pattern: '^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$' },
  image,
  customDeploy: obj({ method: str }, ['method']),
  userData: obj({ name: str, namespace: str }, ['name']),
  networkData: obj({ name: str, namespace: str }, ['name']),
  metaData: obj({ name: str, namespace: str }, ['name']),
  preprovisioningNetworkDataName: str,
  externallyProvisioned: bool,
  architecture: str,
  disablePowerOff: bool,
  rootDeviceHints,
  raid: { type: ['object', 'null'], properties: { hardwareRAIDVolumes: { type: ['array', 'null'] }, softwareRAIDVolumes: { type: ['array', 'null'] } } },
  bootMode: oneOf('UEFI', 'UEFISecureBoot', 'legacy'),
  automatedCleaningMode: oneOf('metadata', 'disabled'),
  consumerRef: stringMap,
  description: str,
  inspectionMode: oneOf('disabled', 'agent', 'fast'),
}, [], { additionalProperties: false });

const hostStatus = obj({
  operationalStatus: oneOf('', 'OK', 'discovered', 'error', 'delayed', 'detached', 'servicing'),
  errorType: oneOf('', 'provisioned registration error', 'registration error', 'inspection error', 'preparation error',
    'provisioning error', 'power management error', 'detach error', 'servicing error'),
  errorMessage: str,
  errorCount: int,
  provisioningFailCount: int,
  lastUpdated: time,
  hardwareProfile: str,
  hardware,
  poweredOn: bool,
  goodCredentials: obj({ credentials: obj({ name: str, namespace: str }), credentialsVersion: str }),
  triedCredentials: obj({ credentials: obj({ name: str, namespace: str }), credentialsVersion: str }),
  operationHistory: obj({ register: operationMetric, inspect: operationMetric, provision: operationMetric, deprovision: operationMetric }),
  provisioning: obj({
    state: { type: 'string', enum: [...PROVISIONING_STATES] },
    ID: str, image, rootDeviceHints, bootMode: oneOf('UEFI', 'UEFISecureBoot', 'legacy'), customDeploy: obj({ method: str }),
  }),
});

const condition = obj({
  type: str, status: oneOf('True', 'False', 'Unknown'), observedGeneration: int, lastTransitionTime: time, reason: str, message: str,
}, ['type', 'status', 'observedGeneration', 'reason', 'message']);
const firmwareUpdate = obj({ component: { type: 'string', description: '`bmc`, `bios` or `nic:<id>`' }, url: { type: 'string', format: 'uri' } }, ['component', 'url'], { additionalProperties: false });
const updatePolicy = oneOf('onPreparing', 'onReboot');
const settingSchema = obj({
  attribute_type: oneOf('Enumeration', 'String', 'Integer', 'Boolean', 'Password', ''), allowable_values: list(str),
  lower_bound: int, upper_bound: int, min_length: int, max_length: int, read_only: bool, unique: bool,
});
const firmwareObject = (kind: string, spec: Schema, status?: Schema): Schema => obj({
  apiVersion: { const: 'metal3.io/v1alpha1' }, kind: { const: kind }, metadata: ref('ObjectMeta'), spec,
  ...(status === undefined ? {} : { status }),
}, ['apiVersion', 'kind', 'metadata', 'spec']);
const nullable = (name: string): Schema => ({ oneOf: [ref(name), { type: 'null' }] });

/** An erase record (agent/erase/record.ts; docs/erase-records.md). */
const eraseRecord = obj({
  apiVersion: { const: 'rackside.io/v1' }, kind: { const: 'EraseRecord' }, id: { type: 'string', pattern: '^er-[0-9a-f]{16}$' }, agentId: str,
  host: obj({
    name: str, namespace: str, uid: str, bootMACAddress: nullableStr, provisioningState: nullableStr,
    system: { type: ['object', 'null'], properties: { manufacturer: nullableStr, productName: nullableStr, serialNumber: nullableStr } },
  }, ['name', 'namespace', 'uid']),
  mode: oneOf('metadata', 'erase'), softwareRaidKept: bool, commandId: str, startedAt: time, finishedAt: time,
  status: oneOf('ok', 'error'), message: nullableStr,
  disks: list(obj({
    device: str, serial: nullableStr, wwn: nullableStr, model: nullableStr, sizeBytes: int, method: oneOf('metadata', 'zeroout', 'dd-zero', 'nvme-user-erase', 'nvme-crypto-erase', 'kept'),
    bytesWiped: int, durationSeconds: int, status: oneOf('ok', 'error'), message: nullableStr,
    verification: { type: ['object', 'null'], properties: { samples: int, bytesRead: int, nonZeroSamples: int } },
  })),
}, ['apiVersion', 'kind', 'id', 'agentId', 'host', 'mode', 'startedAt', 'finishedAt', 'status', 'disks']);

/** Every schema under `components.schemas`. */
export const schemas: Record<string, Schema> = {
  Error: obj({
    error: obj({
      code: { type: 'string', examples: ['RACKSIDE_ERR_API_INVALID', 'RACKSIDE_ERR_API_CONFLICT', 'RACKSIDE_ERR_API_NOT_FOUND', 'RACKSIDE_ERR_API_UNAUTHORIZED', 'RACKSIDE_ERR_API_TOO_LARGE', 'RACKSIDE_ERR_API_INTERNAL'] },
      message: str,
      field: { type: 'string', description: "Dotted path of the offending field (`spec.bmc.address`, `items[1].metadata.name`, `query.limit`, `body`), or ''." },
    }, ['code', 'message', 'field']),
  }, ['error']),
  ObjectMeta: objectMeta,
  BareMetalHostSpec: hostSpec,
  BareMetalHostStatus: hostStatus,
  HardwareDetails: hardware,
  BareMetalHost: obj({
    apiVersion: { const: 'metal3.io/v1alpha1' }, kind: { const: 'BareMetalHost' },
    metadata: ref('ObjectMeta'), spec: ref('BareMetalHostSpec'), status: ref('BareMetalHostStatus'),
  }, ['apiVersion', 'kind', 'metadata', 'spec']),
  BareMetalHostList: obj({ apiVersion: str, kind: { const: 'BareMetalHostList' }, items: list(ref('BareMetalHost')) }, ['items']),
  SecretManifest: obj({
    apiVersion: { const: 'v1' }, kind: { const: 'Secret' }, metadata: ref('ObjectMeta'), type: str,
    data: { ...stringMap, description: 'base64 values (username, password for BMC credentials)' },
  }, ['apiVersion', 'kind', 'metadata']),
  SecretSummary: obj({ namespace: str, name: str, type: str, keys: list(str), resourceVersion: str }, ['namespace', 'name', 'keys', 'resourceVersion']),
  SecretList: obj({ apiVersion: str, kind: { const: 'SecretList' }, items: list(ref('SecretSummary')) }, ['items']),
  BMCEventSubscription: obj({
    apiVersion: { const: 'metal3.io/v1alpha1' }, kind: { const: 'BMCEventSubscription' }, metadata: ref('ObjectMeta'),
    spec: obj({
      hostName: str, destination: { type: 'string', format: 'uri' }, context: str,
      httpHeadersRef: obj({ name: str, namespace: str }, ['name']),
    }, ['hostName', 'destination']),
    status: obj({ subscriptionID: str, error: str }),
  }, ['apiVersion', 'kind', 'metadata', 'spec']),
  BmcProbeRequest: obj({
    address: { type: 'string', description: 'A metal3 BMC address or a bare host/IP (metal3 reads a bare host as IPMI)' },
    credentials: obj({ username: str, password: str }, ['username', 'password']),
    credentialsName: { type: 'string', description: 'A stored Secret with username and password keys (instead of credentials)' },
    namespace: { type: 'string', description: "The Secret's namespace (default `default`)" },
    insecure: { type: 'boolean', description: 'Accept a BMC certificate that does not verify' },
  }, ['address']),
  BmcProbeReport: obj({
    address: str, givenType: str, host: str, vendor: str, model: str, firmware: str,
    redfish: { type: 'object' }, ipmi: { type: 'object' },
    features: list(obj({ name: str, supported: { type: ['boolean', 'null'] }, detail: str })),
    attempts: list(obj({ protocol: oneOf('redfish', 'ipmi'), request: str, ok: bool, answer: str, elapsedMs: int })),
    recommendedAddress: str, notes: list(str), answered: bool, elapsedMs: int,
  }, ['address', 'givenType', 'host', 'features', 'attempts', 'notes', 'answered', 'elapsedMs']),
  BMCEventSubscriptionList: obj({ apiVersion: str, kind: { const: 'BMCEventSubscriptionList' }, items: list(ref('BMCEventSubscription')) }, ['items']),
  ApplyOutcome: obj({
    kind: oneOf('BareMetalHost', 'Secret', 'HostFirmwareSettings', 'HostFirmwareComponents', 'HostUpdatePolicy', 'BMCEventSubscription'), namespace: str, name: str,
    action: oneOf('created', 'configured', 'unchanged'), resourceVersion: str,
  }, ['kind', 'namespace', 'name', 'action', 'resourceVersion']),
  ApplyResult: obj({ items: list(ref('ApplyOutcome')) }, ['items']),
  ManifestList: {
    description: 'One manifest, an array of manifests, or {items: [...]}',
    oneOf: [
      ref('BareMetalHost'), ref('SecretManifest'), ref('HostFirmwareSettings'), ref('HostFirmwareComponents'), ref('HostUpdatePolicy'),
      ref('BMCEventSubscription'), list({ type: 'object' }), obj({ items: list({ type: 'object' }) }, ['items']),
    ],
  },
  Condition: condition,
  HostFirmwareSettings: firmwareObject('HostFirmwareSettings',
    obj({ settings: { type: 'object', additionalProperties: { type: ['string', 'integer'] }, description: 'BIOS attribute → wanted value (IntOrString)' } }, [], { additionalProperties: false }),
    obj({
      schema: obj({ namespace: str, name: str }), settings: { ...stringMap, description: 'BIOS settings as last read from the host' },
      lastUpdated: time, conditions: { ...list(ref('Condition')), description: 'ChangeDetected (spec differs from the host), Valid (the spec can be applied)' },
    })),
  HostFirmwareComponents: firmwareObject('HostFirmwareComponents',
    obj({ updates: list(firmwareUpdate) }, [], { additionalProperties: false }),
    obj({
      updates: { ...list(firmwareUpdate), description: 'The updates last handed to the provisioner' },
      components: list(obj({ component: str, initialVersion: str, currentVersion: str, lastVersionFlashed: str, updatedAt: time })),
      lastUpdated: time, conditions: list(ref('Condition')),
    })),
  HostUpdatePolicy: firmwareObject('HostUpdatePolicy',
    obj({ firmwareSettings: updatePolicy, firmwareUpdates: updatePolicy }, [], {
      additionalProperties: false, description: '`onReboot` lets provisioned hosts take settings/updates while they reboot (servicing)',
    })),
  FirmwareSchema: firmwareObject('FirmwareSchema', obj({ hardwareVendor: str, hardwareModel: str, schema: { type: 'object', additionalProperties: settingSchema } })),
  HostFirmware: obj({
    hostFirmwareSettings: nullable('HostFirmwareSettings'), hostFirmwareComponents: nullable('HostFirmwareComponents'),
    hostUpdatePolicy: nullable('HostUpdatePolicy'), firmwareSchema: nullable('FirmwareSchema'),
  }, ['hostFirmwareSettings', 'hostFirmwareComponents', 'hostUpdatePolicy', 'firmwareSchema']),
  StoredEvent: obj({
    seq: int, time, type: oneOf('Normal', 'Warning'), reason: str, message: str, host: str, mac: str, source: str,
    data: { type: 'object' },
  }, ['seq', 'time', 'type', 'reason', 'message', 'source']),
  EventList: obj({ items: list(ref('StoredEvent')) }, ['items']),
  RebootAction: obj({ mode: { ...oneOf('hard', 'soft'), default: 'soft' } }, [], { additionalProperties: false }),
  DetachAction: obj({ deleteAction: oneOf('delay', 'delete'), force: bool }, [], { additionalProperties: false }),
  AgentInfo: obj({ version: str, agentId: str, provisioner: str, startedAt: time, apiVersion: { const: 'v1' } }, ['version', 'agentId', 'provisioner', 'startedAt']),
  Health: obj({ status: { const: 'ok' } }, ['status']),
  EraseRecord: eraseRecord,
  EraseRecordList: obj({ items: list(ref('EraseRecord')) }, ['items']),
  EraseSigningKey: obj({
    publicKey: str, fingerprint: str, namespace: { const: 'rackside-erase-record' }, principal: str,
    allowedSigners: { type: 'string', description: 'An allowed_signers line for ssh-keygen -Y verify' },
  }, ['publicKey', 'fingerprint', 'namespace', 'principal', 'allowedSigners']),
};
