/**
 * @module HTTP semantics of serving one file (RFC 9110): validators (a strong ETag from size
 * and mtime, Last-Modified), conditional requests (§13: If-Match, If-Unmodified-Since,
 * If-None-Match, If-Modified-Since, in the §13.2.2 order), single byte ranges (§14: `a-b`, `a-`,
 * `-n`; 206 with Content-Range, 416 with `bytes * /size`), If-Range (§13.1.5: a stale validator
 * means the full 200), and HEAD. Multiple ranges and malformed Range headers are ignored, which
 * §14.2 allows ("a server MAY ignore the Range header field"): the client gets the full file.
 * @pure
 */

/** What the validators are computed from. */
export interface FileFacts {
  size: number;
  mtimeMs: number;
  /**
   * The validators of these facts, when the caller keeps them (the open-file cache computes
   * them once per open): must equal `fileEtag(facts)` and `httpDate(facts.mtimeMs)`.
   */
  validators?: { etag: string; lastModified: string };
}

/** The request headers that matter here (lower-case names, values as received). */
export interface FileRequestHeaders {
  range?: string;
  'if-range'?: string;
  'if-match'?: string;
  'if-none-match'?: string;
  'if-modified-since'?: string;
  'if-unmodified-since'?: string;
}

/** A parsed Range header: none (serve all), one satisfiable range (inclusive `end`), or unsatisfiable. */
export type RangeRequest = { kind: 'none' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/** How to answer: status, headers, and which bytes (inclusive) to send, if any. */
export interface FileResponsePlan {
  status: 200 | 206 | 304 | 412 | 416;
  headers: Record<string, string>;
  /** The byte span to send; absent when no body is sent (HEAD, 304, 412, 416, empty file). */
  body?: { start: number; end: number };
}

/** The strong ETag of a file: `"<size hex>-<mtime ms hex>"` (changes whenever either does). */
export function fileEtag(facts: FileFacts): string {
  return `"${facts.size.toString(16)}-${Math.floor(facts.mtimeMs).toString(16)}"`;
}

/** An IMF-fixdate (RFC 9110 §5.6.7) for `ms`, at whole seconds. */
export function httpDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toUTCString();
}

/** Parses an HTTP date to whole seconds since the epoch, or undefined. */
function parseHttpDateSeconds(value: string): number | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

const DIGITS = /^\d{1,16}$/;
const NO_RANGE: RangeRequest = { kind: 'none' };

/** Parses `Range` against a representation of `size` bytes (RFC 9110 §14.1.2). */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  const spec = m?.[1]?.trim();
  if (spec === undefined || spec.includes(',') || size === 0) return { kind: 'none' };
  const dash = spec.indexOf('-');
  if (dash < 0) return { kind: 'none' };
  const first = spec.slice(0, dash).trim();
  const last = spec.slice(dash + 1).trim();
  if (first === '') {
    if (!DIGITS.test(last)) return { kind: 'none' };
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  if (!DIGITS.test(first) || (last !== '' && !DIGITS.test(last))) return { kind: 'none' };
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: Math.min(end, size - 1) };
}

function etagList(value: string): string[] {
  return value.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

function weakMatch(list: string, etag: string): boolean {
  const bare = (t: string): string => (t.startsWith('W/') ? t.slice(2) : t);
  return etagList(list).some((t) => t === '*' || bare(t) === bare(etag));
}

function strongMatch(list: string, etag: string): boolean {
  return etagList(list).some((t) => t === '*' || (!t.startsWith('W/') && t === etag));
}

/** True when If-Range allows the range: a strong ETag equal to ours, or a date equal to Last-Modified. */
export function ifRangeHolds(ifRange: string | undefined, facts: FileFacts): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return !value.startsWith('W/') && value === (facts.validators?.etag ?? fileEtag(facts));
  const seconds = parseHttpDateSeconds(value);
  return seconds !== undefined && seconds === Math.floor(facts.mtimeMs / 1000);
}

/** Plans the response to a GET or HEAD of a file with `facts` (method other than these: the caller answers 405). */
export function planFileResponse(method: string, headers: FileRequestHeaders, facts: FileFacts, contentType: string): FileResponsePlan {
  const etag = facts.validators?.etag ?? fileEtag(facts);
  const lastModified = facts.validators?.lastModified ?? httpDate(facts.mtimeMs);
  const mtimeSeconds = Math.floor(facts.mtimeMs / 1000);
  const ifMatch = headers['if-match'];
  const ifUnmodifiedSince = headers['if-unmodified-since'];
  if (ifMatch !== undefined ? !strongMatch(ifMatch, etag) : ifUnmodifiedSince !== undefined && (parseHttpDateSeconds(ifUnmodifiedSince) ?? Infinity) < mtimeSeconds) {
    return { status: 412, headers: { 'ETag': etag, 'Last-Modified': lastModified, 'Content-Length': '0' } };
  }
  const ifNoneMatch = headers['if-none-match'];
  const ifModifiedSince = headers['if-modified-since'];
  const notModified = ifNoneMatch !== undefined
    ? weakMatch(ifNoneMatch, etag)
    : ifModifiedSince !== undefined && (parseHttpDateSeconds(ifModifiedSince) ?? -Infinity) >= mtimeSeconds;
  if (notModified) return { status: 304, headers: { 'ETag': etag, 'Last-Modified': lastModified } };
  const range = ifRangeHolds(headers['if-range'], facts) ? parseRange(headers.range, facts.size) : NO_RANGE;
  const head = method === 'HEAD';
  // Each answer's headers as one literal (one object shape per status, in the order they are
  // sent): this runs once per Range answer, where spreading a shared base cost a shape change each.
  if (range.kind === 'unsatisfiable') {
    return { status: 416, headers: { 'ETag': etag, 'Last-Modified': lastModified, 'Accept-Ranges': 'bytes', 'Content-Type': contentType, 'Content-Range': `bytes */${facts.size}`, 'Content-Length': '0' } };
  }
  if (range.kind === 'range') {
    const length = range.end - range.start + 1;
    const plan: FileResponsePlan = {
      status: 206,
      headers: { 'ETag': etag, 'Last-Modified': lastModified, 'Accept-Ranges': 'bytes', 'Content-Type': contentType, 'Content-Range': `bytes ${range.start}-${range.end}/${facts.size}`, 'Content-Length': String(length) },
    };
    if (!head) plan.body = { start: range.start, end: range.end };
    return plan;
  }
  const plan: FileResponsePlan = { status: 200, headers: { 'ETag': etag, 'Last-Modified': lastModified, 'Accept-Ranges': 'bytes', 'Content-Type': contentType, 'Content-Length': String(facts.size) } };
  if (!head && facts.size > 0) plan.body = { start: 0, end: facts.size - 1 };
  return plan;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ipxe: 'text/plain; charset=utf-8',
  cfg: 'text/plain; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  sha256: 'text/plain; charset=utf-8',
  sha512: 'text/plain; charset=utf-8',
  json: 'application/json',
  iso: 'application/x-iso9660-image',
  gz: 'application/gzip',
  xz: 'application/x-xz',
  zst: 'application/zstd',
};

/** The Content-Type for a served file name (boot binaries, kernels and disk images are octet streams). */
export function contentTypeFor(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}
