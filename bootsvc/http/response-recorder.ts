/**
 * @module Bookkeeping of the boot HTTP server shared by its two request paths (the file fast
 * path and express): the counters (`BootHttpStats`), the flight-recorder event every response
 * produces when it closes (status, bytes, Range/Content-Range, aborted or not), and the plain
 * text answers (404, 403, 405, 503 …) both paths send.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { emitBootEvent, type BootEventListener, type HttpBootEvent } from '../events.js';
import type { SentFile } from './send-file.js';
import { unmapIpv4 } from '../net/ip-text.js';

/** The few logger methods the server uses (pino's signature). */
export interface BootHttpLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Counters since start. */
export interface BootHttpStats {
  requests: number;
  /** Body bytes sent. */
  bytes: number;
  /** Responses in progress. */
  active: number;
  /** Responses by status code. */
  byStatus: Record<string, number>;
  /** Generated scripts and GRUB configs served. */
  generated: number;
  /** Shim/GRUB probes answered with a fast 404. */
  probes: number;
  /** Requests refused: malformed (400), traversal or symlink escape (403). */
  refused: number;
  /** Responses the client abandoned before they ended. */
  aborted: number;
  /** Boot lookups or renderings that failed (500/503). */
  errors: number;
  /** File descriptors held now (the open-file cache's entries and files being sent). */
  openFiles: number;
  /** Files opened since start (cache misses, and files found changed on disk). */
  fileOpens: number;
  /** File answers whose body went (in whole or part) by sendfile(2) (kernel-send.ts); 0 without the addon. */
  sendfileAnswers: number;
  /** Small bodies that could not go by sendfile because a page was not in the page cache. */
  sendfileCold: number;
  /** TLS handshakes the boot HTTPS listener failed (an untrusted certificate, a plain-HTTP client); 0 without it. */
  tlsHandshakeFailures: number;
}

/** Per-response facts the handlers leave for the recorder. */
export interface ResponseNotes {
  /** Body bytes of a text answer (file answers count in `sent`). */
  bytes: number;
  servedAs?: string;
  detail?: string;
  mac?: string;
  /** Live facts of a file response (bytes and Content-Range). */
  sent?: SentFile;
}

/** Where the recorder reports. */
export interface RecorderTarget {
  stats: BootHttpStats;
  onEvent?: BootEventListener;
  logger?: BootHttpLogger;
}

/** A fresh set of zeroed counters. */
export function createBootHttpStats(): BootHttpStats {
  return { requests: 0, bytes: 0, active: 0, byStatus: {}, generated: 0, probes: 0, refused: 0, aborted: 0, errors: 0, openFiles: 0, fileOpens: 0, sendfileAnswers: 0, sendfileCold: 0, tlsHandshakeFailures: 0 };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Counts a request that starts now and returns the notes its handler fills in; when `res`
 * closes (finished or abandoned) — or, for a file answer whose `sent.settled` is set, once that
 * promise settles too — the counters are settled and one `http` event is emitted.
 * The path is taken from `req.url` now, before any router rewrites it.
 */
export function trackResponse(req: IncomingMessage, res: ServerResponse, target: RecorderTarget): ResponseNotes {
  const startedNs = process.hrtime.bigint();
  const { stats } = target;
  stats.requests += 1;
  stats.active += 1;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const notes: ResponseNotes = { bytes: 0 };
  res.once('close', () => {
    const completed = res.writableFinished;
    // A sender-thread job may still be moving bytes when the socket closes (a cancel races the
    // sendfile call in flight): the event waits for its final count rather than a snapshot.
    const settled = notes.sent?.settled;
    if (settled === undefined) settle(completed);
    else void settled.then(() => { settle(completed); });
  });
  const settle = (completed: boolean): void => {
    stats.active -= 1;
    if (!completed) stats.aborted += 1;
    const statusKey = String(res.statusCode);
    stats.byStatus[statusKey] = (stats.byStatus[statusKey] ?? 0) + 1;
    const bytes = notes.sent?.bytes ?? (notes.bytes > 0 ? notes.bytes : completed && req.method !== 'HEAD' ? Number(res.getHeader('content-length') ?? 0) || 0 : 0);
    stats.bytes += bytes;
    if (target.onEvent === undefined) return;
    const event: HttpBootEvent = {
      kind: 'http',
      method: req.method ?? '',
      path,
      status: res.statusCode,
      bytes,
      durationMs: Number(process.hrtime.bigint() - startedNs) / 1e6,
      clientAddress: unmapIpv4(req.socket.remoteAddress ?? ''),
      completed,
    };
    const range = headerText(req.headers.range);
    if (range !== undefined) event.range = range;
    if (Reflect.get(req.socket, 'encrypted') === true) event.tls = true;
    if (notes.sent?.contentRange !== undefined) event.contentRange = notes.sent.contentRange;
    const userAgent = headerText(req.headers['user-agent']);
    if (userAgent !== undefined) event.userAgent = userAgent;
    if (notes.mac !== undefined) event.mac = notes.mac;
    if (notes.servedAs !== undefined) event.servedAs = notes.servedAs;
    if (notes.detail !== undefined) event.detail = notes.detail;
    const err = emitBootEvent(target.onEvent, event);
    if (err !== undefined) target.logger?.warn({ err }, 'boot HTTP: flight recorder listener failed');
  };
  return notes;
}

/**
 * Answers with a short `text/plain` body (not cached), the body left out for HEAD; `notes`
 * (servedAs, detail) are merged into the response's notes. Headers already set on `res`
 * (`Allow`) are kept.
 */
export function sendText(req: IncomingMessage, res: ServerResponse, status: number, text: string, notes: ResponseNotes, facts: Partial<ResponseNotes> = {}): void {
  const body = Buffer.from(text, 'utf8');
  Object.assign(notes, facts);
  const headers: OutgoingHttpHeaders = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length), 'Cache-Control': 'no-store' };
  res.writeHead(status, headers);
  if (req.method === 'HEAD') {
    res.end();
  } else {
    notes.bytes = body.length;
    res.end(body);
  }
}
