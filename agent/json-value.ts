/**
 * @module Helpers for JSON-shaped values: what `JSON.parse` returns, and the host and status
 * objects the agent stores as JSON.
 * @pure
 */

/** A decoded JSON object. */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Deep equality as JSON sees it: key order does not matter, an object key whose value is
 * `undefined` counts as absent (`JSON.stringify` drops it) and an `undefined` array element equals
 * `null` (`JSON.stringify` writes `null`). Same answer as comparing key-sorted `JSON.stringify`
 * output, without building the strings: a reconcile compares a host's spec, annotations and
 * settings every pass, and at 1000 hosts the strings were a measurable share of the agent's
 * steady-state CPU. Values must be JSON-shaped (no cycles, no class instances with `toJSON`).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // Numbers that are not finite are written as null; no other primitive is equal unless identical.
    return a !== undefined && b !== undefined && jsonNull(a) && jsonNull(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let leftKeys = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key) || left[key] === undefined) continue;
    leftKeys++;
    if (!Object.hasOwn(right, key) || !jsonEqual(left[key], right[key])) return false;
  }
  let rightKeys = 0;
  for (const key in right) if (Object.hasOwn(right, key) && right[key] !== undefined) rightKeys++;
  return leftKeys === rightKeys;
}

/** True where `JSON.stringify` writes `null`: null itself and non-finite numbers. */
function jsonNull(value: unknown): boolean {
  return value === null || (typeof value === 'number' && !Number.isFinite(value));
}

/**
 * True when `value` nests objects/arrays deeper than `max` levels. Iterative, because the input
 * (a ramdisk's inventory or report) may nest deeper than the call stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [v, depth] = next;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return false;
}
