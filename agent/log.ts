/**
 * @module The agent's logger: pino writing one JSON object per line (stdout by default, which
 * systemd hands to journald). Every line has `time` (ISO 8601), `level` as a word (`info`, not
 * 30), `name`, `msg`; per-host lines carry `host` (the BareMetalHost name) and `mac` (lower-case,
 * colon-separated) so `journalctl -u rackside | grep '"host":"node-3"'` or `jq 'select(.mac==…)'`
 * find one machine's story. Secrets (`password`, `token`, `authorization`, `userData`) are redacted,
 * and so are URL credentials and queries anywhere in a line.
 */
import pino from 'pino';
import { redactUrlSecrets, redactUrlSecretsDeep } from './redact-text.js';

/** The logger type used across the agent. */
export type Logger = pino.Logger;
/** Log levels, most to least severe; `silent` turns logging off. */
export type LogLevel = pino.LevelWithSilent;

/** Fields that identify what a log line is about. */
export interface LogBindings {
  /** BareMetalHost name. */
  host?: string;
  /** Boot interface MAC; normalized to lower case by {@link childLogger}. */
  mac?: string;
  /** Emitting component, e.g. `web`, `bootsvc:dhcp`, `reconciler`. */
  component?: string;
  [key: string]: unknown;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level: LogLevel;
  /** Logger name (`name` field); default `rackside`. */
  name?: string;
  /** Where lines go; default stdout. Tests pass an in-memory `{ write(line) }`. */
  destination?: pino.DestinationStream;
}

/** Keys whose values never reach the log, at the top level or one object deep. */
const REDACTED_KEYS = ['password', 'token', 'authorization', 'userData', 'secret'];

/**
 * Creates a JSON logger with the field conventions of this module.
 * @example
 * const log = createLogger({ level: 'info' });
 * childLogger(log, { host: 'node-3', mac: 'AA:BB:CC:00:11:22' }).info('booted');
 */
export function createLogger(options: LoggerOptions): Logger {
  const config: pino.LoggerOptions = {
    name: options.name ?? 'rackside',
    level: options.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Fields and the error's message and stack lose URL credentials and signed queries (an image
    // URL can carry both; agent/redact-text.ts); the message text too (hooks.logMethod).
    formatters: { level: (label) => ({ level: label }), log: (object) => redactUrlSecretsDeep(object) },
    serializers: { err: (err: Error) => redactUrlSecretsDeep(JSON.parse(JSON.stringify(pino.stdSerializers.err(err))) as unknown) },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a: unknown) => (typeof a === 'string' ? redactUrlSecrets(a) : a)) as Parameters<pino.LogFn>);
      },
    },
    redact: { paths: REDACTED_KEYS.flatMap((k) => [k, `*.${k}`]), censor: '[redacted]' },
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}

/**
 * pino children copy their parent's level at creation and do not follow later changes, so
 * every child made by {@link childLogger} is remembered (weakly) under its root logger.
 */
const rootOf = new WeakMap<Logger, Logger>();
const childrenOf = new WeakMap<Logger, Set<WeakRef<Logger>>>();

/** Returns a logger whose every line carries `bindings` (MACs lower-cased, `-` → `:`). */
export function childLogger(logger: Logger, bindings: LogBindings): Logger {
  const normalized: LogBindings = { ...bindings };
  if (typeof bindings.mac === 'string') normalized.mac = bindings.mac.toLowerCase().replaceAll('-', ':');
  const child = logger.child(normalized);
  const root = rootOf.get(logger) ?? logger;
  rootOf.set(child, root);
  let children = childrenOf.get(root);
  if (children === undefined) {
    children = new Set();
    childrenOf.set(root, children);
  }
  children.add(new WeakRef(child));
  return child;
}

/**
 * Changes the level at run time (e.g. on SIGHUP or an API call) of `logger`'s root and of every
 * child made from it with {@link childLogger}, whichever of them is passed.
 */
export function setLogLevel(logger: Logger, level: LogLevel): void {
  const root = rootOf.get(logger) ?? logger;
  root.level = level;
  const children = childrenOf.get(root);
  if (children === undefined) return;
  for (const ref of children) {
    const child = ref.deref();
    if (child === undefined) children.delete(ref);
    else child.level = level;
  }
}

/** True when `text` names a log level. */
export function isLogLevel(text: string): text is LogLevel {
  return ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(text);
}
