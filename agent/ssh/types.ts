/**
 * @module Types shared by the SSH server, its sessions and the reverse tunnel: the injected
 * command runner, the audit events, and the small seams (clock, logger) they take.
 * @pure
 */
import type { Readable, Writable } from 'node:stream';

/** Streams a command runs with. `signal` aborts when the client goes away (for `--watch`-style commands). */
export interface CommandIo {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  signal?: AbortSignal;
}

/**
 * Runs one rackside CLI subcommand (argv without the program name, e.g. `['get', 'hosts']`)
 * against the local management API, writing what the console would print; resolves to the
 * exit code. The agent passes the CLI's dispatcher; tests pass a fake. Must not throw for a bad
 * command line (print help to stderr and resolve non-zero); a thrown error is reported as
 * `internal error` with exit code 70 (EX_SOFTWARE).
 */
export type RunCommand = (argv: string[], io: CommandIo) => Promise<number>;

/** What happened, one word each; see {@link SshAuditEvent}. */
export type SshAuditType =
  | 'auth-success'
  | 'auth-failure'
  | 'exec'
  | 'exec-end'
  | 'shell-start'
  | 'shell-end'
  | 'forward-allowed'
  | 'forward-refused'
  | 'request-refused'
  | 'rate-limited'
  | 'connection-dropped';

/**
 * One entry of the per-key audit trail. Every event names the source `address`/`port`; events
 * after authentication also carry `user`, the key's `fingerprint` (`SHA256:…`) and `keyComment`.
 * Never holds a secret (no private keys, no passwords: password attempts are refused unread).
 */
export interface SshAuditEvent {
  type: SshAuditType;
  /** Milliseconds since the epoch (injected clock). */
  atMs: number;
  address: string;
  port: number;
  user?: string;
  fingerprint?: string;
  keyComment?: string;
  /** `authorized_keys` line of the key. */
  keyLine?: number;
  /** auth-*: the method (`publickey`, `password`, `keyboard-interactive`, `hostbased`). */
  method?: string;
  /** Why something was refused or dropped, in words. */
  reason?: string;
  /** exec: the argv that ran (after a forced command replaced the request). */
  argv?: string[];
  /** exec: what the client asked for when `command=` forced something else. */
  requestedCommand?: string;
  /** exec: true when `command=` in authorized_keys chose the command. */
  forced?: boolean;
  /** exec: true when typed in the interactive shell. */
  interactive?: boolean;
  /** exec-end, shell-end: the exit code sent to the client. */
  exitCode?: number;
  /** forward-*: where `ssh -L` wanted to go. */
  destination?: { host: string; port: number };
  /** request-refused: `tcpip-forward` (-R), `sftp`, `subsystem:NAME`, `x11`, `auth-agent`, `pty`, `streamlocal`. */
  request?: string;
  /** rate-limited: until when the source is banned (ms since the epoch). */
  bannedUntilMs?: number;
}

/** Receives audit events; the agent appends them to its event log. Must not throw. */
export type AuditSink = (event: SshAuditEvent) => void;

/** The logging calls the SSH module makes (a pino logger fits). */
export interface SshLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

/** A logger that drops everything. */
export const silentLogger: SshLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };
