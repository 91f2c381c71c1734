/**
 * @module The agent's configuration: the {@link Config} type, its defaults, and the decoder
 * from the YAML file (default `/etc/rackside/rackside.yaml`). Decoding reports every wrong key
 * at once, each with its path, what was expected and what was found, and rejects unknown keys.
 * The caller reads the file and supplies host-derived defaults (no I/O here).
 * docs/rackside.example.yaml documents every key.
 * @pure
 */
import { LineCounter, parseDocument } from 'yaml';
import { ConfigReader, joinPath, optional, parseCidr, readCipherSuites, type ConfigProblem, type ListenAddress } from './config-decode.js';
import { decodeDhcp6, parseIpv6Cidr, type Dhcp6Config } from './config-dhcp6.js';
import { decodeDhcp, type DhcpConfig } from './config-dhcp.js';
import { decodeController, type ControllerSyncConfig } from './config-controller.js';
import { decodeDiscovery, type DiscoveryConfig } from './config-discovery.js';
import { decodeGovernor, type GovernorConfig } from './config-governor.js';
import { decodeHttp, type HttpConfig } from './config-http.js';
import { isJsonObject } from './json-value.js';

export type { ConfigProblem, ListenAddress } from './config-decode.js';
export type { DhcpConfig, DhcpMode, DhcpRange } from './config-dhcp.js';
export type { Dhcp6Config } from './config-dhcp6.js';
export type { DiscoveryConfig } from './config-discovery.js';
export type { GovernorConfig } from './config-governor.js';
export type { BootHttpTls, HttpConfig } from './config-http.js';

/** Where the agent looks for its config when `--config` is not given. */
export const DEFAULT_CONFIG_PATH = '/etc/rackside/rackside.yaml';

/** Which `Provisioner` implementation drives hosts (docs/architecture.md, "Provisioner backend"). */
export type ProvisionerKind = 'local' | 'fixture' | 'demo';
/** pino log levels. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The decoded configuration, every default filled in. Optional sections are `undefined` when off. */
export interface Config {
  /**
   * `rack`: the rack name pushed to the fleet controller (must match the rack its token was issued
   * for); `statusUrl`: this agent's status page address as operators reach it, linked from the
   * fleet page.
   */
  agent: { id: string; stateDir: string; rack?: string; statusUrl?: string };
  provisioner: ProvisionerKind;
  /**
   * The top-level sections the file spelled out, in file order (absent: none, or a config built
   * in code). The agent warns about those its provisioner does not use
   * (agent/provisioner/backends.ts `unusedConfigSections`).
   */
  sections?: readonly string[];
  /**
   * `tls` makes the management listener HTTPS; with `clientCA` it also requires a client
   * certificate signed by that CA (mutual TLS) before any request is read.
   */
  management: { listen: ListenAddress; token?: string; tls?: { cert: string; key: string; clientCA?: string } };
  /**
   * `provisioning.address` is one address or a list of at most one IPv4 and one IPv6 address,
   * each optionally `/PREFIX`: `address`/`prefixLength` are the IPv4 one (DHCPv4, boot URLs),
   * `address6`/`prefixLength6` the IPv6 one (DHCPv6; prefix 64 when left out).
   */
  provisioning: { interface?: string; address?: string; prefixLength?: number; address6?: string; prefixLength6?: number };
  dhcp: DhcpConfig;
  /** The DHCPv6 server (config-dhcp6.ts, docs/ipv6.md); absent when the file has no `dhcp6` section: off. */
  dhcp6?: Dhcp6Config;
  /** What happens to hosts discovered under `dhcp.unknownHosts: discover` (config-discovery.ts, docs/discovery.md). */
  discovery: DiscoveryConfig;
  /**
   * `maxTransfers`: concurrent TFTP transfers before requests are dropped (clients retry); default
   * 1024. `transferThread`: `on` (default) runs each transfer's ACKs, windows and retransmissions
   * on the native addon's transfer thread (bootsvc/tftp/transfer-pump.ts) when it is built; `off`
   * answers every ACK from the event loop (a way out should the thread misbehave).
   */
  tftp: { listen: ListenAddress; root?: string; maxTransfers: number; transferThread: 'on' | 'off' };
  /** Boot HTTP and boot HTTPS (config-http.ts). */
  http: HttpConfig;
  /**
   * `ramdisk.kernelParams`: extra kernel arguments for every ramdisk network boot, appended after
   * rackside's own (Ironic's `kernel_append_params`), e.g. `no_timer_check nomodeset`.
   */
  images: { cacheDir: string; ramdisk: { kernel?: string; modules?: string; kernelParams?: string[] } };
  /**
   * `ipmi.cipherSuites`: the RMCP+ cipher suites every `ipmi://` BMC may use, strongest first
   * (17 and 3 only; absent: `[17, 3]`); a host's `rackside.io/ipmi-cipher-suite` annotation wins.
   * `powerStateChangeTimeoutSeconds`: how long a BMC may take to show a requested power state
   * (Ironic's `power_state_change_timeout`; absent: 60).
   */
  bmc: { concurrency: number; powerPollSeconds: number; ipmi?: { cipherSuites: number[] }; powerStateChangeTimeoutSeconds?: number };
  controller?: ControllerSyncConfig;
  ssh?: {
    listen: ListenAddress;
    hostKey: string;
    authorizedKeys: string;
    tunnel?: { host: string; port: number; user: string; hostKey?: string; identity: string; remotePort: number };
  };
  /**
   * `provisioningLimit`: hosts inspecting, provisioning or deprovisioning at once (upstream BMO's
   * PROVISIONING_LIMIT, default 20); the rest wait as `delayed`. Virtual-media hosts are exempt.
   */
  reconcile: { concurrency: number; timeScale: number; provisioningLimit: number };
  /** Budgets the boot governor paces power-ons by (config-governor.ts); absent: no governor. */
  governor?: GovernorConfig;
  log: { level: LogLevel };
}

/** Defaults that depend on the machine, supplied by the caller (agent/main.ts). */
export interface ConfigDefaults {
  /** `agent.id` when not set: normally the host name. */
  agentId: string;
}

/** Stable code of {@link ConfigError}. */
export const CONFIG_ERROR_CODE = 'RACKSIDE_ERR_CONFIG';

/** The config is unusable; `problems` lists every wrong key. The CLI exits with code 2. */
export class ConfigError extends Error {
  readonly code = CONFIG_ERROR_CODE;
  readonly problems: ConfigProblem[];
  constructor(sourceName: string, problems: ConfigProblem[]) {
    super(formatConfigProblems(sourceName, problems));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Renders problems one per line: `FILE:LINE: PATH: expected X, got Y`. */
export function formatConfigProblems(sourceName: string, problems: readonly ConfigProblem[]): string {
  const lines = problems.map((p) => {
    const where = p.line === undefined ? sourceName : `${sourceName}:${p.line}`;
    return `  ${where}: ${p.path === '' ? '(top level)' : p.path}: expected ${p.expected}, got ${p.got}`;
  });
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return `invalid config ${sourceName} (${count}):\n${lines.join('\n')}`;
}

/**
 * Default `reconcile.concurrency`: host steps working at once. A step waiting on its BMC lends
 * its slot meanwhile (agent/host/reconcile-slot.ts), so this bounds the event loop's and the
 * store's work, not the BMCs talked to: 1000 BMCs answering in 300 ms register in about 35 s
 * at 4 (docs/PERFORMANCE.md, "1000 hosts per agent" → registration).
 */
export const DEFAULT_RECONCILE_CONCURRENCY = 4;

const SECTIONS = [
  'agent', 'provisioner', 'management', 'provisioning', 'dhcp', 'dhcp6', 'discovery', 'tftp', 'http', 'images',
  'bmc', 'controller', 'ssh', 'reconcile', 'governor', 'log',
] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,62})$/;
const STATE_DIR = '/var/lib/rackside';

/**
 * Decodes an already-parsed YAML value into a {@link Config}, filling defaults.
 * @throws ConfigError listing every problem when anything is wrong.
 */
export function decodeConfig(input: unknown, defaults: ConfigDefaults): Config {
  const r = new ConfigReader();
  const top = r.mapping('', input, SECTIONS);
  const agentIn = r.mapping('agent', top.agent, ['id', 'stateDir', 'rack', 'statusUrl']);
  const stateDir = r.absolutePath('agent.stateDir', agentIn.stateDir, STATE_DIR);
  const rack = r.matching('agent.rack', agentIn.rack, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'a rack name of lower-case letters, digits and "-" (max 63)');
  const statusUrl = r.httpUrl('agent.statusUrl', agentIn.statusUrl, 'the status page needs no credentials');
  const agent = {
    id: r.matching('agent.id', agentIn.id, NAME_PATTERN, 'a name of letters, digits, ".", "_", "-" (max 63)') ??
      defaults.agentId,
    stateDir,
    ...optional('rack', rack),
    ...optional('statusUrl', statusUrl),
  };
  const provisioner = r.oneOf('provisioner', top.provisioner, ['local', 'fixture', 'demo'], 'local');

  const managementIn = r.mapping('management', top.management, ['listen', 'token', 'tls']);
  const token = r.matching('management.token', managementIn.token, /^\S{16,}$/, 'a token of at least 16 characters without spaces');
  const managementTls = decodeManagementTls(r, managementIn.tls);
  const management = {
    listen: r.listen('management.listen', managementIn.listen, '127.0.0.1:8080'),
    ...(token === undefined ? {} : { token }),
    ...(managementTls === undefined ? {} : { tls: managementTls }),
  };

  const provisioning = decodeProvisioning(r, top.provisioning);
  const dhcp = decodeDhcp(r, top.dhcp, provisioning);
  const dhcp6 = decodeDhcp6(r, top.dhcp6, provisioning);
  const discovery = decodeDiscovery(r, top.discovery, dhcp.unknownHosts);

  // With an IPv6 provisioning address, TFTP and boot HTTP listen dual-stack on `::` by default
  // (IPv4 clients still reach them; docs/ipv6.md).
  const anyHost = provisioning.address6 === undefined ? '0.0.0.0' : '[::]';
  const tftpIn = r.mapping('tftp', top.tftp, ['listen', 'root', 'maxTransfers', 'transferThread']);
  const tftp = {
    listen: r.listen('tftp.listen', tftpIn.listen, `${anyHost}:69`), ...optional('root', r.absolutePath('tftp.root', tftpIn.root)),
    maxTransfers: r.integer('tftp.maxTransfers', tftpIn.maxTransfers, 1024, 1, 16384),
    transferThread: r.oneOf('tftp.transferThread', tftpIn.transferThread, ['on', 'off'], 'on'),
  };
  const http = decodeHttp(r, top.http, anyHost);

  const imagesIn = r.mapping('images', top.images, ['cacheDir', 'ramdisk']);
  const ramdiskIn = r.mapping('images.ramdisk', imagesIn.ramdisk, ['kernel', 'modules', 'kernelParams']);
  // Kernel arguments: printable, no quotes or iPXE/GRUB metacharacters, so they go into scripts verbatim.
  const kernelParamsText = r.matching('images.ramdisk.kernelParams', ramdiskIn.kernelParams, /^[A-Za-z0-9_.,:=/+@-]+( [A-Za-z0-9_.,:=/+@-]+)*$/, 'kernel arguments separated by single spaces (letters, digits and _ . , : = / + @ -)');
  const images = {
    cacheDir: r.absolutePath('images.cacheDir', imagesIn.cacheDir, `${stateDir}/images`),
    ramdisk: {
      ...optional('kernel', r.absolutePath('images.ramdisk.kernel', ramdiskIn.kernel)),
      ...optional('modules', r.absolutePath('images.ramdisk.modules', ramdiskIn.modules)),
      ...optional('kernelParams', kernelParamsText?.split(' ')),
    },
  };

  const bmcIn = r.mapping('bmc', top.bmc, ['concurrency', 'powerPollSeconds', 'ipmi', 'powerStateChangeTimeoutSeconds']);
  const ipmiIn = r.mapping('bmc.ipmi', bmcIn.ipmi, ['cipherSuites']);
  const cipherSuites = readCipherSuites(r, 'bmc.ipmi.cipherSuites', ipmiIn.cipherSuites);
  const bmc = {
    concurrency: r.integer('bmc.concurrency', bmcIn.concurrency, 32, 1, 1024),
    powerPollSeconds: r.integer('bmc.powerPollSeconds', bmcIn.powerPollSeconds, 60, 1, 86400),
    ...optional('ipmi', cipherSuites === undefined ? undefined : { cipherSuites }),
    ...optional('powerStateChangeTimeoutSeconds', bmcIn.powerStateChangeTimeoutSeconds === undefined ? undefined
      : r.integer('bmc.powerStateChangeTimeoutSeconds', bmcIn.powerStateChangeTimeoutSeconds, 60, 1, 3600)),
  };
  const reconcileIn = r.mapping('reconcile', top.reconcile, ['concurrency', 'timeScale', 'provisioningLimit']);
  const reconcile = {
    concurrency: r.integer('reconcile.concurrency', reconcileIn.concurrency, DEFAULT_RECONCILE_CONCURRENCY, 1, 1024),
    timeScale: r.positiveNumber('reconcile.timeScale', reconcileIn.timeScale, 1),
    provisioningLimit: r.integer('reconcile.provisioningLimit', reconcileIn.provisioningLimit, 20, 1, 10000),
  };
  const logIn = r.mapping('log', top.log, ['level']);
  const log = { level: r.oneOf('log.level', logIn.level, LOG_LEVELS, 'info') };

  const controller = decodeController(r, top.controller);
  const ssh = decodeSsh(r, top.ssh, stateDir);
  const governor = decodeGovernor(r, top.governor, provisioning.interface);

  if (r.problems.length > 0) throw new ConfigError('config', r.problems);
  const known = new Set<string>(SECTIONS);
  const sections = isJsonObject(input) ? Object.keys(input).filter((name) => known.has(name)) : [];
  return {
    agent, provisioner, ...optional('sections', sections.length === 0 ? undefined : sections), management, provisioning, dhcp, ...optional('dhcp6', top.dhcp6 === undefined || top.dhcp6 === null ? undefined : dhcp6), discovery, tftp, http, images, bmc,
    ...optional('controller', controller), ...optional('ssh', ssh), reconcile, ...optional('governor', governor), log,
  };
}

function decodeProvisioning(r: ConfigReader, value: unknown): Config['provisioning'] {
  const p = r.mapping('provisioning', value, ['interface', 'address']);
  const iface = r.matching('provisioning.interface', p.interface, /^[A-Za-z0-9._@:-]{1,15}$/, 'a network interface name (max 15 characters)');
  const out: Config['provisioning'] = { ...optional('interface', iface) };
  const entries: { path: string; value: unknown }[] = Array.isArray(p.address)
    ? p.address.map((v: unknown, i) => ({ path: joinPath('provisioning.address', i), value: v }))
    : p.address === undefined || p.address === null ? [] : [{ path: 'provisioning.address', value: p.address }];
  for (const { path, value: entry } of entries) {
    const v6 = typeof entry === 'string' ? parseIpv6Cidr(entry) : undefined;
    if (v6 !== undefined) {
      if (out.address6 !== undefined) r.report(path, 'at most one IPv6 address', entry);
      out.address6 = v6.address;
      out.prefixLength6 = v6.prefixLength;
      continue;
    }
    if (out.address !== undefined) {
      r.report(path, 'at most one IPv4 address', entry);
      continue;
    }
    const v4 = decodeIpv4Entry(r, path, entry);
    if (v4.address !== undefined) out.address = v4.address;
    if (v4.prefixLength !== undefined) out.prefixLength = v4.prefixLength;
  }
  return out;
}

/** One IPv4 entry of `provisioning.address`: `ADDRESS` or `ADDRESS/PREFIX`. */
function decodeIpv4Entry(r: ConfigReader, path: string, entry: unknown): { address?: string; prefixLength?: number } {
  const what = 'an IPv4 address, optionally with /PREFIX (e.g. 192.0.2.1/24), or an IPv6 one (e.g. fd00:1::1/64)';
  if (typeof entry === 'string' && entry.includes('/')) {
    const cidr = parseCidr(entry);
    if (cidr === undefined) {
      r.report(path, what, entry);
      return {};
    }
    return { address: entry.slice(0, entry.indexOf('/')), prefixLength: cidr.prefixLength };
  }
  if (typeof entry === 'string' && entry.includes(':')) {
    r.report(path, what, entry);
    return {};
  }
  return { ...optional('address', r.ipv4(path, entry)) };
}

function decodeManagementTls(r: ConfigReader, value: unknown): Config['management']['tls'] {
  if (value === undefined || value === null) return undefined;
  const t = r.mapping('management.tls', value, ['cert', 'key', 'clientCA']);
  const cert = r.absolutePath('management.tls.cert', t.cert);
  const key = r.absolutePath('management.tls.key', t.key);
  const clientCA = r.absolutePath('management.tls.clientCA', t.clientCA);
  if (t.cert === undefined) r.report('management.tls.cert', 'the server certificate (PEM) — required when management.tls is set', undefined);
  if (t.key === undefined) r.report('management.tls.key', 'the server private key (PEM) — required when management.tls is set', undefined);
  if (cert === undefined || key === undefined) return undefined;
  return { cert, key, ...optional('clientCA', clientCA) };
}

function decodeSsh(r: ConfigReader, value: unknown, stateDir: string): Config['ssh'] {
  if (value === undefined || value === null) return undefined;
  const s = r.mapping('ssh', value, ['listen', 'hostKey', 'authorizedKeys', 'tunnel']);
  let tunnel: NonNullable<Config['ssh']>['tunnel'];
  if (s.tunnel !== undefined && s.tunnel !== null) {
    const t = r.mapping('ssh.tunnel', s.tunnel, ['host', 'port', 'user', 'hostKey', 'identity', 'remotePort']);
    const host = r.matching('ssh.tunnel.host', t.host, /^[A-Za-z0-9.:[\]-]+$/, 'the bastion host name or IP address');
    const user = r.matching('ssh.tunnel.user', t.user, /^[A-Za-z0-9._-]+$/, 'a user name on the bastion');
    const identity = r.absolutePath('ssh.tunnel.identity', t.identity);
    const remotePort = r.integer('ssh.tunnel.remotePort', t.remotePort, 0, 1, 65535);
    for (const [key, v] of [['host', host], ['user', user], ['identity', identity]] as const) {
      if (v === undefined && t[key] === undefined) r.report(`ssh.tunnel.${key}`, 'a value (required for the tunnel)', undefined);
    }
    if (t.remotePort === undefined) r.report('ssh.tunnel.remotePort', 'the port to open on the bastion (required for the tunnel)', undefined);
    if (t.hostKey === undefined) r.report('ssh.tunnel.hostKey', "the bastion's pinned host key (required: the tunnel never trusts an unknown bastion)", undefined);
    const hostKey = r.string('ssh.tunnel.hostKey', t.hostKey, "the bastion's public host key line or SHA256: fingerprint");
    const port = r.integer('ssh.tunnel.port', t.port, 22, 1, 65535);
    if (host !== undefined && user !== undefined && identity !== undefined && remotePort > 0) {
      tunnel = { host, port, user, ...optional('hostKey', hostKey), identity, remotePort };
    }
  }
  return {
    listen: r.listen('ssh.listen', s.listen, '0.0.0.0:2222'),
    hostKey: r.absolutePath('ssh.hostKey', s.hostKey, `${stateDir}/ssh_host_ed25519_key`),
    authorizedKeys: r.absolutePath('ssh.authorizedKeys', s.authorizedKeys, '/etc/rackside/authorized_keys'),
    ...optional('tunnel', tunnel),
  };
}

/** Finds the 1-based line of a problem path in the parsed YAML document, when it exists there. */
function lineOf(doc: ReturnType<typeof parseDocument>, counter: LineCounter, path: string): number | undefined {
  if (path === '') return undefined;
  const segments = path.split(/\.|(?=\[)/).map((s) => (s.startsWith('[') ? Number(s.slice(1, -1)) : s));
  for (let n = segments.length; n > 0; n--) {
    const node: unknown = doc.getIn(segments.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range !== undefined) return counter.linePos(range[0]).line;
  }
  return undefined;
}

/**
 * Parses and decodes the config file's text. `sourceName` (the file path) prefixes messages.
 * An empty file yields all defaults.
 * @throws ConfigError for YAML syntax errors (with line and column) and for every wrong key.
 */
export function parseConfigYaml(text: string, sourceName: string, defaults: ConfigDefaults): Config {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // With prettyErrors the first message line ends "at line L, column C:".
    throw new ConfigError(sourceName, doc.errors.map((e) => ({
      path: '', expected: 'valid YAML',
      got: (e.message.split('\n')[0] ?? e.code).replace(/:$/, ''),
      ...(e.linePos === undefined ? {} : { line: e.linePos[0].line }),
    })));
  }
  try {
    return decodeConfig(doc.toJS(), defaults);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(sourceName, err.problems.map((p) => {
      const line = lineOf(doc, counter, p.path);
      return line === undefined ? p : { ...p, line };
    }));
  }
}
