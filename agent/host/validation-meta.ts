/**
 * @module Decoding of Kubernetes object metadata and of `v1` Secrets from untrusted JSON,
 * with the apiserver's name rules (RFC 1123 subdomain names, RFC 1123 label namespaces,
 * qualified label/annotation keys). Server-owned metadata in the input (uid,
 * resourceVersion, timestamps, generation, finalizers, managedFields…) is accepted, as
 * `kubectl get -o yaml` output carries it, but not kept: the store fills those fields.
 * @pure
 */
import type { ObjectMeta, Secret } from './types.js';
import {
  asObject,
  fail,
  fieldPath,
  keyPath,
  readString,
  readStringMap,
  rejectUnknown,
  type JsonObject,
} from './decode.js';

/** RFC 1123 label: lowercase alphanumerics and '-', alphanumeric at both ends. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: dot-separated labels. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified key, and a label value (may be empty). */
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** Secret data keys (`IsConfigMapKey`). */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
/** Standard base64 with padding, as Kubernetes serialises `[]byte`. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Metadata fields the user sets. */
const USER_METADATA = ['name', 'namespace', 'annotations', 'labels'] as const;
/** Server-owned metadata: accepted in input, ignored. */
export const SERVER_OWNED_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'finalizers',
  'managedFields',
  'selfLink',
] as const;

/** The namespace used when a manifest names none (as kubectl does). */
export const DEFAULT_NAMESPACE = 'default';

/** Fails unless `name` is an RFC 1123 subdomain of at most 253 characters. */
export function checkSubdomainName(name: string, path: string): void {
  if (name === '') fail(path, 'must not be empty');
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    fail(path, `"${name}" is not a valid name: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (RFC 1123 subdomain)`);
  }
}

/** Fails unless `key` is a qualified name: optional `prefix/` (a subdomain) and a name of ≤ 63 characters. */
function checkQualifiedKey(key: string, path: string): void {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefixOk = prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix));
  if (!prefixOk || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    fail(path, 'invalid key: use an optional DNS-subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit');
  }
}

/** Options of {@link decodeObjectMeta}. */
export interface MetaRules {
  /** Refuse names that are UUIDs (the BareMetalHost webhook's rule: they clash with backend node ids). */
  forbidUuidName?: boolean;
}

/**
 * Decodes `metadata` at `path`: name (RFC 1123 subdomain, required), namespace (RFC 1123
 * label, default `default`), labels and annotations (string maps with qualified keys; label
 * values ≤ 63 characters). Server-owned fields are accepted and left empty/zero.
 */
export function decodeObjectMeta(value: unknown, path: string, rules: MetaRules = {}): ObjectMeta {
  const obj = asObject(value, path);
  rejectUnknown(obj, [...USER_METADATA, ...SERVER_OWNED_METADATA], path);
  const name = readString(obj, 'name', path);
  if (name === undefined) fail(fieldPath(path, 'name'), 'required field is missing');
  checkSubdomainName(name, fieldPath(path, 'name'));
  if (rules.forbidUuidName === true && UUID.test(name)) fail(fieldPath(path, 'name'), 'a BareMetalHost name cannot be a UUID');
  const namespace = readString(obj, 'namespace', path) ?? DEFAULT_NAMESPACE;
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    fail(fieldPath(path, 'namespace'), `"${namespace}" is not a valid namespace: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (RFC 1123 label)`);
  }
  const meta: ObjectMeta = { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' };
  const labels = readStringMap(obj, 'labels', path);
  if (labels !== undefined) {
    for (const [key, v] of Object.entries(labels)) {
      const at = keyPath(fieldPath(path, 'labels'), key);
      checkQualifiedKey(key, at);
      if (v !== '' && (v.length > 63 || !QUALIFIED_NAME.test(v))) fail(at, 'invalid label value: at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit');
    }
    meta.labels = labels;
  }
  const annotations = readStringMap(obj, 'annotations', path);
  if (annotations !== undefined) {
    for (const key of Object.keys(annotations)) checkQualifiedKey(key, keyPath(fieldPath(path, 'annotations'), key));
    meta.annotations = annotations;
  }
  return meta;
}

/** Fails unless `obj.apiVersion` and `obj.kind` are exactly the expected values. */
export function checkTypeMeta(obj: JsonObject, root: string, apiVersion: string, kind: string): void {
  const version = readString(obj, 'apiVersion', root);
  if (version !== apiVersion) fail(fieldPath(root, 'apiVersion'), version === undefined ? `required field is missing; must be "${apiVersion}"` : `must be "${apiVersion}", got "${version}"`);
  const gotKind = readString(obj, 'kind', root);
  if (gotKind !== kind) fail(fieldPath(root, 'kind'), gotKind === undefined ? `required field is missing; must be "${kind}"` : `must be "${kind}", got "${gotKind}"`);
}

/** The root path for a field prefix: `items[2].` → `items[2]`. */
export function rootPath(fieldPrefix: string | undefined): string {
  return (fieldPrefix ?? '').replace(/\.$/, '');
}

/**
 * Decodes a `v1` Secret: `data` values must be valid base64; `stringData` values are encoded
 * and merged over `data`, as the apiserver does; `type` defaults to `Opaque`; unknown fields
 * are refused.
 * Server-owned metadata is left empty for the caller to fill. Paths get `fieldPrefix`.
 */
export function decodeSecret(input: unknown, fieldPrefix?: string): Secret {
  const root = rootPath(fieldPrefix);
  const obj = asObject(input, root);
  rejectUnknown(obj, ['apiVersion', 'kind', 'metadata', 'type', 'data', 'stringData'], root);
  checkTypeMeta(obj, root, 'v1', 'Secret');
  const metadata = obj.metadata;
  if (metadata === undefined || metadata === null) fail(fieldPath(root, 'metadata'), 'required field is missing');
  const meta = decodeObjectMeta(metadata, fieldPath(root, 'metadata'));
  const data: Record<string, string> = {};
  const dataPath = fieldPath(root, 'data');
  for (const [key, value] of Object.entries(readStringMap(obj, 'data', root) ?? {})) {
    const at = keyPath(dataPath, key);
    if (key.length > 253 || !SECRET_KEY.test(key)) fail(at, 'invalid key: use letters, digits, "-", "_" or "."');
    if (!BASE64.test(value)) fail(at, 'must be base64-encoded (use stringData for plain text)');
    data[key] = value;
  }
  const stringDataPath = fieldPath(root, 'stringData');
  for (const [key, value] of Object.entries(readStringMap(obj, 'stringData', root) ?? {})) {
    if (key.length > 253 || !SECRET_KEY.test(key)) fail(keyPath(stringDataPath, key), 'invalid key: use letters, digits, "-", "_" or "."');
    data[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  const type = readString(obj, 'type', root);
  // The apiserver defaults an empty type to Opaque.
  return { apiVersion: 'v1', kind: 'Secret', metadata: meta, type: type === undefined || type === '' ? 'Opaque' : type, data };
}
