/**
 * @module The embedded SSH server's decisions, apart from its sockets (`ssh-server.ts`): whether
 * a new TCP connection is admitted ({@link admitConnection}), the answer to one authentication
 * request ({@link decideAuth}: RFC 4252 §5.2 `none`, §7 `publickey` with the key looked up in
 * authorized_keys, its `from=`/`expiry-time=` checked, the signature verified), and whether a
 * `direct-tcpip` channel (`ssh -L`, RFC 4254 §7.2) may open ({@link forwardRefusal}). The time
 * and the signature check come in as arguments.
 * @pure
 */
import type { TcpipRequestInfo } from 'ssh2';
import { checkKeyUse, type AuthorizedKey, type AuthorizedKeyOptions } from './authorized-keys.js';
import type { AdmitVerdict } from './rate-limit.js';

/** A host and port to listen on or connect to. */
export interface HostPort {
  host: string;
  port: number;
}

/** What to do with a new TCP connection. */
export type Admission =
  | { kind: 'admit' }
  /** Dropped by the rate limit; `audit` on the first drop of a ban (one audit event per ban). */
  | { kind: 'banned'; bannedUntilMs: number; audit: boolean }
  /** Dropped because too many connections are still unauthenticated (logged). */
  | { kind: 'too-many-unauthenticated' };

/** The rate limiter's verdict, then the cap on unauthenticated connections (sshd's `MaxStartups`). */
export function admitConnection(verdict: AdmitVerdict, unauthenticated: number, maxUnauthenticated: number): Admission {
  if (!verdict.admitted) return { kind: 'banned', bannedUntilMs: verdict.bannedUntilMs, audit: verdict.firstDrop };
  return unauthenticated >= maxUnauthenticated ? { kind: 'too-many-unauthenticated' } : { kind: 'admit' };
}

/** One authentication request, as ssh2 hands it over (the key's fingerprint computed by the caller). */
export interface AuthAttempt {
  method: string;
  username: string;
  /** publickey: the offered key blob and its SHA256 fingerprint. */
  key?: { data: Uint8Array; fingerprint: string };
  /** publickey: whether the request carries a signature (else the client only asks whether the key would do). */
  signed: boolean;
}

/** An authorized key as the server holds it, with whatever its signature check needs (`K`). */
export interface CandidateKey<K> {
  entry: AuthorizedKey;
  publicKey: K;
}

/** The key's identity as the audit trail names it. */
export interface KeyInfo {
  fingerprint: string;
  keyComment: string;
  keyLine: number;
}

/** The answer to one authentication request. */
export type AuthDecision =
  /** `none`: reply with the methods that can continue (RFC 4252 §5.2); not a refused credential. */
  | { kind: 'list-methods' }
  /** A refused credential (counted, audited). */
  | { kind: 'refuse'; reason: string; fingerprint?: string; keyInfo?: KeyInfo }
  /** RFC 4252 §7 SSH_MSG_USERAUTH_PK_OK: the key would do; the client then signs. */
  | { kind: 'key-ok' }
  /** Logged in with this key. */
  | { kind: 'accept'; keyInfo: KeyInfo; options: AuthorizedKeyOptions };

/** What {@link decideAuth} decides against. */
export interface AuthPolicy<K> {
  /** The authorized keys, in file order (the first match wins, like sshd). */
  keys: readonly CandidateKey<K>[];
  /** Only these user names may log in; absent, any well-formed one. */
  users?: readonly string[];
  sourceAddress: string;
  nowMs: number;
  /** True only when the request's signature verifies with `key` (ssh2's `verify` returning `true`). */
  verifySignature: (key: K) => boolean;
}

const USER_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * The decision that needs no authorized key: `none`, another method than `publickey`, or a user
 * name not allowed; `undefined` when the keys must be consulted ({@link decideAuth}), so the
 * caller reads the authorized_keys file only then.
 */
export function decideAuthWithoutKeys(attempt: AuthAttempt, users: readonly string[] | undefined): AuthDecision | undefined {
  if (attempt.method === 'none') return { kind: 'list-methods' };
  if (attempt.method !== 'publickey' || attempt.key === undefined) return { kind: 'refuse', reason: `${attempt.method} authentication is not accepted; use a public key` };
  if (!USER_PATTERN.test(attempt.username) || (users !== undefined && !users.includes(attempt.username))) {
    return { kind: 'refuse', reason: 'user name not allowed', fingerprint: attempt.key.fingerprint };
  }
  return undefined;
}

/** Decides one authentication request (see the module comment). */
export function decideAuth<K>(attempt: AuthAttempt, policy: AuthPolicy<K>): AuthDecision {
  const early = decideAuthWithoutKeys(attempt, policy.users);
  if (early !== undefined || attempt.key === undefined) return early ?? { kind: 'list-methods' };
  const { fingerprint, data } = attempt.key;
  const match = policy.keys.find((k) => Buffer.compare(k.entry.keyBlob, data) === 0);
  if (match === undefined) return { kind: 'refuse', reason: 'key not in authorized_keys', fingerprint };
  const entry = match.entry;
  const keyInfo: KeyInfo = { fingerprint, keyComment: entry.comment, keyLine: entry.line };
  const refusal = checkKeyUse(entry, policy.sourceAddress, policy.nowMs);
  if (refusal !== undefined) return { kind: 'refuse', reason: refusal === 'from' ? 'source address not allowed by from=' : 'key expired (expiry-time=)', keyInfo };
  if (!attempt.signed) return { kind: 'key-ok' };
  if (!policy.verifySignature(match.publicKey)) return { kind: 'refuse', reason: 'bad signature', keyInfo };
  return { kind: 'accept', keyInfo, options: entry.options };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/** True when `ssh -L` asked for the management listener (`localhost` counts for a loopback or wildcard listener). */
function isForwardTarget(target: HostPort, info: TcpipRequestInfo): boolean {
  if (info.destPort !== target.port) return false;
  const dest = info.destIP.toLowerCase();
  if (dest === target.host.toLowerCase()) return true;
  const loopbackOrAny = LOOPBACK_NAMES.has(target.host) || target.host === '0.0.0.0' || target.host === '::';
  return loopbackOrAny && LOOPBACK_NAMES.has(dest);
}

function permitOpenAllows(entries: readonly string[] | undefined, info: TcpipRequestInfo): boolean {
  if (entries === undefined) return true;
  return entries.some((e) => {
    const m = /^(?:\[([^\]]+)\]|([^:]+)):([0-9]+|\*)$/.exec(e);
    if (m === null) return false;
    const host = (m[1] ?? m[2] ?? '').toLowerCase();
    return (host === '*' || host === info.destIP.toLowerCase()) && (m[3] === '*' || Number(m[3]) === info.destPort);
  });
}

/**
 * Why a `direct-tcpip` request is refused, or `undefined` when it may reach `target` (the
 * management listener): forwarding must be offered, the key not restricted, the destination the
 * listener, and `permitopen=` (when the key has it) must allow it.
 */
export function forwardRefusal(target: HostPort | undefined, keyOptions: AuthorizedKeyOptions, info: TcpipRequestInfo): string | undefined {
  if (target === undefined) return 'port forwarding is not offered';
  if (!keyOptions.portForwarding) return 'the key is restricted (no-port-forwarding)';
  if (!isForwardTarget(target, info)) return `only ${target.host}:${target.port} (the management listener) may be reached`;
  if (!permitOpenAllows(keyOptions.permitOpen, info)) return 'not allowed by permitopen=';
  return undefined;
}

/** Where to connect for the management listener: a wildcard listener is reached on loopback. */
export function forwardConnectHost(target: HostPort): string {
  return target.host === '0.0.0.0' ? '127.0.0.1' : target.host === '::' ? '::1' : target.host;
}
