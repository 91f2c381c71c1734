/**
 * @module Field readers for decoding untrusted JSON into typed resources: each check throws a
 * {@link ValidationError} naming the exact field path (`spec.bmc.address`,
 * `spec.raid.hardwareRAIDVolumes[1].level`). {@link readFields} decodes a whole object from a
 * table of field kinds, rejecting unknown fields, so resource rules read as data.
 * JSON `null` counts as absent, as in Kubernetes.
 * @pure
 */
import { ValidationError } from '../errors.js';
import { isJsonObject, type JsonObject } from '../json-value.js';

export { isJsonObject, type JsonObject } from '../json-value.js';

/** `path.key`, or `key` at the root. */
export function fieldPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** `path[index]`. */
export function indexPath(path: string, index: number): string {
  return `${path}[${index}]`;
}

/** `path["key"]`: for map entries whose keys contain dots (annotations, labels, data). */
export function keyPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** A JSON value's kind for messages: `string`, `number`, `boolean`, `array`, `object`, `null`. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Throws a ValidationError at `path`. */
export function fail(path: string, message: string): never {
  throw new ValidationError(path, message);
}

/** `value` as an object, or a ValidationError at `path`. */
export function asObject(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) fail(path, `must be an object, got ${jsonKind(value)}`);
  return value;
}

/**
 * Rejects any key of `obj` not in `allowed`, naming the first unknown one's full path; a key
 * that is empty or not a plain name is quoted (`metadata[""]`, `spec["a.b"]`) so the path still
 * names it.
 */
export function rejectUnknown(obj: JsonObject, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(/^[A-Za-z0-9_$@-]+$/.test(key) ? fieldPath(path, key) : keyPath(path, key), 'unknown field');
  }
}

/** `obj[key]` with JSON null treated as absent. */
export function present(obj: JsonObject, key: string): unknown {
  const value = obj[key];
  return value === null ? undefined : value;
}

/** An optional string field. */
export function readString(obj: JsonObject, key: string, path: string): string | undefined {
  const value = present(obj, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') fail(fieldPath(path, key), `must be a string, got ${jsonKind(value)}`);
  return value;
}

/** A required string field (may be empty unless `nonEmpty`). */
export function requireString(obj: JsonObject, key: string, path: string, nonEmpty = false): string {
  const value = readString(obj, key, path);
  if (value === undefined) fail(fieldPath(path, key), 'required field is missing');
  if (nonEmpty && value === '') fail(fieldPath(path, key), 'must not be empty');
  return value;
}

/** An optional boolean field (JSON true/false only; "true" strings are refused). */
export function readBool(obj: JsonObject, key: string, path: string): boolean | undefined {
  const value = present(obj, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') fail(fieldPath(path, key), `must be a boolean, got ${jsonKind(value)}`);
  return value;
}

/** An optional integer field, at least `min` when given. */
export function readInt(obj: JsonObject, key: string, path: string, min?: number): number | undefined {
  const value = present(obj, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number') fail(fieldPath(path, key), `must be an integer, got ${jsonKind(value)}`);
  if (!Number.isSafeInteger(value)) fail(fieldPath(path, key), `must be an integer, got ${value}`);
  if (min !== undefined && value < min) fail(fieldPath(path, key), `must be at least ${min}, got ${value}`);
  return value;
}

/** An optional string field restricted to `values`; the message lists them. */
export function readEnum<T extends string>(obj: JsonObject, key: string, path: string, values: readonly T[]): T | undefined {
  const value = readString(obj, key, path);
  if (value === undefined) return undefined;
  const found = values.find((v) => v === value);
  if (found === undefined) fail(fieldPath(path, key), `unsupported value "${value}"; supported values: ${values.map((v) => `"${v}"`).join(', ')}`);
  return found;
}

/** An optional array field (items are checked by the caller). */
export function readArray(obj: JsonObject, key: string, path: string): unknown[] | undefined {
  const value = present(obj, key);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) fail(fieldPath(path, key), `must be an array, got ${jsonKind(value)}`);
  return value as unknown[];
}

/** An optional object field. */
export function readObject(obj: JsonObject, key: string, path: string): JsonObject | undefined {
  const value = present(obj, key);
  return value === undefined ? undefined : asObject(value, fieldPath(path, key));
}

/** An optional map of strings (labels, annotations, string data). */
export function readStringMap(obj: JsonObject, key: string, path: string): Record<string, string> | undefined {
  const map = readObject(obj, key, path);
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') fail(keyPath(fieldPath(path, key), k), `must be a string, got ${jsonKind(v)}`);
    out[k] = v;
  }
  return out;
}

/** An optional array of strings. */
export function readStringArray(obj: JsonObject, key: string, path: string): string[] | undefined {
  const items = readArray(obj, key, path);
  return items?.map((item, i) => {
    if (typeof item !== 'string') fail(indexPath(fieldPath(path, key), i), `must be a string, got ${jsonKind(item)}`);
    return item;
  });
}

/** The kind of one field in a {@link readFields} table: a scalar kind, or the list of allowed strings. */
export type FieldKind = 'string' | 'boolean' | 'int' | 'uint' | readonly string[];

/** The TypeScript type a {@link FieldKind} decodes to. */
export type FieldValue<K> = K extends 'string'
  ? string
  : K extends 'boolean'
    ? boolean
    : K extends 'int' | 'uint'
      ? number
      : K extends readonly (infer E)[]
        ? E
        : never;

/** The object a {@link readFields} table decodes to: every field optional, only present keys set. */
export type DecodedFields<T extends Record<string, FieldKind>> = { -readonly [P in keyof T]?: FieldValue<T[P]> };

/**
 * Decodes an object of scalar fields from `table`: rejects unknown keys (except those in
 * `extraKeys`, which the caller decodes), checks each field's kind, and returns only the
 * present fields. `uint` is an integer ≥ 0.
 */
export function readFields<const T extends Record<string, FieldKind>>(
  value: unknown,
  table: T,
  path: string,
  extraKeys: readonly string[] = [],
): DecodedFields<T> {
  const obj = asObject(value, path);
  rejectUnknown(obj, [...Object.keys(table), ...extraKeys], path);
  const out: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(table)) {
    let decoded: unknown;
    if (kind === 'string') decoded = readString(obj, key, path);
    else if (kind === 'boolean') decoded = readBool(obj, key, path);
    else if (kind === 'int') decoded = readInt(obj, key, path);
    else if (kind === 'uint') decoded = readInt(obj, key, path, 0);
    else decoded = readEnum(obj, key, path, kind);
    if (decoded !== undefined) out[key] = decoded;
  }
  return out as DecodedFields<T>;
}
