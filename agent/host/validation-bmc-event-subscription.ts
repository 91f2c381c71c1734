/**
 * @module Admission of a metal3 `BMCEventSubscription` manifest, with upstream's webhook rules:
 * `spec.hostName` and `spec.destination` are required; the destination must be an absolute URL
 * (and a host-only URL needs its trailing slash, `https://host/`); `spec.httpHeadersRef` names a
 * Secret in the subscription's own namespace; the spec cannot change once created (delete and
 * re-create instead). Unknown fields are refused with their path; `status` and server-owned
 * metadata in the input are ignored.
 * @pure
 */
import { ConflictError } from '../errors.js';
import type { BMCEventSubscriptionObject, BMCEventSubscriptionSpec } from './bmc-event-subscription-types.js';
import { asObject, fail, fieldPath, present, readObject, readString, rejectUnknown, requireString } from './decode.js';
import { checkTypeMeta, decodeObjectMeta, rootPath } from './validation-meta.js';

const API_VERSION = 'metal3.io/v1alpha1';

/** Upstream's destination rule: an absolute http(s) URL; a host-only one keeps its trailing slash. */
export function destinationProblem(destination: string): string | undefined {
  let url: URL;
  try {
    url = new URL(destination);
  } catch {
    return `must be an absolute URL, got ${JSON.stringify(destination)}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, got scheme "${url.protocol.slice(0, -1)}"`;
  if (!/^[a-z]+:\/\/[^/]+\//i.test(destination)) return 'hostname-only destination must have a trailing slash';
  return undefined;
}

function decodeSpec(raw: Record<string, unknown>, specPath: string, namespace: string): BMCEventSubscriptionSpec {
  rejectUnknown(raw, ['hostName', 'destination', 'context', 'httpHeadersRef'], specPath);
  const hostName = requireString(raw, 'hostName', specPath, true);
  const destination = requireString(raw, 'destination', specPath, true);
  const problem = destinationProblem(destination);
  if (problem !== undefined) fail(fieldPath(specPath, 'destination'), problem);
  const spec: BMCEventSubscriptionSpec = { hostName, destination };
  const context = readString(raw, 'context', specPath);
  if (context !== undefined) spec.context = context;
  const refPath = fieldPath(specPath, 'httpHeadersRef');
  const ref = readObject(raw, 'httpHeadersRef', specPath);
  if (ref !== undefined) {
    rejectUnknown(ref, ['name', 'namespace'], refPath);
    const name = requireString(ref, 'name', refPath, true);
    const refNamespace = readString(ref, 'namespace', refPath);
    if (refNamespace !== undefined && refNamespace !== '' && refNamespace !== namespace) {
      fail(fieldPath(refPath, 'namespace'), `the headers Secret must be in the subscription's namespace "${namespace}", got "${refNamespace}"`);
    }
    spec.httpHeadersRef = { name, namespace };
  }
  return spec;
}

/**
 * Decodes a BMCEventSubscription manifest (throws ValidationError naming the field path;
 * `fieldPrefix`, e.g. `items[2].`, is prepended to every path). The result has an empty status
 * and empty server-owned metadata.
 */
export function decodeBMCEventSubscription(input: unknown, fieldPrefix?: string): BMCEventSubscriptionObject {
  const root = rootPath(fieldPrefix);
  const obj = asObject(input, root);
  rejectUnknown(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status'], root);
  checkTypeMeta(obj, root, API_VERSION, 'BMCEventSubscription');
  if (present(obj, 'metadata') === undefined) fail(fieldPath(root, 'metadata'), 'required field is missing');
  const metadata = decodeObjectMeta(obj.metadata, fieldPath(root, 'metadata'));
  const specPath = fieldPath(root, 'spec');
  const specRaw = present(obj, 'spec');
  if (specRaw === undefined) fail(specPath, 'required field is missing');
  const statusRaw = present(obj, 'status');
  if (statusRaw !== undefined) asObject(statusRaw, fieldPath(root, 'status'));
  const spec = decodeSpec(asObject(specRaw, specPath), specPath, metadata.namespace);
  return { apiVersion: API_VERSION, kind: 'BMCEventSubscription', metadata, spec, status: {} };
}

/** Upstream's update rule: the spec of a subscription never changes (ConflictError at `spec`). */
export function checkBMCEventSubscriptionUpdate(existing: BMCEventSubscriptionObject, incoming: BMCEventSubscriptionObject, prefix = ''): void {
  if (JSON.stringify(existing.spec) !== JSON.stringify(incoming.spec)) {
    throw new ConflictError(`${prefix}spec`, `BMCEventSubscription "${existing.metadata.name}" cannot be changed; delete it and create it again`);
  }
}
