/**
 * @module Renders the sync status as the few lines `rackside sync status` prints: controller,
 * last acknowledgement, backlog, last error and the next attempt, with ages relative to `nowMs`.
 * @pure
 */
import type { SyncStatus } from './sync-loop.js';

function ago(iso: string, nowMs: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const seconds = Math.round((nowMs - ms) / 1000);
  const span = (s: number) => (s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`);
  return seconds >= 0 ? `${iso} (${span(seconds)} ago)` : `${iso} (in ${span(-seconds)})`;
}

/** The status as aligned `label  value` lines (no trailing newline). */
export function formatSyncStatus(status: SyncStatus, nowMs: number): string {
  if (!status.enabled) return 'controller  (not configured: no controller section in the config)';
  const lines: [string, string][] = [];
  lines.push(['controller', `${status.url ?? ''}${status.running ? '' : ' (stopped)'}`]);
  lines.push(['agent', `${status.agentId}${status.streamId === null ? '' : ` (stream ${status.streamId})`}`]);
  lines.push(['last ack', status.lastAckAt === null ? 'never' : `sequence ${status.lastAckSequence ?? '?'} at ${ago(status.lastAckAt, nowMs)}`]);
  const inflight = status.inflight === null
    ? ''
    : ` (in flight: sequence ${status.inflight.sequence}, ${status.inflight.hosts} hosts, ${status.inflight.events} events, ${status.inflight.attempts} attempts)`;
  lines.push(['backlog', `${status.backlog.hosts} hosts, ${status.backlog.events} events${inflight}`]);
  if (status.droppedEvents > 0) lines.push(['dropped', `${status.droppedEvents} events (backlog cap)`]);
  if (status.lastError !== null) {
    const http = status.lastError.httpStatus === undefined ? '' : ` HTTP ${status.lastError.httpStatus}`;
    lines.push(['last error', `${ago(status.lastError.at, nowMs)} ${status.lastError.code}${http}: ${status.lastError.message}`]);
  }
  if (status.consecutiveFailures > 0) lines.push(['failures', `${status.consecutiveFailures} in a row`]);
  if (status.nextAttemptAt !== null) lines.push(['next try', ago(status.nextAttemptAt, nowMs)]);
  if (status.nextResyncAt !== null) lines.push(['resync', ago(status.nextResyncAt, nowMs)]);
  return lines.map(([label, value]) => `${label.padEnd(11)} ${value}`).join('\n');
}
