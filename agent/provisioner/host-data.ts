/**
 * @module Builds a provisioner's {@link HostData} from a BareMetalHost (metal3 `BuildHostData`,
 * `BuildHostDataNoBMC`).
 * @pure
 */
import type { BareMetalHost } from '../host/types.js';
import type { Credentials, HostData } from './provisioner.js';

/** HostData for a host whose BMC credentials are known (whitespace trimmed, as upstream). */
export function buildHostData(host: BareMetalHost, credentials: Credentials): HostData {
  return {
    ...buildHostDataNoBMC(host),
    bmcAddress: host.spec.bmc?.address ?? '',
    bmcCredentials: { username: credentials.username.trim(), password: credentials.password.trim() },
    disableCertificateVerification: host.spec.bmc?.disableCertificateVerification ?? false,
    bootMACAddress: host.spec.bootMACAddress ?? '',
  };
}

/** HostData without BMC details: only the object metadata and the provisioner id. */
export function buildHostDataNoBMC(host: BareMetalHost): HostData {
  const meta = host.metadata;
  return {
    objectMeta: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      annotations: { ...(meta.annotations ?? {}) },
      labels: { ...(meta.labels ?? {}) },
    },
    bmcAddress: '',
    bmcCredentials: { username: '', password: '' },
    disableCertificateVerification: false,
    bootMACAddress: '',
    provisionerID: host.status.provisioning.ID,
  };
}
