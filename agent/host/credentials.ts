/**
 * @module Reading a host's BMC credentials and config-drive secrets from the store, with
 * upstream's error classes (missing secret → retry in 10 s; empty fields → wait for an edit).
 */
import type { Credentials, HostConfigData } from '../provisioner/index.js';
import type { SecretReader } from '../store/types.js';
import type { BareMetalHost, CredentialsStatus, SecretReference } from './types.js';

/** What these functions read: single Secrets. */
export type CredentialSecrets = Pick<SecretReader, 'getSecret'>;

/** Credentials ready for the provisioner, or why they are not. */
export type CredentialsLookup =
  | { ok: true; credentials: Credentials; status: CredentialsStatus }
  | { ok: false; retry: boolean; message: string };

/** Decodes one base64 value of a Secret's `data`. */
function secretValue(data: Record<string, string>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = data[key];
    if (value !== undefined) return Buffer.from(value, 'base64').toString('utf8');
  }
  return undefined;
}

/** Loads and checks the BMC credentials named by `spec.bmc.credentialsName`. */
export async function lookupCredentials(store: CredentialSecrets, host: BareMetalHost): Promise<CredentialsLookup> {
  const address = host.spec.bmc?.address ?? '';
  const secretName = host.spec.bmc?.credentialsName ?? '';
  if (address === '') return { ok: false, retry: false, message: 'Missing BMC connection detail \'Address\'' };
  if (secretName === '') return { ok: false, retry: false, message: 'Missing BMC connection detail \'CredentialsName\'' };
  const namespace = host.metadata.namespace;
  const secret = await store.getSecret(namespace, secretName);
  if (secret === undefined) {
    return { ok: false, retry: true, message: `failed to fetch BMC credentials: secret ${namespace}/${secretName} not found` };
  }
  const username = secretValue(secret.data, 'username')?.trim() ?? '';
  const password = secretValue(secret.data, 'password')?.trim() ?? '';
  if (username === '') return { ok: false, retry: false, message: `secret ${namespace}/${secretName}: missing BMC credential 'username'` };
  if (password === '') return { ok: false, retry: false, message: `secret ${namespace}/${secretName}: missing BMC credential 'password'` };
  return {
    ok: true,
    credentials: { username, password },
    status: { credentials: { name: secretName, namespace }, credentialsVersion: secret.metadata.resourceVersion },
  };
}

/** Config-drive data read lazily from the host's userData/networkData/metaData secrets. */
export function hostConfigData(store: CredentialSecrets, host: BareMetalHost): HostConfigData {
  const read = async (ref: SecretReference | undefined, key: string): Promise<string> => {
    if (ref === undefined) return '';
    const namespace = ref.namespace ?? host.metadata.namespace;
    const secret = await store.getSecret(namespace, ref.name);
    if (secret === undefined) throw new Error(`secret ${namespace}/${ref.name} (${key}) not found`);
    return secretValue(secret.data, key, 'value') ?? '';
  };
  return {
    userData: () => read(host.spec.userData, 'userData'),
    networkData: async () =>
      host.spec.networkData !== undefined
        ? read(host.spec.networkData, 'networkData')
        : preprovisioningNetworkData(store, host),
    metaData: () => read(host.spec.metaData, 'metaData'),
  };
}

/** The `networkData` key of `spec.preprovisioningNetworkDataName`, or '' when unset. */
export async function preprovisioningNetworkData(store: CredentialSecrets, host: BareMetalHost): Promise<string> {
  const name = host.spec.preprovisioningNetworkDataName ?? '';
  if (name === '') return '';
  const secret = await store.getSecret(host.metadata.namespace, name);
  if (secret === undefined) throw new Error(`preprovisioning network data secret ${host.metadata.namespace}/${name} not found`);
  return secretValue(secret.data, 'networkData') ?? '';
}
