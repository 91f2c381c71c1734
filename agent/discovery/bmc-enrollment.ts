/**
 * @module Turning a BMC made known by discovery into metal3's `spec.bmc` (docs/discovery.md,
 * "In-band BMC enlistment"): the credentials become a Secret (sealed by the store like every
 * BMC Secret), the address becomes `ipmi://ADDR` (`ipmi://[ADDR]` for IPv6) and `credentialsName`
 * names the Secret. With `discovery.approve: manual` the same BMC is only proposed, in two
 * annotations, until `rackside enroll` applies it ({@link enrollPlan}). Nothing here reads a clock
 * or the store.
 * @pure
 */
import type { BareMetalHost, Secret } from '../host/types.js';
import { unusableBmcAddress, type BmcReport } from './report.js';

/** Annotations of a discovered host (docs/discovery.md, "What is stored"). */
export const DiscoveryAnnotations = {
  /** RFC 3339 time the host was recorded. */
  discoveredAt: 'rackside.io/discovered-at',
  /** `ipmi://ADDR` found in-band, waiting for `rackside enroll` (approve: manual). */
  proposedBmcAddress: 'rackside.io/proposed-bmc-address',
  /** The Secret holding the in-band user's credentials, waiting likewise. */
  proposedBmcCredentials: 'rackside.io/proposed-bmc-credentials',
} as const;

/** The name of a discovered host's BMC Secret. */
export function bmcSecretName(hostName: string): string {
  return `${hostName}-bmc-secret`;
}

/** A BMC Secret (`username`, `password`, base64 like any Kubernetes Secret). */
export function bmcSecret(namespace: string, hostName: string, username: string, password: string): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: bmcSecretName(hostName), namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '',
      labels: { 'rackside.io/discovered': 'true' },
    },
    type: 'Opaque',
    data: { username: Buffer.from(username, 'utf8').toString('base64'), password: Buffer.from(password, 'utf8').toString('base64') },
  };
}

/** The `spec.bmc.address` of an IPMI BMC at `address`. */
export function ipmiAddressUrl(address: string): string {
  return address.includes(':') ? `ipmi://[${address}]` : `ipmi://${address}`;
}

/** The BMC address to use from an `ok` report, or why there is none (every address unusable). */
export function chooseBmcAddress(bmc: Extract<BmcReport, { kind: 'ok' }>): { url: string } | { unusable: string } {
  const v4 = unusableBmcAddress(bmc.address);
  if (v4 === undefined) return { url: ipmiAddressUrl(bmc.address) };
  const v6 = bmc.ipv6.find((a) => unusableBmcAddress(a) === undefined);
  if (v6 !== undefined) return { url: ipmiAddressUrl(v6) };
  return { unusable: v4 };
}

/** Credentials given to `rackside enroll` for a host without an in-band path. */
export interface EnrollInput {
  /** A BMC address as `spec.bmc.address` takes it (`ipmi://…`, `redfish://…`, or a bare host for IPMI). */
  address?: string;
  username?: string;
  password?: string;
}

/** What enrolling a host writes: the host (with `spec.bmc`, proposals removed) and maybe a Secret. */
export interface EnrollPlan {
  host: BareMetalHost;
  secret?: Secret;
}

/** Thrown when a host cannot be enrolled as asked; `field` names the input at fault. */
export class EnrollError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'EnrollError';
  }
}

/**
 * Plans `rackside enroll`: with an address (and username and password) those are used, else the
 * host's proposed BMC. The host must have no BMC yet. Returns a modified copy; the caller commits
 * host and Secret in one commit.
 */
export function enrollPlan(stored: BareMetalHost, input: EnrollInput): EnrollPlan {
  if (stored.spec.bmc !== undefined && stored.spec.bmc.address !== '') throw new EnrollError('spec.bmc', `host ${stored.metadata.name} already has a BMC (${stored.spec.bmc.address})`);
  const host = structuredClone(stored);
  const annotations = { ...(host.metadata.annotations ?? {}) };
  const name = host.metadata.name;
  let plan: EnrollPlan;
  if (input.address !== undefined) {
    if (input.username === undefined || input.username === '') throw new EnrollError('username', 'an enroll with a BMC address needs a username');
    if (input.password === undefined || input.password === '') throw new EnrollError('password', 'an enroll with a BMC address needs a password');
    const address = input.address.includes('://') ? input.address : ipmiAddressUrl(input.address);
    host.spec.bmc = { address, credentialsName: bmcSecretName(name) };
    plan = { host, secret: bmcSecret(host.metadata.namespace, name, input.username, input.password) };
  } else {
    const proposed = annotations[DiscoveryAnnotations.proposedBmcAddress];
    const credentials = annotations[DiscoveryAnnotations.proposedBmcCredentials];
    if (proposed === undefined || credentials === undefined) {
      throw new EnrollError('bmc', `host ${name} has no proposed BMC: give --bmc ADDRESS --username U --password-file F`);
    }
    host.spec.bmc = { address: proposed, credentialsName: credentials };
    plan = { host };
  }
  Reflect.deleteProperty(annotations, DiscoveryAnnotations.proposedBmcAddress);
  Reflect.deleteProperty(annotations, DiscoveryAnnotations.proposedBmcCredentials);
  host.metadata.annotations = annotations;
  host.metadata.generation += 1;
  return plan;
}
