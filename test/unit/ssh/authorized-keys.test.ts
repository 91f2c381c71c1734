/**
 * @module Table tests of the authorized_keys parser: key types, every supported option (quotes,
 * escaped quotes, `restrict` and re-enabling), comments, blank lines, CRLF, and malformed lines
 * reported with their line numbers and skipped while the rest still counts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkKeyUse, parseAuthorizedKeys, type AuthorizedKeyOptions } from '../../../agent/ssh/authorized-keys.js';
import { generateKey } from './helpers.js';

const ed = generateKey('ed25519', 'ops@laptop').publicKey;
const rsa = generateKey('rsa', 'rsa@laptop').publicKey;
const ecdsa = generateKey('ecdsa', 'ec@laptop').publicKey;
const edBare = ed.split(' ').slice(0, 2).join(' ');
const edData = ed.split(' ')[1] ?? '';
const DEFAULTS: AuthorizedKeyOptions = { portForwarding: true, pty: true, agentForwarding: true, x11Forwarding: true };

interface Good {
  line: string;
  keyType?: string;
  comment?: string;
  options?: Partial<AuthorizedKeyOptions>;
}

const good: Record<string, Good> = {
  'ed25519 with comment': { line: ed, keyType: 'ssh-ed25519', comment: 'ops@laptop' },
  'rsa': { line: rsa, keyType: 'ssh-rsa', comment: 'rsa@laptop' },
  'ecdsa p256': { line: ecdsa, keyType: 'ecdsa-sha2-nistp256', comment: 'ec@laptop' },
  'no comment': { line: edBare, comment: '' },
  'comment with spaces': { line: `${edBare} Jane Doe (ops)`, comment: 'Jane Doe (ops)' },
  'leading whitespace and tabs': { line: `  \t${edBare}\tc`, comment: 'c' },
  'from with negation, CIDR and wildcard': {
    line: `from="!10.0.0.5,10.0.0.0/8,192.0.2.*,2001:db8::/32" ${ed}`,
    options: { from: ['!10.0.0.5', '10.0.0.0/8', '192.0.2.*', '2001:db8::/32'] },
  },
  'command with spaces': { line: `command="rackside get hosts" ${ed}`, options: { command: 'rackside get hosts' } },
  'command with escaped quotes and a comma': {
    line: `command="describe host \\"node 1\\",x",no-pty ${ed}`,
    options: { command: 'describe host "node 1",x', pty: false },
  },
  'a backslash not before a quote stays': { line: `command="a\\b" ${ed}`, options: { command: 'a\\b' } },
  'no-port-forwarding': { line: `no-port-forwarding ${ed}`, options: { portForwarding: false } },
  'no-pty': { line: `no-pty ${ed}`, options: { pty: false } },
  'option names are case-insensitive': { line: `No-Pty,NO-X11-FORWARDING ${ed}`, options: { pty: false, x11Forwarding: false } },
  'restrict turns everything off': {
    line: `restrict ${ed}`, options: { portForwarding: false, pty: false, agentForwarding: false, x11Forwarding: false },
  },
  'restrict then pty re-enables the pty only': {
    line: `restrict,pty ${ed}`, options: { portForwarding: false, pty: true, agentForwarding: false, x11Forwarding: false },
  },
  'restrict,port-forwarding,permitopen': {
    line: `restrict,port-forwarding,permitopen="127.0.0.1:8080",permitopen="localhost:*" ${ed}`,
    options: { portForwarding: true, pty: false, agentForwarding: false, x11Forwarding: false, permitOpen: ['127.0.0.1:8080', 'localhost:*'] },
  },
  'expiry-time in UTC': { line: `expiry-time="20300102030405Z" ${ed}`, options: { expiresAtMs: Date.UTC(2030, 0, 2, 3, 4, 5) } },
  'ignored options are accepted': { line: `environment="A=b",no-user-rc,no-agent-forwarding ${ed}`, options: { agentForwarding: false } },
};

for (const [name, c] of Object.entries(good)) {
  test(`parses: ${name}`, () => {
    const parsed = parseAuthorizedKeys(`${c.line}\n`);
    assert.deepEqual(parsed.problems, []);
    assert.equal(parsed.keys.length, 1);
    const key = parsed.keys[0]!;
    assert.equal(key.line, 1);
    if (c.keyType !== undefined) assert.equal(key.keyType, c.keyType);
    if (c.comment !== undefined) assert.equal(key.comment, c.comment);
    assert.deepEqual(key.options, { ...DEFAULTS, ...c.options });
    assert.match(key.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
  });
}

const bad: Record<string, { line: string; message: RegExp }> = {
  'garbage': { line: 'garbage line', message: /neither a key type nor a known option/ },
  'unknown key type': { line: `ssh-foo ${edData}`, message: /unknown key type ssh-foo/ },
  'DSA is unsupported': { line: `ssh-dss ${edData}`, message: /unsupported key type ssh-dss/ },
  'FIDO keys are unsupported': { line: `sk-ssh-ed25519@openssh.com ${edData}`, message: /unsupported key type/ },
  'type does not match the data': { line: `ssh-rsa ${edData}`, message: /is a ssh-ed25519 key, but the line says ssh-rsa/ },
  'bad base64': { line: 'ssh-ed25519 AAAA%%%%', message: /not valid base64/ },
  'truncated data': { line: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5', message: /truncated|too short|no key material/ },
  'key type without data': { line: 'ssh-ed25519', message: /without key data/ },
  'unknown option': { line: `frobnicate ${ed}`, message: /neither a key type nor a known option/ },
  'unknown valued option': { line: `frob="x" ${ed}`, message: /unknown option "frob"/ },
  'unterminated quote': { line: `command="get hosts ${ed}`, message: /unterminated quoted value of option command/ },
  'unquoted value': { line: `command=get ${ed}`, message: /needs a double-quoted value/ },
  'value on a flag': { line: `no-pty="yes" ${ed}`, message: /takes no value/ },
  'from without a value': { line: `from ${ed}`, message: /needs ="value"/ },
  'from with host bits set': { line: `from="10.0.0.1/8" ${ed}`, message: /host bits set/ },
  'from with a bad prefix': { line: `from="10.0.0.0/33" ${ed}`, message: /bad prefix length/ },
  'from with an empty entry': { line: `from="10.0.0.1,,10.0.0.2" ${ed}`, message: /empty pattern/ },
  'duplicate command': { line: `command="a",command="b" ${ed}`, message: /duplicate command/ },
  'cert-authority': { line: `cert-authority ${ed}`, message: /cert-authority lines are not supported/ },
  'bad expiry-time': { line: `expiry-time="tomorrow" ${ed}`, message: /expiry-time/ },
  'bad permitopen': { line: `permitopen="8080" ${ed}`, message: /not HOST:PORT/ },
  'options without a key': { line: 'no-pty', message: /options without a key/ },
  'junk after an option': { line: `no-pty;rm ${ed}`, message: /unexpected ";"/ },
};

for (const [name, c] of Object.entries(bad)) {
  test(`reports and skips: ${name}`, () => {
    const parsed = parseAuthorizedKeys(`# header\n\n${c.line}\n${ed}\n`);
    assert.equal(parsed.problems.length, 1, JSON.stringify(parsed.problems));
    assert.equal(parsed.problems[0]!.line, 3);
    assert.match(parsed.problems[0]!.message, c.message);
    assert.equal(parsed.keys.length, 1, 'the good line after the bad one still counts');
    assert.equal(parsed.keys[0]!.line, 4);
  });
}

test('a whole file: comments, blank lines, CRLF, several problems with their line numbers', () => {
  const text = ['# ops keys', '', ed, 'bad 1', `no-pty ${rsa}`, '   # indented comment', 'ssh-rsa', ecdsa].join('\r\n');
  const parsed = parseAuthorizedKeys(text);
  assert.deepEqual(parsed.keys.map((k) => [k.line, k.keyType]), [[3, 'ssh-ed25519'], [5, 'ssh-rsa'], [8, 'ecdsa-sha2-nistp256']]);
  assert.deepEqual(parsed.problems.map((p) => p.line), [4, 7]);
  assert.equal(parsed.keys[2]!.comment, 'ec@laptop', 'the CR is not part of the comment');
});

test('an empty file has no keys and no problems', () => {
  assert.deepEqual(parseAuthorizedKeys(''), { keys: [], problems: [] });
});

const uses: Record<string, { line: string; address: string; nowMs?: number; expected: string | undefined }> = {
  'no from= allows any address': { line: ed, address: '203.0.113.9', expected: undefined },
  'from= CIDR match': { line: `from="10.0.0.0/8" ${ed}`, address: '10.1.2.3', expected: undefined },
  'from= CIDR miss': { line: `from="10.0.0.0/8" ${ed}`, address: '192.0.2.1', expected: 'from' },
  'from= negation wins': { line: `from="!10.0.0.5,10.0.0.0/8" ${ed}`, address: '10.0.0.5', expected: 'from' },
  'from= with an IPv4-mapped source': { line: `from="127.0.0.1" ${ed}`, address: '::ffff:127.0.0.1', expected: undefined },
  'expired key': { line: `expiry-time="20200101Z" ${ed}`, address: '10.0.0.1', nowMs: Date.UTC(2021, 0, 1), expected: 'expired' },
  'not yet expired': { line: `expiry-time="20300101Z" ${ed}`, address: '10.0.0.1', nowMs: Date.UTC(2021, 0, 1), expected: undefined },
};

for (const [name, c] of Object.entries(uses)) {
  test(`checkKeyUse: ${name}`, () => {
    const key = parseAuthorizedKeys(c.line).keys[0]!;
    assert.equal(checkKeyUse(key, c.address, c.nowMs ?? 0), c.expected);
  });
}
