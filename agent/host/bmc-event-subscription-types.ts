/**
 * @module metal3.io/v1alpha1 `BMCEventSubscription`, with upstream JSON field names: a Redfish
 * event subscription on the BMC of the host `spec.hostName` (same namespace), sending events to
 * `spec.destination` with `spec.context` and the HTTP headers held in the Secret
 * `spec.httpHeadersRef`. The agent writes `status.subscriptionID` (the BMC's id) and
 * `status.error`. Kept by the store in the `firmware` sublevel under its own kind
 * (`BMCEventSubscription/<namespace>/<name>`: new keys only, no layout change).
 * Types and constants only.
 * @pure
 */
import type { ObjectMeta } from './types.js';

/** The finalizer the agent keeps on a subscription until the BMC no longer has it. */
export const BMC_EVENT_SUBSCRIPTION_FINALIZER = 'bmceventsubscription.metal3.io';

/** A Secret reference (`corev1.SecretReference`). */
export interface SecretReference {
  name: string;
  namespace?: string;
}

/** `spec` of a BMCEventSubscription (immutable once created, as upstream's webhook rules). */
export interface BMCEventSubscriptionSpec {
  /** The BareMetalHost whose BMC sends the events. */
  hostName: string;
  /** Where the BMC sends events (an absolute URL). */
  destination: string;
  /** Free text the BMC passes back with every event. */
  context?: string;
  /** A Secret whose keys and values become HTTP headers on every event. */
  httpHeadersRef?: SecretReference;
}

/** `status` of a BMCEventSubscription (written by the agent only). */
export interface BMCEventSubscriptionStatus {
  subscriptionID?: string;
  error?: string;
}

/** The BMCEventSubscription resource. */
export interface BMCEventSubscriptionObject {
  apiVersion: 'metal3.io/v1alpha1';
  kind: 'BMCEventSubscription';
  metadata: ObjectMeta;
  spec: BMCEventSubscriptionSpec;
  status: BMCEventSubscriptionStatus;
}
