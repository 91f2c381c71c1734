/**
 * @module Small HTTP helpers of the controller's listener: bounded body reading (with gzip,
 * RFC 9110 §8.4, decompressed under a cap so a gzip bomb is refused), JSON answers, and API
 * errors `{ "error": { "message", "field" } }` naming the offending field.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const gunzipAsync = promisify(gunzip);

/** An answer other than 2xx, with the field it is about. */
export class HttpError extends Error {
  readonly status: number;
  readonly field: string;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, field = '', headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.field = field;
    this.headers = headers;
  }
}

/**
 * Reads the request body: at most `maxBytes` on the wire and `maxDecoded` after gunzip.
 * @throws HttpError 413 (too large), 415 (unsupported Content-Encoding), 400 (damaged gzip)
 */
export async function readBody(req: IncomingMessage, maxBytes: number, maxDecoded: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (encoding !== 'identity' && encoding !== 'gzip') throw new HttpError(415, `unsupported Content-Encoding ${JSON.stringify(encoding)} (gzip or identity)`, 'Content-Encoding');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `request body larger than ${maxBytes} bytes`, 'body');
    chunks.push(chunk);
  }
  const raw = Buffer.concat(chunks);
  if (encoding === 'identity') {
    if (raw.length > maxDecoded) throw new HttpError(413, `request body larger than ${maxDecoded} bytes`, 'body');
    return raw;
  }
  try {
    return await gunzipAsync(raw, { maxOutputLength: maxDecoded });
  } catch (err) {
    const tooBig = (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
    throw new HttpError(tooBig ? 413 : 400, tooBig ? `request body larger than ${maxDecoded} bytes once decompressed` : `request body is not valid gzip: ${err instanceof Error ? err.message : String(err)}`, 'body');
  }
}

/** Sends `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** Sends an error answer; non-HttpErrors become 500 with a generic message (the details go to the log). */
export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof HttpError) {
    sendJson(res, err.status, { error: { message: err.message, field: err.field } }, err.headers);
    return;
  }
  sendJson(res, 500, { error: { message: 'internal error (see the controller log)', field: '' } });
}

/** The token of an `Authorization: Bearer …` header (RFC 6750 §2.1), or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
