/**
 * @module Bearer-token check for mutating management API requests (`Authorization: Bearer
 * <token>`, RFC 6750 §2.1). Tokens are compared in constant time over their SHA-256 digests,
 * so neither content nor length leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError, ApiErrorCode } from '../errors.js';

/** Methods that never change state (RFC 9110 §9.2.1 safe methods). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when `presented` equals `expected`, compared in constant time. */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** Extracts the token of an `Authorization: Bearer …` header, or undefined. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function unauthorized(message: string): ApiError {
  return new ApiError(ApiErrorCode.unauthorized, 401, '', message);
}

/**
 * Middleware refusing unsafe methods without the right bearer token (401, with
 * `WWW-Authenticate: Bearer`). With no token configured every mutation is refused: a
 * non-loopback listener without a token is read-only.
 */
export function requireBearerForMutations(token: string | undefined): RequestHandler {
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) {
      next();
      return;
    }
    res.set('WWW-Authenticate', 'Bearer realm="rackside"');
    if (token === undefined || token === '') {
      next(unauthorized('mutations are disabled: this listener requires a token and management.token is not set'));
      return;
    }
    const presented = bearerTokenOf(req.get('authorization'));
    if (presented === undefined) {
      next(unauthorized('missing "Authorization: Bearer <token>" header (set --token or RACKSIDE_TOKEN)'));
      return;
    }
    if (!tokensEqual(presented, token)) {
      next(unauthorized('invalid bearer token'));
      return;
    }
    res.removeHeader('WWW-Authenticate');
    next();
  };
}
