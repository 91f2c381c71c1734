/**
 * @module The controller sync wire format, version 1 (docs/sync-wire-format.md, JSON Schema in
 * docs/sync-summary.schema.json): the push request the agent POSTs, the controller's
 * acknowledgement, the idempotency key, and strict decoders for both with path-named errors.
 * Shared by the agent (agent/sync/) and the controller (controller/); it imports neither.
 * Summaries carry no secret by construction (the agent's agent/sync/summarize.ts).
 * @pure
 */
import { readCommandList, readCommandResult, COMMAND_LIMITS, type CommandResult, type FleetCommand, type RejectedCommand } from './commands.js';
import { WireReader, type JsonObject } from './read.js';

/** The wire format version this build's agent sends in every push request's `version` field. */
export const WIRE_VERSION = 1;
/** Versions a controller accepts: 1 (summaries) and 2 (summaries plus the command exchange). */
export const WIRE_VERSIONS = [1, 2] as const;
/** One of {@link WIRE_VERSIONS}. */
export type WireVersion = (typeof WIRE_VERSIONS)[number];
/** Request header carrying {@link idempotencyKey} (draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Limits a decoder enforces (and the agent keeps to): string lengths and list sizes. */
export const WIRE_LIMITS = {
  name: 253,
  text: 2048,
  url: 2048,
  maxHosts: 10000,
  maxEvents: 10000,
  maxBootServices: 64,
} as const;

/** The four operations of `status.operationHistory`. */
export const OPERATION_NAMES = ['register', 'inspect', 'provision', 'deprovision'] as const;
/** One of {@link OPERATION_NAMES}. */
export type OperationName = (typeof OPERATION_NAMES)[number];

/** Hardware in numbers: what a fleet view needs, no serials of parts, no addresses. */
export interface HardwareSummary {
  cpuArch: string | null;
  cpuCount: number | null;
  ramMebibytes: number | null;
  diskCount: number;
  diskTotalBytes: number;
  nicCount: number;
  manufacturer: string | null;
  productName: string | null;
}

/** The most recently started operation; `end`/`durationSeconds` are null while it runs. */
export interface OperationSummary {
  name: OperationName;
  start: string;
  end: string | null;
  durationSeconds: number | null;
}

/** One host as the controller sees it. Never carries credentials, userData, networkData or BMC addresses. */
export interface HostSummary {
  name: string;
  namespace: string;
  uid: string;
  /** The store revision of the host this summary was made from: higher is newer. */
  resourceVersion: string;
  /** `status.provisioning.state` (`''` = not yet registered). */
  state: string;
  operationalStatus: string;
  poweredOn: boolean;
  /** `spec.online`: the desired power state. */
  online: boolean;
  errorType: string;
  errorMessage: string;
  errorCount: number;
  hardware: HardwareSummary | null;
  lastOperation: OperationSummary | null;
  /** Provisioned (else requested) image URL with user-info, query and fragment removed. */
  imageUrl: string | null;
  /** True once deletion was requested (the host still exists until its delete flow ends). */
  deleting: boolean;
  lastUpdated: string | null;
  /** `spec.bootMACAddress` (version 2; absent from version-1 pushes). */
  bootMACAddress?: string | null;
  /** The system serial number from inspection (version 2; absent from version-1 pushes). */
  serialNumber?: string | null;
}

/** A host that no longer exists in the agent's store. */
export interface HostRef {
  namespace: string;
  name: string;
}

/** An event's type, as the agent's event log records it. */
export type EventType = 'Normal' | 'Warning';

/** One event as pushed: the store's fields minus free-form `data`. */
export interface EventSummary {
  /** The agent store's event sequence number: strictly increasing, gaps mean events not pushed. */
  seq: number;
  time: string;
  type: EventType;
  reason: string;
  message: string;
  host: string | null;
  mac: string | null;
  source: string;
}

/** Health and counters of one boot service (`dhcp`, `tftp`, `http`); optional for now. */
export interface BootServiceHealth {
  healthy: boolean;
  message?: string;
  counters?: Record<string, number>;
}

/** The body of `POST controller.url`. */
export interface PushRequest {
  version: WireVersion;
  agentId: string;
  rack?: string;
  /** Random id of this agent's outbox, made when the state directory was created (new id = sequence restarted). */
  streamId: string;
  /** Strictly increasing per stream; a retry resends the same sequence and the same body. */
  sequence: number;
  /** When this batch was built (first attempt); unchanged on retries. */
  sentAt: string;
  hosts: HostSummary[];
  deletedHosts: HostRef[];
  events: EventSummary[];
  bootServices?: Record<string, BootServiceHealth>;
  /** Version 2: outcomes of commands the agent ran (or refused), each reported until acknowledged. */
  commandResults?: CommandResult[];
  /** Version 2: the rack's own status page address, for the fleet page's link. */
  statusUrl?: string;
  /** Version 2: the agent's software version. */
  agentVersion?: string;
  /** Version 2: records waiting in the agent's outbox after this batch. */
  backlog?: { hosts: number; events: number };
}

/** The controller's answer to a push. Unknown extra fields are ignored. */
export interface PushAck {
  /** Must equal the pushed `sequence`. */
  acknowledged: number;
  /** Version 2: commands pending for the rack (empty for version 1). */
  commands: FleetCommand[];
  /** Version 2: commands in the answer that could not be read, with why. */
  rejected: RejectedCommand[];
}

/** The `Idempotency-Key` value of a push: agent id and sequence, so a retried delivery is never counted twice. */
export function idempotencyKey(agentId: string, sequence: number): string {
  return `${agentId}:${sequence}`;
}

/** Serializes a push request to JSON text (UTF-8 when sent); field order is stable, so a retry is byte-identical. */
export function encodePushRequest(request: PushRequest): string {
  return JSON.stringify(request);
}

/**
 * Decodes and validates a push request (parsed JSON or text), as a controller would.
 * @throws SyncWireError naming the first bad field.
 */
export function decodePushRequest(input: unknown): PushRequest {
  const r = new WireReader('push request');
  const o = r.object('', typeof input === 'string' ? parseJson(r, input) : input);
  if (o.version !== 1 && o.version !== 2) r.fail('version', WIRE_VERSIONS.join(' or '), o.version);
  const version: WireVersion = o.version === 2 ? 2 : 1;
  const hosts = r.array('hosts', o.hosts, WIRE_LIMITS.maxHosts).map((h, i) => readHostSummary(r, `hosts[${i}]`, h));
  const deletedHosts = r.array('deletedHosts', o.deletedHosts, WIRE_LIMITS.maxHosts).map((h, i) => readHostRef(r, `deletedHosts[${i}]`, h));
  const events = r.array('events', o.events, WIRE_LIMITS.maxEvents).map((e, i) => readEventSummary(r, `events[${i}]`, e));
  const request: PushRequest = {
    version,
    agentId: r.nonEmptyString('agentId', o.agentId, WIRE_LIMITS.name),
    ...(o.rack === undefined ? {} : { rack: r.nonEmptyString('rack', o.rack, WIRE_LIMITS.name) }),
    streamId: r.nonEmptyString('streamId', o.streamId, WIRE_LIMITS.name),
    sequence: r.count('sequence', o.sequence),
    sentAt: r.time('sentAt', o.sentAt),
    hosts,
    deletedHosts,
    events,
  };
  if (request.sequence < 1) r.fail('sequence', 'an integer ≥ 1', o.sequence);
  if (o.bootServices !== undefined) request.bootServices = readBootServices(r, 'bootServices', o.bootServices);
  if (version === 2) readVersion2(r, o, request);
  return request;
}

/** The version-2 fields of a push request (all optional). */
function readVersion2(r: WireReader, o: JsonObject, request: PushRequest): void {
  if (o.commandResults !== undefined) {
    request.commandResults = r.array('commandResults', o.commandResults, COMMAND_LIMITS.maxResults).map((c, i) => readCommandResult(r, `commandResults[${i}]`, c));
  }
  if (o.statusUrl !== undefined) {
    const url = r.string('statusUrl', o.statusUrl, WIRE_LIMITS.url);
    if (!/^https?:\/\/[^\s]+$/.test(url)) r.fail('statusUrl', 'an http:// or https:// URL', o.statusUrl);
    request.statusUrl = url;
  }
  if (o.agentVersion !== undefined) request.agentVersion = r.string('agentVersion', o.agentVersion, 64);
  if (o.backlog !== undefined) {
    const b = r.object('backlog', o.backlog);
    request.backlog = { hosts: r.count('backlog.hosts', b.hosts), events: r.count('backlog.events', b.events) };
  }
}

/**
 * Decodes the controller's response body to a push of `sequence`. The body must be a JSON
 * object whose `acknowledged` equals `sequence`; anything else is refused (and the push retried).
 * @throws SyncWireError with the reason (not JSON, missing field, wrong sequence).
 */
export function decodePushResponse(text: string, sequence: number): PushAck {
  const r = new WireReader('controller response');
  const o = r.object('', parseJson(r, text));
  const acknowledged = r.count('acknowledged', o.acknowledged);
  if (acknowledged !== sequence) r.fail('acknowledged', `the pushed sequence ${sequence}`, acknowledged);
  return { acknowledged, ...readCommandList(r, 'commands', o.commands) };
}

function parseJson(r: WireReader, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    return r.fail('', 'JSON', `${text.length} bytes that do not parse (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Validates one host summary read from the wire or the outbox. */
export function readHostSummary(r: WireReader, path: string, value: unknown): HostSummary {
  const o = r.object(path, value);
  const p = (k: string) => `${path}.${k}`;
  return {
    name: r.nonEmptyString(p('name'), o.name, WIRE_LIMITS.name),
    namespace: r.string(p('namespace'), o.namespace, WIRE_LIMITS.name),
    uid: r.string(p('uid'), o.uid, WIRE_LIMITS.name),
    resourceVersion: r.string(p('resourceVersion'), o.resourceVersion, 32),
    state: r.string(p('state'), o.state, 64),
    operationalStatus: r.string(p('operationalStatus'), o.operationalStatus, 64),
    poweredOn: r.boolean(p('poweredOn'), o.poweredOn),
    online: r.boolean(p('online'), o.online),
    errorType: r.string(p('errorType'), o.errorType, 64),
    errorMessage: r.string(p('errorMessage'), o.errorMessage, WIRE_LIMITS.text),
    errorCount: r.count(p('errorCount'), o.errorCount),
    hardware: o.hardware === null ? null : readHardware(r, p('hardware'), o.hardware),
    lastOperation: o.lastOperation === null ? null : readOperation(r, p('lastOperation'), o.lastOperation),
    imageUrl: r.nullableString(p('imageUrl'), o.imageUrl, WIRE_LIMITS.url),
    deleting: r.boolean(p('deleting'), o.deleting),
    lastUpdated: r.nullableTime(p('lastUpdated'), o.lastUpdated),
    ...(o.bootMACAddress === undefined ? {} : { bootMACAddress: r.nullableString(p('bootMACAddress'), o.bootMACAddress, 64) }),
    ...(o.serialNumber === undefined ? {} : { serialNumber: r.nullableString(p('serialNumber'), o.serialNumber, WIRE_LIMITS.name) }),
  };
}

function readHardware(r: WireReader, path: string, value: unknown): HardwareSummary {
  const o = r.object(path, value);
  const p = (k: string) => `${path}.${k}`;
  return {
    cpuArch: r.nullableString(p('cpuArch'), o.cpuArch, 64),
    cpuCount: r.nullableCount(p('cpuCount'), o.cpuCount),
    ramMebibytes: r.nullableCount(p('ramMebibytes'), o.ramMebibytes),
    diskCount: r.count(p('diskCount'), o.diskCount),
    diskTotalBytes: r.count(p('diskTotalBytes'), o.diskTotalBytes),
    nicCount: r.count(p('nicCount'), o.nicCount),
    manufacturer: r.nullableString(p('manufacturer'), o.manufacturer, WIRE_LIMITS.name),
    productName: r.nullableString(p('productName'), o.productName, WIRE_LIMITS.name),
  };
}

function readOperation(r: WireReader, path: string, value: unknown): OperationSummary {
  const o = r.object(path, value);
  return {
    name: r.oneOf(`${path}.name`, o.name, OPERATION_NAMES),
    start: r.time(`${path}.start`, o.start),
    end: r.nullableTime(`${path}.end`, o.end),
    durationSeconds: r.nullableAmount(`${path}.durationSeconds`, o.durationSeconds),
  };
}

/** Validates one deleted-host reference. */
export function readHostRef(r: WireReader, path: string, value: unknown): HostRef {
  const o = r.object(path, value);
  return {
    namespace: r.string(`${path}.namespace`, o.namespace, WIRE_LIMITS.name),
    name: r.nonEmptyString(`${path}.name`, o.name, WIRE_LIMITS.name),
  };
}

/** Validates one event summary read from the wire or the outbox. */
export function readEventSummary(r: WireReader, path: string, value: unknown): EventSummary {
  const o = r.object(path, value);
  const p = (k: string) => `${path}.${k}`;
  return {
    seq: r.count(p('seq'), o.seq),
    time: r.time(p('time'), o.time),
    type: r.oneOf(p('type'), o.type, ['Normal', 'Warning']),
    reason: r.string(p('reason'), o.reason, WIRE_LIMITS.name),
    message: r.string(p('message'), o.message, WIRE_LIMITS.text),
    host: r.nullableString(p('host'), o.host, WIRE_LIMITS.name),
    mac: r.nullableString(p('mac'), o.mac, 64),
    source: r.string(p('source'), o.source, WIRE_LIMITS.name),
  };
}

function readBootServices(r: WireReader, path: string, value: unknown): Record<string, BootServiceHealth> {
  const o: JsonObject = r.object(path, value);
  const names = Object.keys(o);
  if (names.length > WIRE_LIMITS.maxBootServices) r.fail(path, `at most ${WIRE_LIMITS.maxBootServices} services`, value);
  const out: Record<string, BootServiceHealth> = {};
  for (const name of names) {
    const s = r.object(`${path}.${name}`, o[name]);
    const health: BootServiceHealth = { healthy: r.boolean(`${path}.${name}.healthy`, s.healthy) };
    if (s.message !== undefined) health.message = r.string(`${path}.${name}.message`, s.message, WIRE_LIMITS.text);
    if (s.counters !== undefined) {
      const c = r.object(`${path}.${name}.counters`, s.counters);
      health.counters = {};
      for (const [k, v] of Object.entries(c)) health.counters[k] = r.count(`${path}.${name}.counters.${k}`, v);
    }
    out[name] = health;
  }
  return out;
}
