/**
 * @module Streams one opened file as an HTTP response per the plan of range.ts (status,
 * validators, Range/If-Range, HEAD), counting the body bytes for the flight recorder. The file
 * handle is always closed, also when the client goes away mid-transfer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { JailedFile } from './file-jail.js';
import { contentTypeFor, planFileResponse, type FileRequestHeaders } from './range.js';

/** What was sent. */
export interface SentFile {
  status: number;
  /** Body bytes handed to the socket. */
  bytes: number;
  contentRange?: string;
  /** False when the client went away before the body was complete. */
  completed: boolean;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function requestHeaders(req: IncomingMessage): FileRequestHeaders {
  const out: FileRequestHeaders = {};
  for (const name of ['range', 'if-range', 'if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since'] as const) {
    const value = header(req, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Answers `req` with `file` (served under `name`, which picks the Content-Type) and closes the
 * file. `sent` is updated as the response goes (status and Content-Range at once, bytes as they
 * are read), so a `close` listener on `res` sees the facts even before this promise settles.
 */
export async function sendFile(req: IncomingMessage, res: ServerResponse, file: JailedFile, name: string, sent: SentFile = { status: 0, bytes: 0, completed: false }): Promise<SentFile> {
  const plan = planFileResponse(req.method ?? 'GET', requestHeaders(req), file, contentTypeFor(name));
  res.statusCode = plan.status;
  for (const [key, value] of Object.entries(plan.headers)) res.setHeader(key, value);
  const contentRange = plan.headers['Content-Range'];
  sent.status = plan.status;
  if (contentRange !== undefined) sent.contentRange = contentRange;
  if (plan.body === undefined) {
    await file.handle.close();
    res.end();
    sent.completed = true;
    return sent;
  }
  const stream = file.handle.createReadStream({ start: plan.body.start, end: plan.body.end, autoClose: true, highWaterMark: 256 * 1024 });
  stream.on('data', (chunk: Buffer | string) => {
    sent.bytes += chunk.length;
  });
  try {
    await pipeline(stream, res);
    sent.completed = true;
  } catch {
    // The client went away (or the file could not be read): the socket is already torn down.
    stream.destroy();
  }
  return sent;
}
