/**
 * @module `GET /api/v1/events/stream`: events as Server-Sent Events (WHATWG HTML §9.2). Each
 * message is `id: <seq>`, `event: event`, `data: <StoredEvent JSON>`. A client resuming with
 * `Last-Event-ID` (or `?after=`) first gets the stored events after that sequence number, then
 * live ones, without gaps or duplicates: the live subscription starts before the replay and
 * its events are held until the replay is written. A comment line every `heartbeatMs` keeps
 * proxies from closing an idle stream.
 */
import type { Request, Response } from 'express';
import type { EventFilter, StoredEvent } from '../store/types.js';
import type { ManagementBackend } from './backend.js';

/** Options of {@link streamEvents}. */
export interface EventStreamOptions {
  /** Interval of keep-alive comments. */
  heartbeatMs: number;
  /** Most stored events replayed on resume. */
  replayLimit: number;
}

/** Formats one SSE message for an event. */
export function formatEventMessage(event: StoredEvent): string {
  return `id: ${event.seq}\nevent: event\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Serves the event stream on `res` until the client disconnects. `filter.afterSeq` set means
 * replay stored events after it first; unset means live events only.
 */
export async function streamEvents(
  backend: ManagementBackend,
  req: Request,
  res: Response,
  filter: Omit<EventFilter, 'limit'>,
  options: EventStreamOptions,
): Promise<void> {
  let lastSeq = filter.afterSeq ?? 0;
  let replaying = true;
  let closed = false;
  const pending: StoredEvent[] = [];
  const matches = (e: StoredEvent): boolean =>
    (filter.host === undefined || e.host === filter.host) && (filter.mac === undefined || e.mac === filter.mac);
  const send = (e: StoredEvent): void => {
    if (closed || e.seq <= lastSeq) return;
    lastSeq = e.seq;
    res.write(formatEventMessage(e));
  };
  const unsubscribe = backend.onEvent((e) => {
    if (!matches(e)) return;
    if (replaying) pending.push(e);
    else send(e);
  });
  // Headers go out only after the subscription exists: a client that sees 200 misses nothing.
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write('retry: 3000\n\n');
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': keepalive\n\n');
  }, options.heartbeatMs);
  heartbeat.unref();
  const close = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unsubscribe();
  };
  req.on('close', close);
  res.on('close', close);
  try {
    if (filter.afterSeq !== undefined) {
      const past = await backend.listEvents({ ...filter, limit: options.replayLimit });
      for (const e of past) send(e);
    }
  } finally {
    replaying = false;
    for (const e of pending.sort((a, b) => a.seq - b.seq)) send(e);
    pending.length = 0;
  }
}
