/**
 * @module Removes what must not be shown from free text that names URLs: an image URL may carry
 * `user:password@` or a pre-signed query (`?X-Amz-Signature=…`), and that URL ends up in event
 * messages, host error messages and log lines, which are read without a token, pushed to the
 * controller and kept in journald. The status page already shows image URLs this way
 * (agent/status-report.ts `redactImageUrl`); the event log, `status.errorMessage` and the
 * logger apply {@link redactUrlSecrets} to everything.
 * @pure
 */

/**
 * A URL inside text: scheme, optional user-info, the rest up to whitespace or a quote, an
 * optional query and fragment, not counting punctuation that ends a sentence. (RFC 3986 §3:
 * user-info ends at `@`, the query starts at `?`.)
 */
const URL_IN_TEXT = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s/?#@"'<>]*@)?([^\s?#"'<>]*)(\?[^\s#"'<>]*)?(#[^\s"'<>]*)?/g;

/** What replaces a removed query or fragment. */
export const REDACTED_QUERY = '?[redacted]';

/**
 * `text` with every URL's user-info replaced by `***@` and its query and fragment replaced by
 * {@link REDACTED_QUERY}; everything else unchanged (paths keep their place in a message).
 */
export function redactUrlSecrets(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (_match, scheme: string, userInfo: string | undefined, rest: string, query: string | undefined, fragment: string | undefined) => {
    const tail = `${query ?? ''}${fragment ?? ''}`;
    // Punctuation ending the sentence is not part of the query: keep it.
    const end = /[.,:;)\]}]*$/.exec(tail)?.[0] ?? '';
    return `${scheme}${userInfo === undefined ? '' : '***@'}${rest}${tail === '' ? '' : `${REDACTED_QUERY}${end}`}`;
  });
}

/** A copy of `value` with {@link redactUrlSecrets} applied to every string in it (plain objects and arrays walked, 32 levels deep). */
export function redactUrlSecretsDeep<T>(value: T): T {
  return walk(value, 0, false) as T;
}

/**
 * As {@link redactUrlSecretsDeep}, and the copy shares nothing with `value`: what is not a plain
 * object or array (a Date, a class instance, anything deeper than 32 levels) is copied by
 * `structuredClone` (so it must be cloneable), a class instance's fields redacted as well. The
 * same result as `redactUrlSecretsDeep(structuredClone(value))` without cloning the plain parts
 * twice (every stored event goes through it).
 */
export function redactedCopy<T>(value: T): T {
  return walk(value, 0, true) as T;
}

function walk(value: unknown, depth: number, copyAll: boolean): unknown {
  if (typeof value === 'string') return redactUrlSecrets(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 32) return copyAll ? structuredClone(value) : value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, copyAll));
  // Plain objects only: an Error or a class instance is left as it is (the logger's `err`
  // serializer turns errors into plain objects first).
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    if (!copyAll) return value;
    // structuredClone turns a class instance into a plain object (walked, so redacted) and keeps a Date, Map or Error what it is.
    const cloned: unknown = structuredClone(value);
    const clonedProto: unknown = Object.getPrototypeOf(cloned);
    return clonedProto === Object.prototype || clonedProto === null ? walk(cloned, depth, copyAll) : cloned;
  }
  // fromEntries defines own properties: an own `__proto__` key stays a key.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, depth + 1, copyAll)]));
}

/** Secrets shorter than this are not searched for (they would match ordinary words). */
const MIN_SECRET_LENGTH = 8;

/**
 * `text` with every occurrence of each of `secrets` (ours: a token, a password) replaced by
 * `[redacted]` — for text a peer sent back, which may echo what it was given (a controller
 * answering 401 with "invalid token Bearer …").
 */
export function redactKnownSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join('[redacted]');
  }
  return out;
}
