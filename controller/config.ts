/**
 * @module The fleet controller's configuration file (`rackside controller --config FILE`,
 * docs/controller.md, "Configuration"): YAML decoded into {@link ControllerConfig} with every
 * problem named by its key. Unknown keys are errors, so a misspelt setting never does nothing.
 * @pure
 */
import { parse } from 'yaml';

/** The decoded configuration. */
export interface ControllerConfig {
  /** `host:port` of the HTTP(S) listener (push endpoint, fleet API, page, metrics). */
  listen: { host: string; port: number };
  /**
   * PEM files: serve HTTPS instead of HTTP. `clientCA`: the CA bundle that issues rack client
   * certificates; with it the listener asks every client for a certificate (optional at the TLS
   * layer, so token racks and readers need none) and a push with a verified one authenticates
   * the rack its subject CN names (docs/controller.md, "Rack credentials").
   */
  tls?: { cert: string; key: string; clientCA?: string };
  database: {
    /** libpq-style URL (`postgres://user@host:5432/db`, `postgres://user@/db?host=/run/postgresql`). */
    url: string;
    /** File holding the database password (read at start), when the URL carries none. */
    passwordFile?: string;
    poolSize: number;
  };
  /** File holding the operator token (mutations: commands, rack credentials over the API). */
  operatorTokenFile?: string;
  /** A rack whose last push is older than this is flagged offline. */
  offlineAfterSeconds: number;
  retention: {
    /** Events older than this are deleted. */
    eventMaxAgeDays: number;
    /** At most this many events are kept per rack (the oldest go first). */
    eventsPerRack: number;
    /** Applied-batch records (the idempotency ledger) older than this are deleted. */
    batchLedgerDays: number;
    /** Finished commands older than this are deleted. */
    commandDays: number;
  };
  commands: {
    /** Expiry of a command queued without one. */
    defaultExpirySeconds: number;
    /** Largest manifest accepted by `fleet apply` (bytes). */
    maxManifestBytes: number;
  };
}

/** A configuration file problem; `key` names the setting. */
export class ControllerConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`${key === '' ? 'config' : key}: ${message}`);
    this.name = 'ControllerConfigError';
    this.key = key;
  }
}

type Mapping = Record<string, unknown>;

function mapping(key: string, value: unknown, allowed: readonly string[]): Mapping {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ControllerConfigError(key, 'expected a mapping');
  const m = value as Mapping;
  for (const k of Object.keys(m)) {
    if (!allowed.includes(k)) throw new ControllerConfigError(key === '' ? k : `${key}.${k}`, `unknown setting (known: ${allowed.join(', ')})`);
  }
  return m;
}

function str(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new ControllerConfigError(key, 'expected a non-empty string');
  return value;
}

function absolutePath(key: string, value: unknown): string | undefined {
  const s = str(key, value);
  if (s !== undefined && !s.startsWith('/')) throw new ControllerConfigError(key, `expected an absolute path, got ${JSON.stringify(s)}`);
  return s;
}

function int(key: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ControllerConfigError(key, `expected an integer from ${min} to ${max}`);
  }
  return value;
}

/** Parses `host:port` (`[::1]:9300` for IPv6). */
export function parseListen(key: string, text: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || port > 65535) throw new ControllerConfigError(key, `expected host:port, got ${JSON.stringify(text)}`);
  return { host: match[1] ?? match[2] ?? '', port };
}

function decodeDatabase(value: unknown): ControllerConfig['database'] {
  if (value === undefined) throw new ControllerConfigError('database', 'required: database.url names the PostgreSQL database');
  const d = mapping('database', value, ['url', 'passwordFile', 'poolSize']);
  const url = str('database.url', d.url);
  if (url === undefined) throw new ControllerConfigError('database.url', 'required');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ControllerConfigError('database.url', 'expected a postgres:// URL');
  if (/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/.test(url)) throw new ControllerConfigError('database.url', 'carries a password: put it in database.passwordFile');
  const passwordFile = absolutePath('database.passwordFile', d.passwordFile);
  return { url, ...(passwordFile === undefined ? {} : { passwordFile }), poolSize: int('database.poolSize', d.poolSize, 10, 1, 200) };
}

/**
 * Decodes the YAML text of a controller configuration file.
 * @throws ControllerConfigError naming the first bad key.
 */
export function decodeControllerConfig(text: string): ControllerConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ControllerConfigError('', `not valid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const top = mapping('', doc ?? {}, ['listen', 'tls', 'database', 'operatorTokenFile', 'offlineAfterSeconds', 'retention', 'commands']);
  const listenText = str('listen', top.listen) ?? '127.0.0.1:9300';
  let tls: ControllerConfig['tls'];
  if (top.tls !== undefined) {
    const t = mapping('tls', top.tls, ['cert', 'key', 'clientCA']);
    const cert = absolutePath('tls.cert', t.cert);
    const key = absolutePath('tls.key', t.key);
    const clientCA = absolutePath('tls.clientCA', t.clientCA);
    if (cert === undefined || key === undefined) throw new ControllerConfigError(cert === undefined ? 'tls.cert' : 'tls.key', 'tls.cert and tls.key go together');
    tls = { cert, key, ...(clientCA === undefined ? {} : { clientCA }) };
  }
  const ret = mapping('retention', top.retention ?? {}, ['eventMaxAgeDays', 'eventsPerRack', 'batchLedgerDays', 'commandDays']);
  const cmd = mapping('commands', top.commands ?? {}, ['defaultExpirySeconds', 'maxManifestBytes']);
  const operatorTokenFile = absolutePath('operatorTokenFile', top.operatorTokenFile);
  return {
    listen: parseListen('listen', listenText),
    ...(tls === undefined ? {} : { tls }),
    database: decodeDatabase(top.database),
    ...(operatorTokenFile === undefined ? {} : { operatorTokenFile }),
    offlineAfterSeconds: int('offlineAfterSeconds', top.offlineAfterSeconds, 180, 5, 86_400),
    retention: {
      eventMaxAgeDays: int('retention.eventMaxAgeDays', ret.eventMaxAgeDays, 30, 1, 3650),
      eventsPerRack: int('retention.eventsPerRack', ret.eventsPerRack, 100_000, 100, 100_000_000),
      batchLedgerDays: int('retention.batchLedgerDays', ret.batchLedgerDays, 30, 1, 3650),
      commandDays: int('retention.commandDays', ret.commandDays, 90, 1, 3650),
    },
    commands: {
      defaultExpirySeconds: int('commands.defaultExpirySeconds', cmd.defaultExpirySeconds, 86_400, 1, 31_536_000),
      maxManifestBytes: int('commands.maxManifestBytes', cmd.maxManifestBytes, 262_144, 1024, 4_194_304),
    },
  };
}
