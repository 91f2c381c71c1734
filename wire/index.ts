/**
 * @module The controller sync wire format (docs/sync-wire-format.md), shared by the agent's
 * sync loop (agent/sync/) and the fleet controller (controller/). A leaf: it imports nothing of
 * either side, and both import it only through this file.
 * @pure
 */
export {
  IDEMPOTENCY_HEADER,
  OPERATION_NAMES,
  WIRE_LIMITS,
  WIRE_VERSION,
  WIRE_VERSIONS,
  decodePushRequest,
  decodePushResponse,
  encodePushRequest,
  idempotencyKey,
  readEventSummary,
  readHostRef,
  readHostSummary,
  type BootServiceHealth,
  type EventSummary,
  type EventType,
  type HardwareSummary,
  type HostRef,
  type HostSummary,
  type OperationName,
  type OperationSummary,
  type PushAck,
  type PushRequest,
  type WireVersion,
} from './push.js';
export {
  COMMAND_KINDS,
  COMMAND_LIMITS,
  COMMAND_OUTCOMES,
  clipMessage,
  isCommandId,
  readCommand,
  readCommandList,
  readCommandResult,
  type CommandKind,
  type CommandOutcome,
  type CommandResult,
  type FleetCommand,
  type RejectedCommand,
} from './commands.js';
export { SYNC_WIRE_ERROR_CODE, SyncWireError, WireReader, describe, type JsonObject } from './read.js';
