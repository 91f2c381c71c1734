/**
 * @module Tolerant readers for Redfish JSON bodies. Optional properties of the wrong type read
 * as undefined (real BMCs send `null`, numbers as strings, `"Id": 1`); required ones (collection
 * `Members`, a member's `@odata.id`, an action `target`) throw a `BmcError` with code
 * `RACKSIDE_ERR_BMC_PROTOCOL` naming the BMC address, the resource URI and the field. Nothing
 * here throws anything else.
 * @pure
 */
import { BmcError, BmcErrorCode } from '../errors.js';

/** A decoded JSON object (read-only view). */
export type JsonObject = Readonly<Record<string, unknown>>;

/** Where a body came from, named in decode errors. */
export interface DecodeContext {
  /** BMC address as configured (credential-free). */
  readonly address: string;
  /** Resource path the body was read from. */
  readonly uri: string;
}

/** A `RACKSIDE_ERR_BMC_PROTOCOL` error naming the BMC and the resource. */
export function redfishProtocolError(ctx: DecodeContext, message: string): BmcError {
  return new BmcError(BmcErrorCode.protocol, `BMC ${ctx.address}: ${ctx.uri}: ${message}`, { address: ctx.address });
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body as an object; anything else (array, string, null) is a protocol error. */
export function expectObject(value: unknown, ctx: DecodeContext, field = 'body'): JsonObject {
  if (!isJsonObject(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw redfishProtocolError(ctx, `${field} is ${got}, expected a JSON object`);
  }
  return value;
}

/** `obj[field]` as an object, or undefined. */
export function readObject(obj: JsonObject | undefined, field: string): JsonObject | undefined {
  const v = obj?.[field];
  return isJsonObject(v) ? v : undefined;
}

/** `obj[field]` as a string; numbers and booleans are stringified, anything else is undefined. */
export function readString(obj: JsonObject | undefined, field: string): string | undefined {
  const v = obj?.[field];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

/** `obj[field]` as a finite number; numeric strings are parsed, anything else is undefined. */
export function readNumber(obj: JsonObject | undefined, field: string): number | undefined {
  const v = obj?.[field];
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && /^\s*-?[0-9]+(\.[0-9]+)?\s*$/.test(v)) return Number(v);
  return undefined;
}

/** `obj[field]` as a boolean; `"true"`/`"false"` strings are accepted, anything else is undefined. */
export function readBoolean(obj: JsonObject | undefined, field: string): boolean | undefined {
  const v = obj?.[field];
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'True') return true;
  if (v === 'false' || v === 'False') return false;
  return undefined;
}

/** `obj[field]` as a list of strings (non-strings dropped), or undefined when not an array. */
export function readStringList(obj: JsonObject | undefined, field: string): string[] | undefined {
  const v = obj?.[field];
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === 'string');
}

/** The `@odata.id` of the link object at `obj[field]` (`{"@odata.id": "/redfish/v1/…"}`), or undefined. */
export function readLink(obj: JsonObject | undefined, field: string): string | undefined {
  const id = readString(readObject(obj, field), '@odata.id');
  return id === undefined || id === '' ? undefined : id;
}

/** The `@odata.id`s of a link array at `obj[field]`; entries without one are skipped. */
export function readLinkList(obj: JsonObject | undefined, field: string): string[] {
  const v = obj?.[field];
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) => {
    const id = isJsonObject(x) ? readString(x, '@odata.id') : undefined;
    return id === undefined || id === '' ? [] : [id];
  });
}

/** A required string; missing or empty is a protocol error naming the field. */
export function requireString(obj: JsonObject, field: string, ctx: DecodeContext): string {
  const v = readString(obj, field);
  if (v === undefined || v === '') throw redfishProtocolError(ctx, `missing or invalid "${field}"`);
  return v;
}

/** Keys of the `Oem` object (`Dell`, `Hpe`, `Hp`, `Lenovo` …): a vendor hint. */
export function readOemVendors(obj: JsonObject | undefined): string[] {
  const oem = readObject(obj, 'Oem');
  return oem === undefined ? [] : Object.keys(oem);
}

/**
 * The members of a Redfish collection: `Members` must be an array whose entries carry
 * `@odata.id` (an entry without one is a protocol error: the collection is unusable).
 */
export function decodeCollection(body: unknown, ctx: DecodeContext): string[] {
  const obj = expectObject(body, ctx);
  const members = obj.Members;
  if (!Array.isArray(members)) throw redfishProtocolError(ctx, 'collection has no "Members" array');
  return members.map((m, i) => {
    const id = isJsonObject(m) ? readString(m, '@odata.id') : undefined;
    if (id === undefined || id === '') throw redfishProtocolError(ctx, `Members[${i}] has no "@odata.id"`);
    return id;
  });
}

/** The `target` of action `name` in `obj.Actions` (`#ComputerSystem.Reset` …), or undefined. */
export function readActionTarget(obj: JsonObject | undefined, name: string): string | undefined {
  const target = readString(readObject(readObject(obj, 'Actions'), name), 'target');
  return target === undefined || target === '' ? undefined : target;
}

/** Last path segment of a URI (`/redfish/v1/Systems/1/` → `1`), used as an id. */
export function lastSegment(uri: string): string {
  const parts = uri.split(/[?#]/, 1)[0]?.split('/').filter((p) => p !== '') ?? [];
  return parts[parts.length - 1] ?? '';
}

/** Normalises a resource path for comparisons: no trailing slash, no query. */
export function normalizeUri(uri: string): string {
  const path = uri.split(/[?#]/, 1)[0] ?? '';
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}
