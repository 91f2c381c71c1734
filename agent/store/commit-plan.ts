/**
 * @module The storage-independent half of {@link ResourceStore.commit}: validating a change list,
 * checking every `ifVersion` precondition against the current metadata, and computing what to
 * write (new `resourceVersion`, `uid` and `creationTimestamp` on create, kept on update).
 * Shared by the LevelDB and memory stores so both have the same semantics.
 * Time and uid generation come in as arguments.
 * @pure
 */
import { ConflictError, ValidationError } from '../errors.js';
import { isFirmwareKind, type FirmwareKind, type FirmwareObject } from '../host/firmware-types.js';
import type { BareMetalHost, ObjectMeta, Secret } from '../host/types.js';
import type { Change, ChangeNotice, CommitResult, VersionPrecondition } from './types.js';

/** The store key of a host: its name (hosts are unique by name within one agent). */
export function hostKey(name: string): string {
  return name;
}

/** The store key of a secret: `namespace/name` (neither part may contain `/`). */
export function secretKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The store key of a firmware object: `kind/namespace/name` (no part may contain `/`). */
export function firmwareKey(kind: FirmwareKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** Formats `date` as an RFC 3339 UTC timestamp with second precision, as Kubernetes does (`2026-01-02T03:04:05Z`). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** One write a commit performs, addressed by store key. */
export type PlannedWrite =
  | { kind: 'host'; op: 'put'; key: string; object: BareMetalHost }
  | { kind: 'secret'; op: 'put'; key: string; object: Secret }
  | { kind: 'firmware'; op: 'put'; key: string; object: FirmwareObject }
  | { kind: 'host' | 'secret' | 'firmware'; op: 'delete'; key: string };

/** Everything a store needs to apply one commit. */
export interface CommitPlan {
  /** The store revision after the commit: the current one plus 1, or unchanged for an empty change list (write nothing). */
  revision: number;
  /** Writes in change order; deletes of absent objects are omitted. */
  writes: PlannedWrite[];
  /** One notice per write, for `onChange` listeners. */
  notices: ChangeNotice[];
  /** What `commit` returns (objects are copies, not shared with `writes`). */
  result: CommitResult;
}

/** The keys a change list touches, so a store can fetch their current metadata before planning. */
export interface ChangeTargets {
  hostKeys: string[];
  secretKeys: string[];
  firmwareKeys: string[];
}

function checkName(what: string, value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || value === '') throw new ValidationError(field, `${what} must be a non-empty string`);
  if (value.includes('/')) throw new ValidationError(field, `${what} "${value}" must not contain "/"`);
}

function checkPrecondition(value: unknown, index: number): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError(`changes[${index}].ifVersion`, 'must be "absent", a non-empty resourceVersion, or unset');
  }
}

function targetOf(change: Change, index: number): { kind: Change['kind']; key: string } {
  const at = `changes[${index}]`;
  if (change.kind === 'host') {
    const name = change.op === 'put' ? change.object.metadata.name : change.name;
    checkName('host name', name, change.op === 'put' ? `${at}.object.metadata.name` : `${at}.name`);
    return { kind: 'host', key: hostKey(name) };
  }
  const [namespace, name] =
    change.op === 'put' ? [change.object.metadata.namespace, change.object.metadata.name] : [change.namespace, change.name];
  const what = change.kind === 'secret' ? 'secret' : 'firmware object';
  checkName(`${what} namespace`, namespace, change.op === 'put' ? `${at}.object.metadata.namespace` : `${at}.namespace`);
  checkName(`${what} name`, name, change.op === 'put' ? `${at}.object.metadata.name` : `${at}.name`);
  if (change.kind === 'firmware') {
    const kind: unknown = change.op === 'put' ? change.object.kind : change.objectKind;
    if (!isFirmwareKind(kind)) throw new ValidationError(change.op === 'put' ? `${at}.object.kind` : `${at}.objectKind`, `unknown firmware kind ${JSON.stringify(kind)}`);
    return { kind: 'firmware', key: firmwareKey(kind, namespace, name) };
  }
  if (change.op === 'put') {
    const data: unknown = change.object.data;
    if (typeof data !== 'object' || data === null || !Object.values(data).every((v) => typeof v === 'string')) {
      throw new ValidationError(`${at}.object.data`, 'must be a map of strings');
    }
  }
  return { kind: 'secret', key: secretKey(namespace, name) };
}

/**
 * Validates `changes` (names, preconditions, no object named twice) and returns the keys they
 * touch; throws ValidationError naming the offending change.
 */
export function collectTargets(changes: readonly Change[]): ChangeTargets {
  const seen = new Set<string>();
  const targets: ChangeTargets = { hostKeys: [], secretKeys: [], firmwareKeys: [] };
  changes.forEach((change, index) => {
    checkPrecondition(change.ifVersion, index);
    const { kind, key } = targetOf(change, index);
    const id = `${kind}:${key}`;
    if (seen.has(id)) throw new ValidationError(`changes[${index}]`, `${kind} "${key}" appears more than once in one commit`);
    seen.add(id);
    (kind === 'host' ? targets.hostKeys : kind === 'secret' ? targets.secretKeys : targets.firmwareKeys).push(key);
  });
  return targets;
}

function describe(version: VersionPrecondition | null): string {
  if (version === null) return 'absent';
  if (version === 'absent') return 'absent (create)';
  return `resourceVersion ${version ?? 'any'}`;
}

/** Throws ConflictError unless `current` satisfies `expected`. */
function checkVersion(kind: string, key: string, expected: VersionPrecondition, current: ObjectMeta | undefined): void {
  if (expected === undefined) return;
  const actual = current === undefined ? null : current.resourceVersion;
  const ok = expected === 'absent' ? actual === null : actual === expected;
  if (!ok) {
    const found = actual === null ? 'absent' : describe(actual);
    throw new ConflictError(
      'metadata.resourceVersion',
      `${kind} "${key}" precondition failed: expected ${describe(expected)}, actual ${found}`,
    );
  }
}

/** Inputs of {@link planCommit} besides the changes. */
export interface PlanContext {
  /** Current metadata of every host key in {@link ChangeTargets} (absent = does not exist). */
  hosts: ReadonlyMap<string, ObjectMeta>;
  /** Current metadata of every secret key in {@link ChangeTargets}. */
  secrets: ReadonlyMap<string, ObjectMeta>;
  /** Current metadata of every firmware key in {@link ChangeTargets} (absent when the commit touches none). */
  firmware?: ReadonlyMap<string, ObjectMeta>;
  /** The store revision before this commit. */
  revision: number;
  now: Date;
  newUid: () => string;
}

/** Sets the store-owned metadata fields of a put object in place; returns `meta`. */
function stamp(meta: ObjectMeta, current: ObjectMeta | undefined, revision: number, ctx: PlanContext): ObjectMeta {
  meta.resourceVersion = String(revision);
  meta.uid = current?.uid ?? ctx.newUid();
  meta.creationTimestamp = current?.creationTimestamp ?? formatTimestamp(ctx.now);
  return meta;
}

/**
 * Checks every precondition of `changes` (already validated by {@link collectTargets}) against
 * `ctx` and computes the writes; throws ConflictError on the first failed precondition, before
 * anything is written. Input objects are not modified.
 */
export function planCommit(changes: readonly Change[], ctx: PlanContext): CommitPlan {
  const keyed = changes.map((change, index) => {
    const { key } = targetOf(change, index);
    const metas = change.kind === 'host' ? ctx.hosts : change.kind === 'secret' ? ctx.secrets : ctx.firmware;
    return { change, key, current: metas?.get(key) };
  });
  for (const { change, key, current } of keyed) checkVersion(change.kind, key, change.ifVersion, current);

  const revision = changes.length === 0 ? ctx.revision : ctx.revision + 1;
  const plan: CommitPlan = { revision, writes: [], notices: [], result: { revision, hosts: [], secrets: [], firmware: [] } };
  for (const { change, key, current } of keyed) {
    const objectKind = change.kind !== 'firmware' ? undefined : change.op === 'put' ? change.object.kind : change.objectKind;
    const notice = (op: 'put' | 'delete', meta: ObjectMeta): ChangeNotice => ({
      kind: change.kind,
      ...(objectKind === undefined ? {} : { objectKind }),
      op,
      namespace: meta.namespace,
      name: meta.name,
      revision,
    });
    if (change.op === 'delete') {
      if (current === undefined) continue;
      plan.writes.push({ kind: change.kind, op: 'delete', key });
      plan.notices.push(notice('delete', current));
      continue;
    }
    let meta: ObjectMeta;
    if (change.kind === 'host') {
      const object = structuredClone(change.object);
      meta = stamp(object.metadata, current, revision, ctx);
      plan.writes.push({ kind: 'host', op: 'put', key, object });
      plan.result.hosts.push(structuredClone(object));
    } else if (change.kind === 'secret') {
      const object = structuredClone(change.object);
      meta = stamp(object.metadata, current, revision, ctx);
      plan.writes.push({ kind: 'secret', op: 'put', key, object });
      plan.result.secrets.push(structuredClone(object));
    } else {
      const object = structuredClone(change.object);
      meta = stamp(object.metadata, current, revision, ctx);
      plan.writes.push({ kind: 'firmware', op: 'put', key, object });
      plan.result.firmware.push(structuredClone(object));
    }
    plan.notices.push(notice('put', meta));
  }
  return plan;
}
