/**
 * @module Deep freezing of JSON values, for objects the store hands to many readers at once
 * (HostReader.hostSnapshot): a reader that tried to change one would throw (ES modules are strict)
 * instead of changing it for every other reader.
 * @pure
 */

/** Freezes `value` and everything reachable from it; returns it. */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
