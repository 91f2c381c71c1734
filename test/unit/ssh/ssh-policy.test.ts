/**
 * The SSH server's pure decisions, table by table: admission of a new connection, the answer to
 * an authentication request (method, user name, key lookup, from=/expiry-time=, key-ok before
 * the signature, the signature), and the `ssh -L` rule. The server over real sockets is tested
 * in `ssh-server-auth.test.ts`, `ssh-server-session.test.ts` and `limits.test.ts`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TcpipRequestInfo } from 'ssh2';
import type { AuthorizedKey, AuthorizedKeyOptions } from '../../../agent/ssh/authorized-keys.js';
import {
  admitConnection, decideAuth, decideAuthWithoutKeys, forwardConnectHost, forwardRefusal,
  type AuthAttempt, type AuthPolicy, type CandidateKey, type HostPort,
} from '../../../agent/ssh/ssh-policy.js';

const NOW = 1_800_000_000_000;
const open: AuthorizedKeyOptions = { portForwarding: true, pty: true, agentForwarding: true, x11Forwarding: true };

function entry(blob: string, line: number, options: Partial<AuthorizedKeyOptions> = {}): AuthorizedKey {
  return { line, keyType: 'ssh-ed25519', keyBlob: Buffer.from(blob), fingerprint: `SHA256:${blob}`, comment: `key ${line}`, options: { ...open, ...options } };
}

test('admitConnection: the ban first, then the cap on unauthenticated connections', () => {
  const cases: { name: string; verdict: Parameters<typeof admitConnection>[0]; unauthenticated: number; expected: ReturnType<typeof admitConnection> }[] = [
    { name: 'admitted under the cap', verdict: { admitted: true }, unauthenticated: 31, expected: { kind: 'admit' } },
    { name: 'admitted at the cap: dropped', verdict: { admitted: true }, unauthenticated: 32, expected: { kind: 'too-many-unauthenticated' } },
    { name: 'banned, first drop: audited', verdict: { admitted: false, bannedUntilMs: NOW, firstDrop: true }, unauthenticated: 0, expected: { kind: 'banned', bannedUntilMs: NOW, audit: true } },
    { name: 'banned, later drop: not audited', verdict: { admitted: false, bannedUntilMs: NOW, firstDrop: false }, unauthenticated: 99, expected: { kind: 'banned', bannedUntilMs: NOW, audit: false } },
  ];
  for (const c of cases) assert.deepEqual(admitConnection(c.verdict, c.unauthenticated, 32), c.expected, c.name);
});

test('decideAuth: one answer per authentication request', () => {
  const keys: CandidateKey<string>[] = [
    { entry: entry('alice', 3), publicKey: 'alice' },
    { entry: entry('alice', 4, { portForwarding: false }), publicKey: 'alice-second' },
    { entry: entry('lab', 5, { from: ['10.0.0.0/8'] }), publicKey: 'lab' },
    { entry: entry('old', 6, { expiresAtMs: NOW }), publicKey: 'old' },
  ];
  const policy = (over: Partial<AuthPolicy<string>> = {}): AuthPolicy<string> => ({
    keys, sourceAddress: '192.0.2.7', nowMs: NOW, verifySignature: (k) => k === 'alice' || k === 'lab', ...over,
  });
  const attempt = (blob: string | undefined, signed = true, over: Partial<AuthAttempt> = {}): AuthAttempt => ({
    method: 'publickey', username: 'ops', signed, ...(blob === undefined ? {} : { key: { data: Buffer.from(blob), fingerprint: `SHA256:${blob}` } }), ...over,
  });
  const info = (blob: string, line: number): { fingerprint: string; keyComment: string; keyLine: number } => ({ fingerprint: `SHA256:${blob}`, keyComment: `key ${line}`, keyLine: line });
  const cases: { name: string; attempt: AuthAttempt; policy?: AuthPolicy<string>; expected: ReturnType<typeof decideAuth> }[] = [
    { name: 'none lists the methods', attempt: attempt(undefined, false, { method: 'none' }), expected: { kind: 'list-methods' } },
    { name: 'password is refused', attempt: attempt(undefined, false, { method: 'password' }), expected: { kind: 'refuse', reason: 'password authentication is not accepted; use a public key' } },
    { name: 'a malformed user name', attempt: attempt('alice', true, { username: 'a b' }), expected: { kind: 'refuse', reason: 'user name not allowed', fingerprint: 'SHA256:alice' } },
    { name: 'a user not in users', attempt: attempt('alice'), policy: policy({ users: ['root'] }), expected: { kind: 'refuse', reason: 'user name not allowed', fingerprint: 'SHA256:alice' } },
    { name: 'an unknown key', attempt: attempt('mallory'), expected: { kind: 'refuse', reason: 'key not in authorized_keys', fingerprint: 'SHA256:mallory' } },
    { name: 'the first matching line wins', attempt: attempt('alice'), expected: { kind: 'accept', keyInfo: info('alice', 3), options: open } },
    { name: 'unsigned: the key would do', attempt: attempt('alice', false), expected: { kind: 'key-ok' } },
    { name: 'from= refuses another source', attempt: attempt('lab'), expected: { kind: 'refuse', reason: 'source address not allowed by from=', keyInfo: info('lab', 5) } },
    { name: 'from= admits its source', attempt: attempt('lab'), policy: policy({ sourceAddress: '10.1.2.3' }), expected: { kind: 'accept', keyInfo: info('lab', 5), options: { ...open, from: ['10.0.0.0/8'] } } },
    { name: 'expiry-time= passed, even unsigned', attempt: attempt('old', false), expected: { kind: 'refuse', reason: 'key expired (expiry-time=)', keyInfo: info('old', 6) } },
    { name: 'a bad signature', attempt: attempt('alice'), policy: policy({ verifySignature: () => false }), expected: { kind: 'refuse', reason: 'bad signature', keyInfo: info('alice', 3) } },
  ];
  for (const c of cases) {
    const p = c.policy ?? policy();
    assert.deepEqual(decideAuth(c.attempt, p), c.expected, c.name);
    const early = decideAuthWithoutKeys(c.attempt, p.users);
    if (early !== undefined) assert.deepEqual(early, c.expected, `${c.name}: decided without the keys`);
    else assert.equal(c.attempt.method, 'publickey', `${c.name}: only a publickey request needs the keys`);
  }
});

test('forwardRefusal: ssh -L reaches the management listener only', () => {
  const req = (destIP: string, destPort: number): TcpipRequestInfo => ({ destIP, destPort, srcIP: '127.0.0.1', srcPort: 5555 });
  const loopback: HostPort = { host: '127.0.0.1', port: 8080 };
  const any: HostPort = { host: '0.0.0.0', port: 8080 };
  const cases: { name: string; target: HostPort | undefined; options?: Partial<AuthorizedKeyOptions>; info: TcpipRequestInfo; expected: string | undefined }[] = [
    { name: 'not offered', target: undefined, info: req('127.0.0.1', 8080), expected: 'port forwarding is not offered' },
    { name: 'restricted key', target: loopback, options: { portForwarding: false }, info: req('127.0.0.1', 8080), expected: 'the key is restricted (no-port-forwarding)' },
    { name: 'the listener', target: loopback, info: req('127.0.0.1', 8080), expected: undefined },
    { name: 'localhost names a loopback listener', target: loopback, info: req('LOCALHOST', 8080), expected: undefined },
    { name: 'localhost names a wildcard listener', target: any, info: req('::1', 8080), expected: undefined },
    { name: 'another port', target: loopback, info: req('127.0.0.1', 22), expected: 'only 127.0.0.1:8080 (the management listener) may be reached' },
    { name: 'another host', target: { host: '10.0.0.1', port: 8080 }, info: req('localhost', 8080), expected: 'only 10.0.0.1:8080 (the management listener) may be reached' },
    { name: 'permitopen= allows it', target: loopback, options: { permitOpen: ['127.0.0.1:*'] }, info: req('127.0.0.1', 8080), expected: undefined },
    { name: 'permitopen= does not', target: loopback, options: { permitOpen: ['[::1]:8080', 'bad'] }, info: req('127.0.0.1', 8080), expected: 'not allowed by permitopen=' },
  ];
  for (const c of cases) assert.equal(forwardRefusal(c.target, { ...open, ...c.options }, c.info), c.expected, c.name);
  assert.deepEqual([any, { host: '::', port: 1 }, loopback].map(forwardConnectHost), ['127.0.0.1', '::1', '127.0.0.1']);
});
