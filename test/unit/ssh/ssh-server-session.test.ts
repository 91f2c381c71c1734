/**
 * @module Sessions of the SSH server with an in-process ssh2 client: exec output, stdin and
 * exit codes, forced commands, the REPL with and without a pty, no-pty keys, refused requests
 * (sftp, -R, X11-less paths), `-L` only to the management listener, and abort on disconnect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client, ClientChannel } from 'ssh2';
import { generateKey, startHttpServer, startTestServer, waitFor } from './helpers.js';
import { connectWithKey, exec, shell } from './ssh-client.js';

const ops = generateKey('ed25519', 'ops@laptop');

test('exec: stdout, stderr, exit codes, stdin, and quoting', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    assert.deepEqual(await exec(client, 'fail 4'), { stdout: 'argv: ["fail","4"]\n', stderr: '', code: 4 });
    assert.deepEqual(await exec(client, 'warn'), { stdout: 'argv: ["warn"]\n', stderr: 'a warning\n', code: 0 });
    assert.equal((await exec(client, `rackside describe host "node 1"`)).stdout, 'argv: ["describe","host","node 1"]\n');
    assert.equal((await exec(client, 'cat', 'piped input')).stdout, 'cat:piped input');
    const pipe = await exec(client, 'get hosts | grep x');
    assert.equal(pipe.code, 2);
    assert.match(pipe.stderr, /"\|" is not supported/);
    const thrown = await exec(client, 'throw');
    assert.equal(thrown.code, 70);
    assert.match(thrown.stderr, /internal error: boom/);
    const execs = t.events.filter((e) => e.type === 'exec').map((e) => e.argv);
    assert.deepEqual(execs[0], ['fail', '4']);
    const ends = t.events.filter((e) => e.type === 'exec-end').map((e) => e.exitCode);
    assert.deepEqual(ends, [4, 0, 0, 0, 2, 70]);
  } finally {
    client?.end();
    await t.close();
  }
});

test('command= replaces what the client asked for, for exec and shell', async () => {
  const t = await startTestServer(`command="rackside get hosts -o wide" ${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    const r = await exec(client, 'delete host node-1');
    assert.deepEqual(r, { stdout: 'argv: ["get","hosts","-o","wide"]\n', stderr: '', code: 0 });
    const event = t.events.find((e) => e.type === 'exec');
    assert.equal(event?.forced, true);
    assert.equal(event.requestedCommand, 'delete host node-1');
    const s = await shell(client, 'exit 3\n');
    assert.equal(s.stdout, 'argv: ["get","hosts","-o","wide"]\n', 'a shell request runs the forced command too');
  } finally {
    client?.end();
    await t.close();
  }
});

test('shell without a pty: commands from input, no prompt, exit code of the last command', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    const r = await shell(client, 'get hosts\n\n"unterminated\nfail 3\n');
    assert.equal(r.stdout, 'argv: ["get","hosts"]\nargv: ["fail","3"]\n');
    assert.match(r.stderr, /unterminated double quote/);
    assert.equal(r.code, 3);
    assert.deepEqual(t.events.filter((e) => e.type.startsWith('shell')).map((e) => e.type), ['shell-start', 'shell-end']);
    assert.ok(t.events.some((e) => e.type === 'exec' && e.interactive === true));
    assert.equal((await shell(client, 'get hosts\nexit 7\nget nodes\n')).code, 7, 'exit N ends the shell with N');
  } finally {
    client?.end();
    await t.close();
  }
});

test('shell with a pty: banner, prompt, echo, CR LF output, help, Ctrl-D', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`, { banner: 'rack1 — welcome' });
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    const r = await shell(client, 'get hosts\rhelp\r\x04', { term: 'xterm', cols: 80, rows: 24 });
    // Input arrives at once, so its echo comes before the first output (type-ahead, as on a tty).
    assert.ok(r.stdout.startsWith('rack1 — welcome\r\nrackside> get hosts\r\nhelp\r\n'), JSON.stringify(r.stdout));
    assert.ok(r.stdout.includes('argv: ["get","hosts"]\r\nrackside> '), JSON.stringify(r.stdout));
    assert.ok(r.stdout.endsWith('rackside> \r\n'), 'Ctrl-D at the prompt ends the shell');
    assert.ok(!/[^\r]\n/.test(r.stdout), 'every LF is preceded by CR');
    assert.ok(r.stdout.includes('Built-ins: help, exit'), 'help lists the built-ins');
    assert.ok(r.stdout.includes('fake help\r\n'), 'help also runs the CLI help');
    assert.equal(r.code, 0);
  } finally {
    client?.end();
    await t.close();
  }
});

test('no-pty keys get no pty and the refusal is audited', async () => {
  const t = await startTestServer(`no-pty ${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    await assert.rejects(shell(client, 'exit\r', { term: 'xterm' }), /pseudo-?terminal|pty/i);
    assert.ok(t.events.some((e) => e.type === 'request-refused' && e.request === 'pty'));
  } finally {
    client?.end();
    await t.close();
  }
});

test('sftp and remote forwarding (-R) are refused and audited', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    const c = await connectWithKey(t.port, ops.privateKey);
    client = c;
    await assert.rejects(new Promise((resolve, reject) => { c.sftp((err, sftp) => { if (err !== undefined) reject(err); else resolve(sftp); }); }));
    await assert.rejects(new Promise((resolve, reject) => { c.forwardIn('127.0.0.1', 0, (err) => { if (err !== undefined) reject(err); else resolve(undefined); }); }));
    assert.ok(t.events.some((e) => e.type === 'request-refused' && e.request === 'sftp'));
    assert.ok(t.events.some((e) => e.type === 'request-refused' && e.request === 'tcpip-forward'));
  } finally {
    client?.end();
    await t.close();
  }
});

/** Opens a direct-tcpip channel (what ssh -L does per connection). */
function forwardOut(client: Client, host: string, port: number): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 40000, host, port, (err, channel) => { if (err !== undefined) reject(err); else resolve(channel); });
  });
}

async function httpGetOver(channel: ClientChannel): Promise<string> {
  let text = '';
  channel.on('data', (c: Buffer) => { text += c.toString(); });
  channel.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  await new Promise((resolve) => channel.on('close', resolve));
  return text;
}

test('direct-tcpip reaches only the management listener', async () => {
  const web = await startHttpServer();
  const other = await startHttpServer('secret other service');
  const t = await startTestServer(`${ops.publicKey}\nno-port-forwarding ${generateKey().publicKey}\n`, {
    forwardTarget: { host: '127.0.0.1', port: web.port },
  });
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    assert.match(await httpGetOver(await forwardOut(client, '127.0.0.1', web.port)), /rackside status page/);
    assert.match(await httpGetOver(await forwardOut(client, 'localhost', web.port)), /rackside status page/);
    await assert.rejects(forwardOut(client, '127.0.0.1', other.port));
    await assert.rejects(forwardOut(client, '10.0.0.1', web.port));
    const allowed = t.events.filter((e) => e.type === 'forward-allowed');
    assert.equal(allowed.length, 2);
    const refused = t.events.filter((e) => e.type === 'forward-refused');
    assert.deepEqual(refused.map((e) => e.destination), [{ host: '127.0.0.1', port: other.port }, { host: '10.0.0.1', port: web.port }]);
    assert.match(refused[0]!.reason ?? '', /only 127\.0\.0\.1:\d+ \(the management listener\)/);
  } finally {
    client?.end();
    await t.close();
    await web.close();
    await other.close();
  }
});

test('direct-tcpip is refused for no-port-forwarding keys and when no target is configured', async () => {
  const web = await startHttpServer();
  const restricted = generateKey();
  const t = await startTestServer(`restrict ${restricted.publicKey}\n`, { forwardTarget: { host: '127.0.0.1', port: web.port } });
  const bare = await startTestServer(`${ops.publicKey}\n`);
  try {
    const c1 = await connectWithKey(t.port, restricted.privateKey);
    await assert.rejects(forwardOut(c1, '127.0.0.1', web.port));
    assert.match(t.events.find((e) => e.type === 'forward-refused')?.reason ?? '', /no-port-forwarding/);
    c1.end();
    const c2 = await connectWithKey(bare.port, ops.privateKey);
    await assert.rejects(forwardOut(c2, '127.0.0.1', web.port));
    assert.match(bare.events.find((e) => e.type === 'forward-refused')?.reason ?? '', /not offered/);
    c2.end();
  } finally {
    await t.close();
    await bare.close();
    await web.close();
  }
});

test('a running command is aborted when the client disconnects', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    const c = await connectWithKey(t.port, ops.privateKey);
    client = c;
    await new Promise<void>((resolve, reject) => {
      c.exec('hang', (err) => { if (err !== undefined) reject(err); else resolve(); });
    });
    await waitFor('exec started', () => t.events.some((e) => e.type === 'exec'));
    c.end();
    await waitFor('exec ended after the disconnect', () => t.events.some((e) => e.type === 'exec-end'));
  } finally {
    client?.end();
    await t.close();
  }
});
