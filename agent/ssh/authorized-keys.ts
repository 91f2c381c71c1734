/**
 * @module Parser for OpenSSH `authorized_keys` files (sshd(8) "AUTHORIZED_KEYS FILE FORMAT",
 * OpenSSH auth-options.c): one key per line as `[options] keytype base64 [comment]`; blank
 * lines and `#` comments are ignored. Options are comma-separated, names case-insensitive,
 * values double-quoted with `\"` as the only escape (OpenSSH `opt_dequote`). Malformed lines
 * are reported with their 1-based line number and skipped, never fatal: a line rackside cannot
 * honour exactly (unknown option, `cert-authority`, unsupported key type, bad `from=`) grants
 * nothing, which is the safe direction.
 * @pure
 */
import { checkPatternList, matchAddressPatterns } from './address-match.js';
import { decodeKeyBlob, fingerprintSha256, isKnownKeyType, isSupportedKeyType, SUPPORTED_KEY_TYPES } from './key-blob.js';

/** What one key may do, after `restrict` and the explicit options are applied in order. */
export interface AuthorizedKeyOptions {
  /** `command="…"`: run this instead of whatever the client asked for. */
  command?: string;
  /** `from="…"`: the pattern list a source address must match. */
  from?: string[];
  /** `permitopen="host:port"` entries: `ssh -L` may only reach these (on top of rackside's own rule). */
  permitOpen?: string[];
  /** `expiry-time="YYYYMMDD[HHMM[SS]][Z]"` as milliseconds since the epoch (local time unless `Z`). */
  expiresAtMs?: number;
  /** False after `no-port-forwarding` or `restrict` (unless `port-forwarding` follows). */
  portForwarding: boolean;
  /** False after `no-pty` or `restrict` (unless `pty` follows). */
  pty: boolean;
  /** False after `no-agent-forwarding` or `restrict`; rackside refuses agent forwarding anyway. */
  agentForwarding: boolean;
  /** False after `no-X11-forwarding` or `restrict`; rackside refuses X11 forwarding anyway. */
  x11Forwarding: boolean;
}

/** One usable line of an authorized_keys file. */
export interface AuthorizedKey {
  /** 1-based line number in the file. */
  line: number;
  keyType: string;
  /** The public key blob (RFC 4253 §6.6), compared byte-for-byte with what the client offers. */
  keyBlob: Buffer;
  /** `SHA256:…` fingerprint of {@link keyBlob}. */
  fingerprint: string;
  /** The comment after the key, often `user@host`; '' when absent. */
  comment: string;
  options: AuthorizedKeyOptions;
}

/** A line that was skipped, with the reason. */
export interface AuthorizedKeysProblem {
  line: number;
  message: string;
}

/** The result of {@link parseAuthorizedKeys}. */
export interface ParsedAuthorizedKeys {
  keys: AuthorizedKey[];
  problems: AuthorizedKeysProblem[];
}

const FLAG_OPTIONS: Record<string, (o: AuthorizedKeyOptions, on: boolean) => void> = {
  'port-forwarding': (o, on) => { o.portForwarding = on; },
  'pty': (o, on) => { o.pty = on; },
  'agent-forwarding': (o, on) => { o.agentForwarding = on; },
  'x11-forwarding': (o, on) => { o.x11Forwarding = on; },
  // Accepted and without effect here: there are no rc files, and FIDO keys are not supported.
  'user-rc': () => undefined,
  'touch-required': () => undefined,
};
const IGNORED_FLAGS = new Set(['verify-required']);
/** Valued options accepted without effect: rackside refuses env, tunnels and -R outright. */
const IGNORED_VALUES = new Set(['environment', 'principals', 'tunnel', 'permitlisten']);

interface RawOption {
  name: string;
  value?: string;
}

/** Splits an options field into options; returns the options and the index after the field. */
function scanOptions(text: string): { options: RawOption[]; end: number } | { error: string } {
  const options: RawOption[] = [];
  let i = 0;
  for (;;) {
    const name = /^[A-Za-z0-9-]+/.exec(text.slice(i))?.[0];
    if (name === undefined) return { error: `bad option syntax at "${text.slice(i, i + 20)}"` };
    i += name.length;
    let value: string | undefined;
    if (text[i] === '=') {
      if (text[i + 1] !== '"') return { error: `option ${name}= needs a double-quoted value` };
      i += 2;
      value = '';
      for (;;) {
        const c = text[i];
        if (c === undefined) return { error: `unterminated quoted value of option ${name}` };
        if (c === '"') break;
        if (c === '\\' && text[i + 1] === '"') i++;
        value += text[i] ?? '';
        i++;
      }
      i++;
    }
    options.push(value === undefined ? { name } : { name, value });
    const next = text[i];
    if (next === ',') {
      i++;
      continue;
    }
    if (next === undefined || next === ' ' || next === '\t') return { options, end: i };
    return { error: `unexpected "${next}" after option ${name}` };
  }
}

/** Parses `expiry-time` (OpenSSH `parse_absolute_time`). Local time unless it ends in Z. */
function parseExpiry(text: string): number | undefined {
  const m = /^([0-9]{4})([0-9]{2})([0-9]{2})(?:([0-9]{2})([0-9]{2})([0-9]{2})?)?(Z?)$/i.exec(text);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  return m[7] === '' ? new Date(y, mo - 1, d, h, mi, s).getTime() : Date.UTC(y, mo - 1, d, h, mi, s);
}

/** The setter of flag `flag`, own entries only: `constructor` or `toString` are not options. */
function flagSetter(flag: string): ((o: AuthorizedKeyOptions, on: boolean) => void) | undefined {
  return Object.hasOwn(FLAG_OPTIONS, flag) ? FLAG_OPTIONS[flag] : undefined;
}

function applyOptions(raw: readonly RawOption[]): AuthorizedKeyOptions | { error: string } {
  const o: AuthorizedKeyOptions = { portForwarding: true, pty: true, agentForwarding: true, x11Forwarding: true };
  for (const { name: rawName, value } of raw) {
    const name = rawName.toLowerCase();
    const flag = name.startsWith('no-') ? name.slice(3) : name;
    if (value === undefined) {
      if (name === 'restrict') {
        Object.assign(o, { portForwarding: false, pty: false, agentForwarding: false, x11Forwarding: false });
      } else if (name === 'cert-authority') {
        return { error: 'cert-authority lines are not supported (rackside accepts plain public keys only)' };
      } else {
        const setter = flagSetter(flag);
        if (setter !== undefined) setter(o, flag === name);
        else if (!IGNORED_FLAGS.has(name)) {
          return { error: isValued(name) ? `option ${rawName} needs ="value"` : `"${rawName}" is neither a key type nor a known option` };
        }
      }
      continue;
    }
    switch (name) {
      case 'command':
        if (o.command !== undefined) return { error: 'duplicate command= option' };
        o.command = value;
        break;
      case 'from': {
        if (o.from !== undefined) return { error: 'duplicate from= option' };
        const patterns = value.split(',');
        const problems = checkPatternList(patterns);
        if (problems.length > 0) return { error: `from="${value}": ${problems.join('; ')}` };
        o.from = patterns;
        break;
      }
      case 'permitopen':
        if (!/^(\[[^\]]+\]|[^:]+):([0-9]{1,5}|\*)$/.test(value)) return { error: `permitopen="${value}" is not HOST:PORT` };
        (o.permitOpen ??= []).push(value);
        break;
      case 'expiry-time': {
        if (o.expiresAtMs !== undefined) return { error: 'duplicate expiry-time= option' };
        const at = parseExpiry(value);
        if (at === undefined) return { error: `expiry-time="${value}" is not YYYYMMDD[HHMM[SS]][Z]` };
        o.expiresAtMs = at;
        break;
      }
      default:
        if (IGNORED_VALUES.has(name)) break;
        if (name === 'restrict' || name === 'cert-authority' || flagSetter(flag) !== undefined || IGNORED_FLAGS.has(name)) {
          return { error: `option ${rawName} takes no value` };
        }
        return { error: `unknown option "${rawName}"` };
    }
  }
  return o;
}

function isValued(name: string): boolean {
  return ['command', 'from', 'permitopen', 'expiry-time', ...IGNORED_VALUES].includes(name);
}

/** Parses one non-blank, non-comment line. */
function parseLine(text: string): Omit<AuthorizedKey, 'line'> | { error: string } {
  let rest = text;
  let options: AuthorizedKeyOptions = { portForwarding: true, pty: true, agentForwarding: true, x11Forwarding: true };
  const first = /^\S+/.exec(rest)?.[0] ?? '';
  if (!isKnownKeyType(first)) {
    // `ssh-foo AAAA…`: a key of a type nobody knows, not an options field.
    const second = rest.split(/[ \t]+/)[1] ?? '';
    if (!/[=,]/.test(first) && /^AAAA[A-Za-z0-9+/]/.test(second)) return { error: `unknown key type ${first}` };
    const scanned = scanOptions(rest);
    if ('error' in scanned) return scanned;
    const applied = applyOptions(scanned.options);
    if ('error' in applied) return applied;
    options = applied;
    rest = rest.slice(scanned.end).trimStart();
  }
  const [keyType = '', base64 = '', ...commentWords] = rest.split(/[ \t]+/);
  if (keyType === '') return { error: 'options without a key' };
  if (!isSupportedKeyType(keyType)) {
    return { error: isKnownKeyType(keyType)
      ? `unsupported key type ${keyType} (use ${SUPPORTED_KEY_TYPES.join(', ')})`
      : `unknown key type ${keyType}` };
  }
  if (base64 === '') return { error: `${keyType} without key data` };
  const blob = decodeKeyBlob(base64, keyType);
  if ('error' in blob) return blob;
  return { keyType, keyBlob: blob, fingerprint: fingerprintSha256(blob), comment: commentWords.join(' '), options };
}

/**
 * Parses the text of an authorized_keys file. Never throws: every unusable line becomes a
 * problem with its line number, and the remaining lines still count.
 */
export function parseAuthorizedKeys(text: string): ParsedAuthorizedKeys {
  const keys: AuthorizedKey[] = [];
  const problems: AuthorizedKeysProblem[] = [];
  const lines = text.split('\n');
  for (const [index, rawLine] of lines.entries()) {
    const line = rawLine.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const parsed = parseLine(line);
    if ('error' in parsed) problems.push({ line: index + 1, message: parsed.error });
    else keys.push({ line: index + 1, ...parsed });
  }
  return { keys, problems };
}

/** Why {@link checkKeyUse} refused a key at login, or undefined when it may log in. */
export type KeyRefusal = 'from' | 'expired';

/**
 * Applies the login-time options of a matched key: `from=` against the source address and
 * `expiry-time=` against `nowMs`.
 */
export function checkKeyUse(key: AuthorizedKey, sourceAddress: string, nowMs: number): KeyRefusal | undefined {
  if (key.options.from !== undefined && !matchAddressPatterns(key.options.from, sourceAddress)) return 'from';
  if (key.options.expiresAtMs !== undefined && nowMs >= key.options.expiresAtMs) return 'expired';
  return undefined;
}
