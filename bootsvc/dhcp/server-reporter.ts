/**
 * @module How the DHCP server (`dhcp-server.ts`) reports: its logger, rate-limited log lines,
 * metric increments, drop counters and flight-recorder events, each guarded so that a callback
 * that throws never reaches the socket loop; and its counters at start.
 */
import { emitBootEvent, type DhcpBootEvent } from '../events.js';
import type { DhcpLogFunction, DhcpLogLevel, DhcpServerOptions } from './dhcp-server.js';
import type { DhcpDropReason, DhcpServerStats } from './server-events.js';

/** The counters of a server that has handled nothing. */
export function emptyStats(): DhcpServerStats {
  return {
    received: {}, replies: {}, ignored: {}, dropped: {}, lookupErrors: 0, released: 0, declined: 0,
    hardwareUnicast: 0, hardwareUnicastFallbacks: 0, inFlight: 0,
    leases: { records: 0, writes: 0, writeErrors: 0, coalesced: 0, pending: 0, memoryOnly: 0 },
  };
}

/** Logging, counting and event emission of one server: none of them may throw into the loop. */
export interface Reporter {
  log: DhcpLogFunction;
  /** Logs at most once per 10 s per key, so a flood cannot flood the log. */
  logLimited(key: string, level: DhcpLogLevel, message: string, fields?: Record<string, unknown>): void;
  count(name: string, labels: Record<string, string>): void;
  drop(reason: DhcpDropReason): void;
  emit(event: DhcpBootEvent): void;
}

/** The reporter of a server with `options`, counting drops into `stats`; `now` times the log rate limit. */
export function makeReporter(options: DhcpServerOptions, stats: DhcpServerStats, now: () => number): Reporter {
  const log: DhcpLogFunction = (level, message, fields) => {
    try {
      options.log?.(level, message, fields);
    } catch {
      // A broken logger must not take DHCP down with it.
    }
  };
  const lastLogged = new Map<string, number>();
  const logLimited: Reporter['logLimited'] = (key, level, message, fields) => {
    const t = now();
    if ((lastLogged.get(key) ?? -Infinity) + 10_000 > t) return;
    lastLogged.set(key, t);
    log(level, message, fields);
  };
  const count: Reporter['count'] = (name, labels) => {
    try {
      options.metrics?.(name, labels);
    } catch (err) {
      logLimited('metrics', 'warn', 'dhcp metrics callback threw', { err });
    }
  };
  return {
    log,
    logLimited,
    count,
    drop(reason) {
      stats.dropped[reason] = (stats.dropped[reason] ?? 0) + 1;
      count('dhcp_dropped_total', { reason });
    },
    emit(event) {
      const err = emitBootEvent(options.onEvent, event);
      if (err !== undefined) logLimited('onEvent', 'warn', 'dhcp event listener threw', { err });
    },
  };
}

