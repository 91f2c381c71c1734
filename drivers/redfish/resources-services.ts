/**
 * @module Decoders for Redfish service resources: Task v1 (TaskService; also the iDRAC
 * `DellJob`, whose `JobState` is folded into the same states), SoftwareInventory v1
 * (FirmwareInventory members), EventDestination v1, and the error body of DSP0266 §9.6
 * "Error responses". Same tolerance rules as resources.ts; only `BmcError(PROTOCOL)` is thrown.
 * @pure
 */
import type { TaskState } from '../capabilities.js';
import {
  expectObject, isJsonObject, lastSegment, readBoolean, readNumber, readObject, readString, redfishProtocolError,
  type DecodeContext, type JsonObject,
} from './json.js';

/** A Task (TaskService) or a Dell job (`DellJob`, iDRAC `Jobs/JID_…`), folded to one shape. */
export interface TaskResource {
  readonly id: string;
  readonly state: TaskState;
  /** The BMC's own state word (`Running`, `Scheduled`, `Exception` …). */
  readonly rawState: string;
  readonly percentComplete: number | undefined;
  readonly messages: readonly string[];
}

const TASK_STATES: Readonly<Record<string, TaskState>> = {
  // DMTF Task v1 TaskState
  New: 'pending', Pending: 'pending', Starting: 'running', Running: 'running', Suspended: 'running',
  Interrupted: 'running', Stopping: 'running', Service: 'running', Cancelling: 'running',
  Completed: 'completed', Killed: 'cancelled', Cancelled: 'cancelled', Exception: 'failed',
  // Dell job JobState (iDRAC Redfish API guide, DellJob schema)
  Scheduled: 'pending', Scheduling: 'pending', ReadyForExecution: 'pending', Waiting: 'pending', Paused: 'running',
  Downloading: 'running', Downloaded: 'running', RebootPending: 'pending', CompletedWithErrors: 'failed',
  Failed: 'failed', RebootFailed: 'failed', RebootCompleted: 'running', PendingActivation: 'pending',
};

/** Folds a TaskState/JobState word; Completed with a Critical TaskStatus counts as failed. */
export function decodeTaskState(raw: string, taskStatus: string | undefined): TaskState {
  const state = Object.hasOwn(TASK_STATES, raw) ? TASK_STATES[raw] ?? 'running' : 'running';
  return state === 'completed' && taskStatus === 'Critical' ? 'failed' : state;
}

/** True when `body` looks like a Task or a Dell job (has `TaskState` or `JobState`). */
export function isTaskBody(body: unknown): boolean {
  return isJsonObject(body) && (typeof body.TaskState === 'string' || typeof body.JobState === 'string');
}

/** Decodes a Task or Dell job; neither `TaskState` nor `JobState` is a protocol error. */
export function decodeTask(body: unknown, ctx: DecodeContext): TaskResource {
  const o = expectObject(body, ctx);
  const raw = readString(o, 'TaskState') ?? readString(o, 'JobState');
  if (raw === undefined) throw redfishProtocolError(ctx, 'task has neither "TaskState" nor "JobState"');
  return {
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    state: decodeTaskState(raw, readString(o, 'TaskStatus')),
    rawState: raw,
    percentComplete: readNumber(o, 'PercentComplete'),
    messages: decodeMessages(o),
  };
}

function decodeMessages(o: JsonObject): string[] {
  const list = o.Messages;
  const messages = Array.isArray(list)
    ? list.flatMap((m) => {
      const text = isJsonObject(m) ? readString(m, 'Message') ?? readString(m, 'MessageId') : undefined;
      return text === undefined ? [] : [text];
    })
    : [];
  const single = readString(o, 'Message'); // DellJob
  if (single !== undefined && !messages.includes(single)) messages.push(single);
  return messages;
}

/** One FirmwareInventory member (SoftwareInventory). */
export interface SoftwareInventoryItem {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly updateable: boolean;
}

/** Decodes a SoftwareInventory resource. */
export function decodeSoftwareInventory(body: unknown, ctx: DecodeContext): SoftwareInventoryItem {
  const o = expectObject(body, ctx);
  const id = readString(o, 'Id') ?? lastSegment(ctx.uri);
  return {
    id,
    name: readString(o, 'Name') ?? id,
    version: readString(o, 'Version') ?? '',
    updateable: readBoolean(o, 'Updateable') ?? false,
  };
}

/** An EventService subscription (EventDestination). */
export interface EventDestinationResource {
  readonly id: string;
  readonly destination: string;
  readonly context: string;
  readonly protocol: string | undefined;
}

/** Decodes an EventDestination; a missing `Destination` reads as ''. */
export function decodeEventDestination(body: unknown, ctx: DecodeContext): EventDestinationResource {
  const o = expectObject(body, ctx);
  return {
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    destination: readString(o, 'Destination') ?? '',
    context: readString(o, 'Context') ?? '',
    protocol: readString(o, 'Protocol'),
  };
}

/** The human part of a Redfish error body (`error.message` and `@Message.ExtendedInfo[].Message`). */
export function describeRedfishError(body: unknown): string | undefined {
  const error = isJsonObject(body) ? readObject(body, 'error') : undefined;
  if (error === undefined) return undefined;
  const parts: string[] = [];
  const info = error['@Message.ExtendedInfo'];
  if (Array.isArray(info)) {
    for (const m of info) {
      const text = isJsonObject(m) ? readString(m, 'Message') ?? readString(m, 'MessageId') : undefined;
      if (text !== undefined) parts.push(text);
    }
  }
  const message = readString(error, 'message');
  if (parts.length === 0 && message !== undefined) parts.push(message);
  const code = readString(error, 'code');
  if (parts.length === 0 && code !== undefined) parts.push(code);
  return parts.length === 0 ? undefined : parts.join('; ').slice(0, 500);
}

/** One `@Message.ExtendedInfo` entry as `Message (MessageId; Resolution: …)`, without the empty parts. */
function describeMessage(m: unknown): string | undefined {
  if (!isJsonObject(m)) return undefined;
  const text = readString(m, 'Message')?.trim();
  const id = readString(m, 'MessageId')?.trim();
  const resolution = readString(m, 'Resolution')?.trim();
  const extras = [id, resolution === undefined || resolution === '' || resolution === 'None' ? undefined : `Resolution: ${resolution}`]
    .filter((x): x is string => x !== undefined && x !== '');
  if (text === undefined || text === '') return extras.length === 0 ? undefined : extras.join('; ');
  return extras.length === 0 ? text : `${text} (${extras.join('; ')})`;
}

/**
 * What a BMC's error answer says, in its own words, for an error message: every
 * `@Message.ExtendedInfo` entry — under `error` (DSP0266 error response) and at the top level
 * (where some BMCs put it, with or without `error`) — as `Message (MessageId; Resolution: …)`
 * (a Resolution of "None" left out); when there is none, `error.message`, else `error.code`.
 * At most 800 characters; undefined when the body says nothing usable.
 */
export function describeRedfishErrorDetail(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const error = readObject(body, 'error');
  const entries = [error?.['@Message.ExtendedInfo'], body['@Message.ExtendedInfo']].flatMap((info): unknown[] => (Array.isArray(info) ? (info as unknown[]) : []));
  const parts = [...new Set(entries.map(describeMessage).filter((x): x is string => x !== undefined))];
  if (parts.length === 0) {
    const fallback = readString(error, 'message') ?? readString(error, 'code');
    if (fallback !== undefined) parts.push(fallback);
  }
  return parts.length === 0 ? undefined : parts.join('; ').slice(0, 800);
}
