/**
 * @module rackside's SSH server against the real OpenSSH client (`ssh`, `ssh-keygen`, `curl`):
 * exec output and exit codes, unknown keys and password/keyboard-interactive refused (not even
 * offered), `from=` and `command=`, `ssh -L` to the management listener (curl through it) and
 * to anything else refused, `ssh -R` refused, the REPL over `ssh -tt`, rate limiting after
 * repeated failures, and the audit trail with ssh-keygen's fingerprints. Every ssh process is
 * killed by PID and every temp dir removed, also on failure.
 * Without ssh/ssh-keygen/curl the tests skip (RACKSIDE_REQUIRE_INTEGRATION=1: fail).
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  requireTools, runProgram, scratchDir, sshArgs, sshKeygen, startHttpServer, startTestServer, waitFor, type TestServer,
} from '../unit/ssh/helpers.js';

const TOOLS = { ssh: 'openssh-client', 'ssh-keygen': 'openssh-client', curl: 'curl' };

interface Keys {
  ops: { path: string; publicKey: string };
  stranger: { path: string; publicKey: string };
  forced: { path: string; publicKey: string };
  remote: { path: string; publicKey: string };
}

/** Sets up keys, the management stand-in and the server; runs `body`; cleans everything up. */
async function withServer(t: TestContext, body: (s: TestServer, keys: Keys, webPort: number, otherPort: number) => Promise<void>, extra = {}): Promise<void> {
  if (!requireTools(t, TOOLS)) return;
  const keysDir = scratchDir('sshkeys');
  const web = await startHttpServer('rackside status page');
  const other = await startHttpServer('some other service');
  let server: TestServer | undefined;
  try {
    const keys: Keys = {
      ops: sshKeygen(keysDir.dir, 'ops'),
      stranger: sshKeygen(keysDir.dir, 'stranger'),
      forced: sshKeygen(keysDir.dir, 'forced'),
      remote: sshKeygen(keysDir.dir, 'remote'),
    };
    const authorizedKeys = [
      '# operators',
      keys.ops.publicKey,
      'this line is broken',
      `command="rackside get hosts -o wide",no-pty ${keys.forced.publicKey}`,
      `from="192.0.2.0/24,!127.0.0.1" ${keys.remote.publicKey}`,
      '',
    ].join('\n');
    server = await startTestServer(authorizedKeys, { forwardTarget: { host: '127.0.0.1', port: web.port }, ...extra });
    await body(server, keys, web.port, other.port);
  } finally {
    await server?.close();
    await web.close();
    await other.close();
    keysDir.cleanup();
  }
}

function ssh(port: number, key: string, args: string[], input = ''): ReturnType<typeof runProgram> {
  return runProgram('ssh', [...sshArgs(port, key), ...args], input);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `ssh -N` with forwarding options in the background; killed by PID by the caller. */
function startForwarder(port: number, key: string, options: string[]): { child: ChildProcess } {
  const child = spawn('ssh', [...sshArgs(port, key), '-N', '-o', 'ExitOnForwardFailure=yes', ...options, 'ops@127.0.0.1'], { stdio: ['ignore', 'ignore', 'ignore'] });
  return { child };
}

function killByPid(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('close', () => { resolve(); });
    if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  });
}

function fingerprintOf(publicKeyPath: string): string {
  const out = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', publicKeyPath], { encoding: 'utf8' }).stdout;
  return out.split(' ')[1] ?? '';
}

test('exec prints what the command printed and returns its exit code', async (t) => {
  await withServer(t, async (s, keys) => {
    const ok = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'get', 'hosts']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'argv: ["get","hosts"]\n');
    const failed = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'warn', '&&', 'true']);
    assert.equal(failed.code, 2, 'shell operators are refused with a usage exit code');
    const warn = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'rackside warn "a b"']);
    assert.equal(warn.stdout, 'argv: ["warn","a b"]\n');
    assert.match(warn.stderr, /a warning/);
    const code = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'fail', '42']);
    assert.equal(code.code, 42);
    const stdin = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'cat'], 'from stdin\n');
    assert.equal(stdin.stdout, 'cat:from stdin\n');
  });
});

test('an unknown key is refused; password and keyboard-interactive are not even offered', async (t) => {
  await withServer(t, async (s, keys) => {
    const unknown = await ssh(s.port, keys.stranger.path, ['ops@127.0.0.1', 'get', 'hosts']);
    assert.equal(unknown.code, 255);
    assert.match(unknown.stderr, /Permission denied \(publickey\)/);
    assert.equal(unknown.stdout, '');
    for (const method of ['password', 'keyboard-interactive']) {
      const r = await ssh(s.port, keys.ops.path, ['-o', `PreferredAuthentications=${method}`, 'ops@127.0.0.1', 'get', 'hosts']);
      assert.equal(r.code, 255, method);
      assert.match(r.stderr, /Permission denied \(publickey\)/, method);
    }
    assert.ok(!s.events.some((e) => e.method === 'password' || e.method === 'keyboard-interactive'), 'the client never sent a password');
    const failure = s.events.find((e) => e.type === 'auth-failure');
    assert.equal(failure?.fingerprint, fingerprintOf(`${keys.stranger.path}.pub`));
    assert.equal(failure.reason, 'key not in authorized_keys');
  });
});

test('from= refuses a key from another source; command= forces the command', async (t) => {
  await withServer(t, async (s, keys) => {
    const remote = await ssh(s.port, keys.remote.path, ['ops@127.0.0.1', 'get', 'hosts']);
    assert.equal(remote.code, 255);
    assert.ok(s.events.some((e) => e.reason === 'source address not allowed by from=' && e.keyComment === 'remote'));
    const forced = await ssh(s.port, keys.forced.path, ['ops@127.0.0.1', 'delete', 'host', 'node-1']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout, 'argv: ["get","hosts","-o","wide"]\n');
    const exec = s.events.find((e) => e.type === 'exec' && e.forced === true);
    assert.equal(exec?.requestedCommand, 'delete host node-1');
  });
});

test('ssh -L reaches the management listener and nothing else', async (t) => {
  await withServer(t, async (s, keys, webPort, otherPort) => {
    const goodPort = await freePort();
    const badPort = await freePort();
    const good = startForwarder(s.port, keys.ops.path, ['-L', `${goodPort}:127.0.0.1:${webPort}`]);
    const bad = startForwarder(s.port, keys.ops.path, ['-L', `${badPort}:127.0.0.1:${otherPort}`]);
    try {
      let body = '';
      await waitFor('the page through -L', async () => {
        const r = await runProgram('curl', ['-sS', '--max-time', '5', `http://127.0.0.1:${goodPort}/`]);
        body = r.stdout;
        return r.code === 0;
      });
      assert.equal(body, 'rackside status page');
      // Until ssh listens on badPort curl cannot connect at all; after that it connects and is cut off.
      let refused = await runProgram('curl', ['-sS', '--max-time', '5', `http://127.0.0.1:${badPort}/`]);
      await waitFor('the second forwarder listening', async () => {
        refused = await runProgram('curl', ['-sS', '--max-time', '5', `http://127.0.0.1:${badPort}/`]);
        return !/Failed to connect|Couldn't connect/i.test(refused.stderr);
      });
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.ok(!refused.stdout.includes('some other service'));
      assert.deepEqual(s.events.find((e) => e.type === 'forward-refused')?.destination, { host: '127.0.0.1', port: otherPort });
      assert.ok(s.events.some((e) => e.type === 'forward-allowed' && e.destination?.port === webPort));
    } finally {
      await killByPid(good.child);
      await killByPid(bad.child);
    }
  });
});

test('ssh -R is refused', async (t) => {
  await withServer(t, async (s, keys) => {
    const r = await ssh(s.port, keys.ops.path, ['-N', '-o', 'ExitOnForwardFailure=yes', '-R', '0:127.0.0.1:9', 'ops@127.0.0.1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote port forwarding failed/);
    assert.ok(s.events.some((e) => e.type === 'request-refused' && e.request === 'tcpip-forward'));
  });
});

test('the interactive shell over ssh -tt runs commands from stdin', async (t) => {
  await withServer(t, async (s, keys) => {
    const r = await ssh(s.port, keys.ops.path, ['-tt', 'ops@127.0.0.1'], 'get hosts\nhelp\nexit 4\n');
    assert.equal(r.code, 4, r.stderr);
    assert.ok(r.stdout.includes('rackside> '), r.stdout);
    assert.ok(r.stdout.includes('argv: ["get","hosts"]\r\n'), r.stdout);
    assert.ok(r.stdout.includes('fake help'), r.stdout);
    assert.deepEqual(s.events.filter((e) => e.type === 'shell-start' || e.type === 'shell-end').map((e) => [e.type, e.exitCode]),
      [['shell-start', undefined], ['shell-end', 4]]);
    const forcedShell = await ssh(s.port, keys.forced.path, ['-T', 'ops@127.0.0.1'], 'exit\n');
    assert.equal(forcedShell.stdout, 'argv: ["get","hosts","-o","wide"]\n', 'the forced command replaces the shell');
    // OpenSSH's client gives up when a pty it insisted on (-tt) is refused, as against sshd.
    const noPty = await ssh(s.port, keys.forced.path, ['-tt', 'ops@127.0.0.1'], 'exit\n');
    assert.equal(noPty.code, 255);
    assert.match(noPty.stderr, /PTY allocation request failed/);
    assert.ok(s.events.some((e) => e.type === 'request-refused' && e.request === 'pty'), 'no-pty refused the pty');
  });
});

test('repeated failures from one source ban it; the audit trail shows what happened', async (t) => {
  await withServer(t, async (s, keys) => {
    for (let i = 1; i <= 3; i++) {
      const r = await ssh(s.port, keys.stranger.path, ['ops@127.0.0.1', 'get', 'hosts']);
      assert.equal(r.code, 255);
      await waitFor(`failure ${i} counted`, () => s.server.counters().failedConnections === i);
    }
    const dropped = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'get', 'hosts']);
    assert.equal(dropped.code, 255, 'even a good key is dropped while banned');
    assert.equal(dropped.stdout, '');
    assert.match(dropped.stderr, /Connection (closed|reset)|kex_exchange_identification/);
    assert.ok(s.events.some((e) => e.type === 'rate-limited'));
    assert.ok(s.events.some((e) => e.type === 'connection-dropped'));
    s.clock.nowMs += 10 * 60_000;
    const after = await ssh(s.port, keys.ops.path, ['ops@127.0.0.1', 'get', 'hosts']);
    assert.equal(after.code, 0, after.stderr);
    const success = s.events.find((e) => e.type === 'auth-success');
    assert.equal(success?.fingerprint, fingerprintOf(`${keys.ops.path}.pub`));
    assert.equal(success.user, 'ops');
    assert.equal(success.address, '127.0.0.1');
    assert.equal(success.keyLine, 2);
  }, { rateLimit: { maxFailures: 3, windowMs: 60_000, banMs: 300_000 } });
});
