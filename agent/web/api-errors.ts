/**
 * @module How the management API reports failures: every error is JSON
 * `{ "error": { "code", "message", "field" } }`. ApiErrors keep their status (400 naming the
 * field path, 404, 409, 401); body-parser failures become 400 (bad JSON), 413 (too large) or
 * 415; a path segment with broken percent-encoding 400 (field `path`); unknown routes 404;
 * anything else 500 with the message but never a stack.
 */
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ApiErrorCode, isApiError } from '../errors.js';
import type { Logger } from '../log.js';

/** Error codes of the HTTP layer itself, beside {@link ApiErrorCode}. */
export const WebErrorCode = {
  tooLarge: 'RACKSIDE_ERR_API_TOO_LARGE',
  unsupportedMediaType: 'RACKSIDE_ERR_API_UNSUPPORTED_MEDIA_TYPE',
  internal: 'RACKSIDE_ERR_API_INTERNAL',
} as const;

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { code: string; message: string; field: string };
}

/** An error mapped to a status and body; `internal` marks 500s (logged with their stack). */
export interface MappedError {
  status: number;
  body: ErrorBody;
  internal: boolean;
}

/** Shape of the errors body-parser (express.json/text) raises. */
interface BodyParserError {
  type: string;
  status: number;
  message: string;
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return err instanceof Error && typeof (err as Partial<BodyParserError>).type === 'string' &&
    typeof (err as Partial<BodyParserError>).status === 'number';
}

function body(code: string, message: string, field = ''): ErrorBody {
  return { error: { code, message, field } };
}

/** Maps any thrown value to the response the API sends for it. */
export function mapError(err: unknown): MappedError {
  if (isApiError(err)) return { status: err.status, body: body(err.code, err.message, err.field), internal: false };
  if (isBodyParserError(err)) {
    switch (err.type) {
      case 'entity.too.large': {
        const limit = err.limit === undefined ? '' : ` (limit ${err.limit} bytes)`;
        return { status: 413, body: body(WebErrorCode.tooLarge, `request body too large${limit}`, 'body'), internal: false };
      }
      case 'entity.parse.failed':
        return { status: 400, body: body(ApiErrorCode.invalid, `body: invalid JSON: ${err.message}`, 'body'), internal: false };
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return { status: 415, body: body(WebErrorCode.unsupportedMediaType, err.message, 'body'), internal: false };
      default:
        if (err.status >= 400 && err.status < 500) {
          return { status: err.status, body: body(ApiErrorCode.invalid, err.message, 'body'), internal: false };
        }
    }
  }
  if (err instanceof URIError && (err as URIError & { status?: unknown }).status === 400) {
    // express's router: a path segment whose percent-encoding is not UTF-8 (`/hosts/%ff`).
    return { status: 400, body: body(ApiErrorCode.invalid, `path: ${err.message}`, 'path'), internal: false };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, body: body(WebErrorCode.internal, `internal error: ${message}`), internal: true };
}

/** Sends `err` as a JSON error response. */
export function sendError(res: Response, err: unknown, logger?: Logger): void {
  const mapped = mapError(err);
  if (mapped.internal) logger?.error({ err }, 'management API request failed');
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(mapped.status).json(mapped.body);
}

/** The last middleware: every error becomes JSON. */
export function errorHandler(logger?: Logger): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    sendError(res, err, logger);
  };
}

/** Answers every request no route matched with a JSON 404. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json(body(ApiErrorCode.notFound, `no route for ${req.method} ${req.path}`));
};
