/**
 * @module Streams one opened file as an HTTP response per the plan of range.ts (status,
 * validators, Range/If-Range, HEAD), counting the body bytes for the flight recorder. The file
 * handle is always closed, also when the client goes away mid-transfer. Bodies of at most
 * {@link SMALL_BODY_BYTES} (boot scripts, iPXE/GRUB binaries, the 64 KiB ranges of image
 * clients) skip the stream machinery: one positioned read into a buffer and one `end()`; the
 * per-request cost of a ReadStream plus `pipeline` (stream objects, abort signals, end-of-stream
 * bookkeeping) was most of the CPU of a 64 KiB Range answer (test/bench/http.bench.ts).
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

/** Bodies up to this size are read whole and sent with one `end()` (the stream's chunk size). */
export const SMALL_BODY_BYTES = 256 * 1024;

/** The ReadStream chunk size for larger bodies. */
const STREAM_CHUNK_BYTES = 256 * 1024;

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
  const length = plan.body.end - plan.body.start + 1;
  if (length <= SMALL_BODY_BYTES) return sendSmallBody(res, file, plan.body.start, length, sent);
  const stream = file.handle.createReadStream({ start: plan.body.start, end: plan.body.end, autoClose: true, highWaterMark: STREAM_CHUNK_BYTES });
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

/**
 * Reads `length` bytes at `start` into one buffer, ends `res` with it while the file closes, and
 * resolves when both are done. A file that shrank under us (a short read) destroys the response
 * so the client sees a truncated transfer rather than waiting for the promised Content-Length.
 */
async function sendSmallBody(res: ServerResponse, file: JailedFile, start: number, length: number, sent: SentFile): Promise<SentFile> {
  const body = Buffer.allocUnsafe(length);
  let got = 0;
  try {
    while (got < length) {
      const { bytesRead } = await file.handle.read(body, got, length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
  } catch {
    got = -1;
  }
  // The close needs no wait before the answer: it runs on the libuv pool meanwhile.
  const closing = file.handle.close().catch(() => undefined);
  if (got !== length || res.destroyed) {
    if (got !== length) res.destroy();
    await closing;
    return sent;
  }
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  sent.bytes = length;
  res.end(body);
  await Promise.all([closed, closing]);
  sent.completed = res.writableFinished;
  return sent;
}
