/**
 * @module The files of a `config-2` config drive in the layout cloud-init's ConfigDrive
 * datasource (and Ignition's OpenStack provider) read: `openstack/latest/meta_data.json`,
 * `openstack/latest/user_data` (verbatim, any format) and `openstack/latest/network_data.json`.
 * meta_data follows metal3's defaults (`uuid` = BareMetalHost UID, `metal3-namespace`,
 * `metal3-name`, `local-hostname`, `local_hostname`, `name`), then `hostname` and
 * `public_keys` (cloud-init reads both), then the user's metaData merged over them.
 * @pure
 */

/** What goes on a host's config drive. */
export interface ConfigDriveContent {
  /** The BareMetalHost UID. */
  uuid: string;
  /** The BareMetalHost name (also the default hostname). */
  name: string;
  namespace?: string;
  hostname?: string;
  /** SSH public keys: a list (named `key-0`, `key-1`, …) or name → key. */
  publicKeys?: readonly string[] | Record<string, string>;
  /** The userData secret, written verbatim; absent: no user_data file. */
  userData?: string | Uint8Array;
  /** The networkData secret (already parsed); absent: no network_data.json. */
  networkData?: unknown;
  /** The metaData secret (already parsed), merged over the defaults. */
  metaData?: Record<string, unknown>;
}

/** One file of the drive, path relative to its root. */
export interface ConfigDriveFile {
  path: string;
  data: Uint8Array;
}

/** Thrown for content that cannot go on a config drive. */
export class ConfigDriveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigDriveError';
  }
}

const encoder = new TextEncoder();

function json(value: unknown, what: string): Uint8Array {
  const text = JSON.stringify(value);
  if (typeof text !== 'string') throw new ConfigDriveError(`${what} must be JSON-serializable`);
  return encoder.encode(text);
}

function isKeyList(v: readonly string[] | Record<string, string>): v is readonly string[] {
  return Array.isArray(v);
}

/** Returns the meta_data.json object for `c`. */
export function renderMetaData(c: ConfigDriveContent): Record<string, unknown> {
  if (c.uuid.trim() === '' || c.name.trim() === '') throw new ConfigDriveError('uuid and name are required');
  const hostname = c.hostname ?? c.name;
  const given = c.publicKeys;
  const keys = given === undefined ? undefined : isKeyList(given) ? Object.fromEntries(given.map((k, i) => [`key-${i}`, k])) : Object.fromEntries(Object.entries(given));
  return {
    uuid: c.uuid,
    ...(c.namespace === undefined ? {} : { 'metal3-namespace': c.namespace }),
    'metal3-name': c.name,
    'local-hostname': hostname,
    local_hostname: hostname,
    name: c.name,
    hostname,
    ...(keys === undefined ? {} : { public_keys: keys }),
    ...(c.metaData ?? {}),
  };
}

/** Returns the drive's files, sorted by path. */
export function renderConfigDriveFiles(c: ConfigDriveContent): ConfigDriveFile[] {
  const files: ConfigDriveFile[] = [{ path: 'openstack/latest/meta_data.json', data: json(renderMetaData(c), 'metaData') }];
  if (c.networkData !== undefined) files.push({ path: 'openstack/latest/network_data.json', data: json(c.networkData, 'networkData') });
  if (c.userData !== undefined) files.push({ path: 'openstack/latest/user_data', data: typeof c.userData === 'string' ? encoder.encode(c.userData) : c.userData });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
