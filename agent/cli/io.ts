/**
 * @module What CLI commands may touch, passed in as one {@link CliIo} object so they run in
 * tests without a process: output writers, environment, stdin, files, fetch, the clock, and
 * the agent entry point. Also the exit codes scripts can rely on, and {@link CliError}.
 * Only agent/cli.ts builds a real CliIo from `process`.
 * @pure
 */
import type { DriverRegistry } from '../../drivers/index.js';

/** Exit codes of `rackside` (documented in `rackside --help` and docs/cli.md). */
export const ExitCode = {
  ok: 0,
  /** Generic failure, server error (5xx), or refused token (401). */
  failure: 1,
  /** Bad command line, or an invalid config file for `rackside agent`. */
  usage: 2,
  /** The object does not exist (404). */
  notFound: 3,
  /** Conflict (409): stale resourceVersion, immutable field. */
  conflict: 4,
  /** The server refused the input (400, 413, 415). */
  invalid: 5,
  /** The agent could not be reached (connection refused, DNS, request timeout, stream lost). */
  unreachable: 6,
  /** Gave up waiting (`delete --wait` past `--timeout`). */
  timeout: 7,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI reports as `error: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  /** Field path the server named (`spec.bmc.address`), or ''. */
  readonly field: string;
  constructor(exitCode: ExitCodeValue, message: string, field = '', options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.field = field;
  }
}

/** Options for `rackside agent`. */
export interface RunAgentOptions {
  configPath: string | undefined;
  demo: boolean;
}

/** Options for `rackside controller` (controller/main.ts `runController`). */
export interface RunControllerOptions {
  configPath: string;
  /** `['serve']`, or `['racks', 'add'|'rotate'|'revoke', NAME]`, or `['racks', 'list']`. */
  action: readonly string[];
  /** `racks add|rotate --auth cert|token`: how the rack authenticates (default token). */
  auth?: 'token' | 'cert';
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Everything a command may use from the outside world. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  readStdin: () => Promise<string>;
  readFile: (path: string) => Promise<string>;
  /**
   * Writes a file (its directory created), for `export`; absent over SSH, where files on the head
   * node are not written.
   */
  writeFile?: (path: string, text: string) => Promise<void>;
  /** Writes a binary file (its directory created), for `export boot-ca`; absent over SSH. */
  writeBytes?: (path: string, bytes: Uint8Array) => Promise<void>;
  fetch: typeof globalThis.fetch;
  /** Milliseconds since the epoch (AGE columns, wait deadlines). */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** This CLI's version (package.json). */
  clientVersion: string;
  /** Runs the daemon (agent/main.ts `runAgent`); resolves to the process exit code. */
  runAgent: (options: RunAgentOptions) => Promise<number>;
  /** Runs the fleet controller or its credential commands (controller/main.ts); absent where it is not offered (SSH). */
  runController?: (options: RunControllerOptions) => Promise<number>;
  /**
   * The BMC driver registry with the built-in drivers (`rackside bmc`). cli.ts owns the
   * registration (docs/architecture.md, rule 4) and loads the drivers only when a command asks.
   */
  createDriverRegistry?: () => Promise<DriverRegistry>;
  /** Aborts long-running commands (`get events --watch`); set on SIGINT by cli.ts. */
  signal?: AbortSignal;
}
