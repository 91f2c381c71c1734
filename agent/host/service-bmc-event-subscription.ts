/**
 * @module The management backend's part for BMCEventSubscription: applying a manifest (create;
 * re-applying the same spec is `unchanged`, a different spec is refused as upstream's webhook
 * does), listing, reading and starting a delete. A delete only sets `deletionTimestamp`: the
 * subscription reconciler (bmc-event-subscriptions.ts) removes the BMC's subscription first and
 * then the object, as upstream's finalizer does.
 */
import { ConflictError, NotFoundError } from '../errors.js';
import type { Change, FirmwareReader, HostReader, ResourceStore } from '../store/types.js';
import type { ApplyOutcome } from '../web/backend.js';
import { BMC_EVENT_SUBSCRIPTION_FINALIZER, type BMCEventSubscriptionObject } from './bmc-event-subscription-types.js';
import { applyChange } from './host-status.js';
import { checkBMCEventSubscriptionUpdate } from './validation-bmc-event-subscription.js';

/** What the subscription part of the backend reads. */
export type SubscriptionReader = Pick<HostReader, 'getHost'> & Pick<FirmwareReader, 'getFirmwareObject' | 'listFirmwareObjects'>;

/**
 * Plans one BMCEventSubscription of an apply: the store change (none when unchanged) and the
 * outcome. A subscription being deleted takes no new apply; `version` is a client-named
 * resourceVersion (stale → 409).
 */
export async function planSubscriptionApply(
  store: SubscriptionReader,
  incoming: BMCEventSubscriptionObject,
  prefix: string,
  version: string | undefined,
): Promise<{ change?: Change; outcome: ApplyOutcome }> {
  const { name, namespace } = incoming.metadata;
  const existing = await store.getFirmwareObject('BMCEventSubscription', namespace, name);
  const outcome: ApplyOutcome = { kind: 'BMCEventSubscription', namespace, name, action: 'created', resourceVersion: existing?.metadata.resourceVersion ?? '' };
  if (existing === undefined) {
    if (version !== undefined) throw new ConflictError(`${prefix}metadata.resourceVersion`, `BMCEventSubscription "${name}" does not exist`);
    const object: BMCEventSubscriptionObject = { ...incoming, metadata: { ...incoming.metadata, generation: 1, finalizers: [BMC_EVENT_SUBSCRIPTION_FINALIZER] } };
    return { change: { kind: 'firmware', op: 'put', object, ifVersion: 'absent' }, outcome };
  }
  if (existing.metadata.deletionTimestamp !== undefined) {
    throw new ConflictError(`${prefix}metadata.deletionTimestamp`, `BMCEventSubscription "${name}" is being deleted`);
  }
  if (version !== undefined && version !== existing.metadata.resourceVersion) {
    throw new ConflictError(`${prefix}metadata.resourceVersion`, `stale resourceVersion ${version} (current ${existing.metadata.resourceVersion}): re-read the BMCEventSubscription and apply again`);
  }
  checkBMCEventSubscriptionUpdate(existing, incoming, prefix);
  const { metaChanged, metadata } = applyChange(existing, incoming);
  if (!metaChanged) return { outcome: { ...outcome, action: 'unchanged' } };
  const object: BMCEventSubscriptionObject = { ...existing, metadata };
  return { change: { kind: 'firmware', op: 'put', object, ifVersion: existing.metadata.resourceVersion }, outcome: { ...outcome, action: 'configured' } };
}

/** Every BMCEventSubscription, by namespace then name. */
export function listSubscriptions(store: SubscriptionReader): Promise<BMCEventSubscriptionObject[]> {
  return store.listFirmwareObjects('BMCEventSubscription');
}

/** One BMCEventSubscription (NotFoundError when absent). */
export async function getSubscription(store: SubscriptionReader, namespace: string, name: string): Promise<BMCEventSubscriptionObject> {
  const found = await store.getFirmwareObject('BMCEventSubscription', namespace, name);
  if (found === undefined) throw new NotFoundError('BMCEventSubscription', `${namespace}/${name}`);
  return found;
}

/** Sets `deletionTimestamp` (once) and returns the subscription as stored. */
export async function markSubscriptionDeleted(
  store: SubscriptionReader & Pick<ResourceStore, 'commit'>,
  namespace: string,
  name: string,
  nowIso: string,
): Promise<BMCEventSubscriptionObject> {
  const found = await getSubscription(store, namespace, name);
  if (found.metadata.deletionTimestamp !== undefined) return found;
  const object: BMCEventSubscriptionObject = { ...found, metadata: { ...found.metadata, deletionTimestamp: nowIso } };
  const committed = await store.commit([{ kind: 'firmware', op: 'put', object, ifVersion: found.metadata.resourceVersion }]);
  return (committed.firmware[0] as BMCEventSubscriptionObject | undefined) ?? object;
}
