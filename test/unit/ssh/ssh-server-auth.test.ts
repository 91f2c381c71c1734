/**
 * @module Authentication of the SSH server with an in-process ssh2 client: public keys only,
 * signatures really verified, from=, users, authorized_keys reloads, the audit trail, rate
 * limiting with an injected clock, login grace, MaxAuthTries, and malformed clients that must
 * not take the server down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import ssh2 from 'ssh2';
import { generateKey, startTestServer, waitFor } from './helpers.js';
import { connect, connectWithKey, exec, NO_MORE_METHODS, tryMethods } from './ssh-client.js';

const ops = generateKey('ed25519', 'ops@laptop');
const rsa = generateKey('rsa', 'rsa@laptop');
const stranger = generateKey('ed25519', 'stranger');

test('a listed key logs in and runs a command; the audit names key, user and source', async () => {
  const t = await startTestServer(`${ops.publicKey}\n${rsa.publicKey}\n`);
  try {
    for (const key of [ops, rsa]) {
      const client = await connectWithKey(t.port, key.privateKey, 'jane');
      const r = await exec(client, 'get hosts');
      client.end();
      assert.equal(r.code, 0);
      assert.equal(r.stdout, 'argv: ["get","hosts"]\n');
    }
    const success = t.events.filter((e) => e.type === 'auth-success');
    assert.equal(success.length, 2);
    assert.equal(success[0]!.user, 'jane');
    assert.equal(success[0]!.address, '127.0.0.1');
    assert.equal(success[0]!.keyComment, 'ops@laptop');
    assert.equal(success[1]!.keyLine, 2);
    assert.match(success[0]!.fingerprint ?? '', /^SHA256:/);
    assert.equal(t.server.counters().authenticated, 2);
  } finally {
    await t.close();
  }
});

test('an unknown key is refused and audited', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  try {
    await assert.rejects(connectWithKey(t.port, stranger.privateKey), /authentication methods failed/);
    const failure = t.events.find((e) => e.type === 'auth-failure');
    assert.equal(failure?.reason, 'key not in authorized_keys');
    assert.equal(failure.method, 'publickey');
  } finally {
    await t.close();
  }
});

test('a signature by another key over a listed public key is refused', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  try {
    // Present ops's public key but sign with the stranger's private key.
    const forged = ssh2.utils.parseKey(stranger.privateKey) as ssh2.ParsedKey;
    const opsPublic = (ssh2.utils.parseKey(ops.privateKey) as ssh2.ParsedKey).getPublicSSH();
    forged.getPublicSSH = () => opsPublic;
    await assert.rejects(connectWithKey(t.port, forged), /authentication methods failed/);
    assert.ok(t.events.some((e) => e.type === 'auth-failure' && e.reason === 'bad signature'), JSON.stringify(t.events));
    assert.ok(!t.events.some((e) => e.type === 'auth-success'));
  } finally {
    await t.close();
  }
});

const otherMethods: Record<string, Partial<ssh2.ConnectConfig>> = {
  'password': { authHandler: tryMethods([{ type: 'password', username: 'ops', password: 'secret' }]) },
  'keyboard-interactive': {
    authHandler: tryMethods([{ type: 'keyboard-interactive', username: 'ops', prompt: (_n, _i, _l, _p, finish) => { finish(['secret']); } }]),
  },
};

for (const [method, config] of Object.entries(otherMethods)) {
  test(`${method} authentication is refused without reading a secret`, async () => {
    const t = await startTestServer(`${ops.publicKey}\n`);
    try {
      await assert.rejects(connect(t.port, config), /authentication methods failed/);
      const failure = t.events.find((e) => e.type === 'auth-failure');
      assert.equal(failure?.method, method);
      assert.match(failure.reason ?? '', /not accepted; use a public key/);
      assert.ok(!JSON.stringify(t.events).includes('secret'));
    } finally {
      await t.close();
    }
  });
}

test('the none method is answered with publickey as the only method', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  try {
    let offered: string[] | null = null;
    await assert.rejects(connect(t.port, {
      // ssh2 passes null before the first attempt (its types say an array).
      authHandler: (methodsLeft: string[] | null, _partial: boolean | null, next: (m: ssh2.AnyAuthMethod | ssh2.AuthenticationType) => void) => {
        if (methodsLeft === null) {
          next({ type: 'none', username: 'ops' });
          return;
        }
        offered = methodsLeft;
        next(NO_MORE_METHODS);
      },
    }));
    assert.deepEqual(offered, ['publickey']);
    assert.equal(t.events.length, 0, 'none is not a failed attempt');
  } finally {
    await t.close();
  }
});

test('from= refuses other sources; users limits names', async () => {
  const t = await startTestServer(`from="192.0.2.0/24" ${ops.publicKey}\n${rsa.publicKey}\n`, { users: ['ops'] });
  try {
    await assert.rejects(connectWithKey(t.port, ops.privateKey), /authentication methods failed/);
    assert.ok(t.events.some((e) => e.reason === 'source address not allowed by from=' && e.keyLine === 1));
    await assert.rejects(connectWithKey(t.port, rsa.privateKey, 'root'), /authentication methods failed/);
    assert.ok(t.events.some((e) => e.reason === 'user name not allowed' && e.user === 'root'));
    const client = await connectWithKey(t.port, rsa.privateKey, 'ops');
    client.end();
  } finally {
    await t.close();
  }
});

test('expiry-time is checked against the injected clock', async () => {
  const t = await startTestServer(`expiry-time="20291231Z" ${ops.publicKey}\n`);
  try {
    await assert.rejects(connectWithKey(t.port, ops.privateKey), /authentication methods failed/);
    assert.ok(t.events.some((e) => e.reason === 'key expired (expiry-time=)'));
    t.clock.nowMs = Date.UTC(2029, 0, 1);
    (await connectWithKey(t.port, ops.privateKey)).end();
  } finally {
    await t.close();
  }
});

test('authorized_keys edits take effect at the next login', async () => {
  const t = await startTestServer('# nobody yet\n');
  try {
    await assert.rejects(connectWithKey(t.port, ops.privateKey));
    writeFileSync(t.authorizedKeysPath, `# now ops\n${ops.publicKey}\n`);
    (await connectWithKey(t.port, ops.privateKey)).end();
    writeFileSync(t.authorizedKeysPath, '');
    await assert.rejects(connectWithKey(t.port, ops.privateKey), /authentication methods failed/);
  } finally {
    await t.close();
  }
});

test('repeated failed connections ban the source until the clock passes the ban', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`, { rateLimit: { maxFailures: 3, windowMs: 60_000, banMs: 120_000 } });
  try {
    for (let i = 1; i <= 3; i++) {
      await assert.rejects(connectWithKey(t.port, stranger.privateKey), /authentication methods failed/);
      await waitFor(`failed connection ${i} counted`, () => t.server.counters().failedConnections === i);
    }
    assert.ok(t.events.some((e) => e.type === 'rate-limited' && e.address === '127.0.0.1'));
    await assert.rejects(connectWithKey(t.port, ops.privateKey), 'even the right key is dropped during the ban');
    await assert.rejects(connectWithKey(t.port, ops.privateKey));
    assert.equal(t.events.filter((e) => e.type === 'connection-dropped').length, 1, 'one drop event per ban');
    assert.equal(t.server.counters().dropped, 2);
    assert.deepEqual(t.server.banned().map((b) => b.address), ['127.0.0.1']);
    t.clock.nowMs += 120_000;
    (await connectWithKey(t.port, ops.privateKey)).end();
  } finally {
    await t.close();
  }
});

test('a connection that never authenticates is closed after the login grace time', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`, { loginGraceMs: 100 });
  try {
    const socket = net.connect(t.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.resume(); // read the server's banner so its FIN is seen
    await new Promise<void>((resolve) => socket.once('close', () => { resolve(); }));
    assert.equal(t.server.counters().failedConnections, 0, 'silence is not a failed login');
  } finally {
    await t.close();
  }
});

test('more refused keys than maxAuthTries end the connection', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`, { maxAuthTries: 2 });
  try {
    const keys = [generateKey(), generateKey(), generateKey(), ops];
    await assert.rejects(connect(t.port, {
      authHandler: tryMethods(keys.map((k) => ({ type: 'publickey', username: 'ops', key: k.privateKey }))),
    }));
    assert.equal(t.events.filter((e) => e.type === 'auth-failure').length, 2);
    assert.ok(!t.events.some((e) => e.type === 'auth-success'), 'the fourth (good) key was never reached');
  } finally {
    await t.close();
  }
});

const garbage: Record<string, Buffer> = {
  'random bytes': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) & 255)),
  'an HTTP request': Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
  'an SSH banner then a broken packet': Buffer.concat([Buffer.from('SSH-2.0-evil\r\n'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 1, 2, 3])]),
  'a huge banner line': Buffer.from(`SSH-2.0-${'x'.repeat(100_000)}\r\n`),
};

test('malformed clients never crash the server', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  try {
    for (const [name, bytes] of Object.entries(garbage)) {
      const socket = net.connect(t.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      socket.write(bytes);
      const closed = new Promise<void>((resolve) => socket.once('close', () => { resolve(); }));
      setTimeout(() => socket.destroy(), 500).unref();
      await closed;
      const client = await connectWithKey(t.port, ops.privateKey);
      assert.equal((await exec(client, 'ping')).code, 0, `still serving after ${name}`);
      client.end();
    }
  } finally {
    await t.close();
  }
});
