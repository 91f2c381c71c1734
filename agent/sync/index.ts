/**
 * @module Public surface of agent/sync: the controller sync loop (store-and-forward of host
 * summaries and events, docs/sync-wire-format.md), its status, and the wire format for
 * controllers and tests.
 */
export {
  createSyncLoop,
  syncStatusHandler,
  type SyncErrorInfo,
  type SyncLoop,
  type SyncLoopOptions,
  type SyncStatus,
} from './sync-loop.js';
export { formatSyncStatus } from './status-text.js';
export { SyncFailure, type ControllerConfig, type SyncFailureCode } from './http-push.js';
export { DEFAULT_MAX_BACKLOG_EVENTS, Outbox, type BatchInput, type OutboxOptions } from './outbox.js';
export { DEFAULT_BACKOFF, backoffDelayMs, parseRetryAfterMs, type BackoffPolicy } from './backoff.js';
export { isSyncedEvent, sanitizeImageUrl, summarizeEvent, summarizeHost } from './summarize.js';
export {
  IDEMPOTENCY_HEADER,
  WIRE_LIMITS,
  WIRE_VERSION,
  decodePushRequest,
  decodePushResponse,
  encodePushRequest,
  idempotencyKey,
  type BootServiceHealth,
  type EventSummary,
  type HardwareSummary,
  type HostRef,
  type HostSummary,
  type OperationSummary,
  type PushAck,
  type PushRequest,
} from '../../wire/index.js';
export { SYNC_WIRE_ERROR_CODE, SyncWireError } from '../../wire/index.js';
