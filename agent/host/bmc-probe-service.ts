/**
 * @module `POST /api/v1/bmc/probe` behind the API: decodes the request (`address`; optional
 * `credentials: {username, password}` or `credentialsName` of a stored Secret with `username`
 * and `password` keys, in `namespace`, default `default`; `insecure`), reads the Secret, and runs
 * the capability probe (drivers/probe.ts) from the agent. The probe is advice: nothing is written.
 */
import { BmcAddressError, probeBmc, type ProbeReport } from '../../drivers/index.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { SecretReader } from '../store/types.js';
import { asObject, readBool, readObject, readString, rejectUnknown, requireString } from './decode.js';

/** A decoded probe request. */
export interface ProbeRequest {
  address: string;
  credentials?: { username: string; password: string };
  credentialsName?: string;
  namespace: string;
  insecure: boolean;
}

/** Decodes the request body (ValidationError naming the field). */
export function decodeProbeRequest(body: unknown): ProbeRequest {
  const obj = asObject(body, 'body');
  rejectUnknown(obj, ['address', 'credentials', 'credentialsName', 'namespace', 'insecure'], '');
  const address = requireString(obj, 'address', '', true);
  const request: ProbeRequest = { address, namespace: readString(obj, 'namespace', '') ?? 'default', insecure: readBool(obj, 'insecure', '') ?? false };
  const credentials = readObject(obj, 'credentials', '');
  const credentialsName = readString(obj, 'credentialsName', '');
  if (credentials !== undefined && credentialsName !== undefined) throw new ValidationError('credentialsName', 'give credentials or credentialsName, not both');
  if (credentials !== undefined) {
    rejectUnknown(credentials, ['username', 'password'], 'credentials');
    request.credentials = { username: requireString(credentials, 'username', 'credentials', true), password: requireString(credentials, 'password', 'credentials') };
  }
  if (credentialsName !== undefined && credentialsName !== '') request.credentialsName = credentialsName;
  return request;
}

function secretText(data: Record<string, string>, key: string): string {
  const value = data[key];
  return value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8').trim();
}

/** Runs the probe for a decoded request; a named Secret that does not exist is a 404. */
export async function runProbe(store: Pick<SecretReader, 'getSecret'>, request: ProbeRequest, probe: typeof probeBmc = probeBmc): Promise<ProbeReport> {
  let credentials = request.credentials;
  if (request.credentialsName !== undefined) {
    const secret = await store.getSecret(request.namespace, request.credentialsName);
    if (secret === undefined) throw new NotFoundError('Secret', `${request.namespace}/${request.credentialsName}`);
    credentials = { username: secretText(secret.data, 'username'), password: secretText(secret.data, 'password') };
  }
  try {
    return await probe({ address: request.address, ...(credentials ?? {}), insecure: request.insecure });
  } catch (error) {
    if (error instanceof BmcAddressError) throw new ValidationError('address', error.message);
    throw error;
  }
}
