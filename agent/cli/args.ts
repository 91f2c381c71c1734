/**
 * @module Command-line parsing for `rackside` with `node:util` parseArgs: one option table for
 * every command, then a check that each option given belongs to the command (a usage error,
 * exit 2, otherwise). Also duration parsing for `--timeout`.
 * @pure
 */
import { parseArgs } from 'node:util';
import { CliError, ExitCode } from './io.js';

/** Parsed options (all commands). */
export interface CliOptions {
  server?: string;
  token?: string;
  /** PEM files for HTTPS / mutual TLS to the management API. */
  cacert?: string;
  cert?: string;
  key?: string;
  help?: boolean;
  config?: string;
  demo?: boolean;
  filename?: string;
  output?: string;
  host?: string;
  watch?: boolean;
  wait?: string;
  timeout?: string;
  hard?: boolean;
  force?: boolean;
  'delete-action'?: string;
  namespace?: string;
  'state-dir'?: string;
  destdir?: string;
  purge?: boolean;
  username?: string;
  /** `rackside enroll --bmc ADDRESS`. */
  bmc?: string;
  /** `rackside get hosts --discovered`: only hosts discovery recorded that still wait for a BMC. */
  discovered?: boolean;
  /** `rackside get hosts --switch NAME`: only hosts with a NIC on that switch (LLDP system name or chassis ID). */
  switch?: string;
  'password-file'?: string;
  /** Accepted only to refuse it with a reason (`rackside bmc`): passwords never go on the command line. */
  password?: string;
  insecure?: boolean;
  uefi?: boolean;
  legacy?: boolean;
  persistent?: boolean;
  format?: string;
  'cache-dir'?: string;
  kernel?: string;
  modules?: string;
  /** `rackside images build --progress json`: one JSON line per build step on stdout (the agent's background build reads them). */
  progress?: string;
  'agent-version'?: string;
  /** `rackside images build`: the ISO's extra kernel arguments, space-separated (default: config `images.ramdisk.kernelParams`). */
  'kernel-args'?: string;
  /** `rackside images build --arch amd64|arm64`: the Debian architecture to build the ramdisk for (default: the head node's). */
  arch?: string;
  /** `rackside fleet`: the rack a manifest goes to, or a listing's filter. */
  rack?: string;
  /** `rackside fleet`: how long a command may wait for its rack (duration). */
  expires?: string;
  /** `rackside controller racks add|rotate NAME --auth token|cert`: the rack's credential kind. */
  auth?: string;
}

/** The command line split into positionals (command first) and options. */
export interface ParsedArgs {
  positionals: string[];
  options: CliOptions;
}

const OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string', short: 'c' },
  demo: { type: 'boolean' },
  filename: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  host: { type: 'string' },
  watch: { type: 'boolean', short: 'w' },
  wait: { type: 'string' },
  timeout: { type: 'string' },
  hard: { type: 'boolean' },
  force: { type: 'boolean' },
  'delete-action': { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'state-dir': { type: 'string' },
  destdir: { type: 'string' },
  purge: { type: 'boolean' },
  username: { type: 'string' },
  bmc: { type: 'string' },
  discovered: { type: 'boolean' },
  switch: { type: 'string' },
  'password-file': { type: 'string' },
  password: { type: 'string' },
  insecure: { type: 'boolean' },
  uefi: { type: 'boolean' },
  legacy: { type: 'boolean' },
  persistent: { type: 'boolean' },
  format: { type: 'string' },
  'cache-dir': { type: 'string' },
  kernel: { type: 'string' },
  modules: { type: 'string' },
  progress: { type: 'string' },
  'agent-version': { type: 'string' },
  'kernel-args': { type: 'string' },
  arch: { type: 'string' },
  rack: { type: 'string' },
  expires: { type: 'string' },
  auth: { type: 'string' },
} as const;

const GLOBAL = ['server', 'token', 'cacert', 'cert', 'key', 'help'];

/** Options each command accepts besides the global ones. */
export const COMMAND_OPTIONS: Record<string, readonly (keyof CliOptions)[]> = {
  agent: ['config', 'demo'],
  apply: ['filename'],
  get: ['output', 'host', 'watch', 'namespace', 'discovered', 'switch'],
  describe: [],
  export: ['output', 'format'],
  delete: ['wait', 'timeout', 'namespace'],
  power: [],
  reboot: ['hard'],
  inspect: [],
  detach: ['force', 'delete-action'],
  attach: [],
  enroll: ['bmc', 'username', 'password-file', 'password'],
  version: [],
  sync: ['output'],
  ssh: ['output'],
  doctor: ['config', 'output', 'timeout'],
  install: ['destdir'],
  uninstall: ['destdir', 'purge'],
  migrate: ['config', 'state-dir'],
  bmc: ['username', 'password-file', 'password', 'insecure', 'uefi', 'legacy', 'persistent', 'wait', 'timeout', 'output'],
  images: ['format', 'output', 'config', 'cache-dir', 'kernel', 'modules', 'progress', 'agent-version', 'kernel-args', 'arch'],
  controller: ['config', 'auth'],
  fleet: ['filename', 'rack', 'expires', 'output'],
  help: [],
};

/** Parses argv (without node and script). @throws CliError (exit 2) on unknown or misplaced options. */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  // `--wait` alone means --wait=true (kubectl style); parseArgs string options need a value.
  const args = argv.map((a) => (a === '--wait' ? '--wait=true' : a));
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(ExitCode.usage, err instanceof Error ? err.message : String(err));
  }
  const options: CliOptions = parsed.values;
  const command = parsed.positionals[0];
  const allowed = command === undefined ? [] : COMMAND_OPTIONS[command];
  if (command !== undefined && allowed !== undefined) {
    for (const key of Object.keys(options)) {
      if (!GLOBAL.includes(key) && !(allowed as readonly string[]).includes(key)) {
        throw new CliError(ExitCode.usage, `option --${key} does not apply to "rackside ${command}"`);
      }
    }
  }
  return { positionals: parsed.positionals, options };
}

/** Parses `500ms`, `30s`, `5m`, `1h`, `1m30s` or plain seconds into milliseconds. */
export function parseDuration(text: string): number | undefined {
  if (/^[0-9]+(\.[0-9]+)?$/.test(text)) return Number(text) * 1000;
  const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text;
  while (rest !== '') {
    const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/.exec(rest);
    if (match === null) return undefined;
    total += Number(match[1]) * (unitMs[match[2] ?? 's'] ?? 1000);
    rest = rest.slice(match[0].length);
  }
  return text === '' ? undefined : total;
}
