/**
 * @module The reverse tunnel against Debian's OpenSSH `sshd` as the bastion, on 127.0.0.1 with
 * a temp config (own host key, AuthorizedKeysFile in the temp dir, `sshd -D -e -f CONFIG`, as
 * root): the tunnel comes up, `ssh -p <forwarded port>` to the bastion reaches rackside's SSH
 * server and runs a command; killing sshd (listener and session processes, by PID) drops the
 * tunnel and a restarted sshd gets it back; a wrong pinned host key is refused.
 * sshd is killed by PID and the temp dir removed even on failure.
 * Without ssh/sshd/ssh-keygen or root the tests skip (RACKSIDE_REQUIRE_INTEGRATION=1: fail).
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { createTunnel, type Tunnel, type TunnelOptions } from '../../agent/ssh/index.js';
import { requireTools, runProgram, scratchDir, sshArgs, sshKeygen, startTestServer, waitFor } from '../unit/ssh/helpers.js';

const SSHD = '/usr/sbin/sshd';
const TOOLS = { ssh: 'openssh-client', 'ssh-keygen': 'openssh-client', [SSHD]: 'openssh-server' };

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A bastion: sshd with its config in `dir`. */
class Bastion {
  readonly dir: string;
  readonly port: number;
  private child: ChildProcess | undefined;
  log = '';

  constructor(dir: string, port: number, authorizedKey: string) {
    this.dir = dir;
    this.port = port;
    sshKeygen(dir, 'bastion_host_key');
    writeFileSync(join(dir, 'authorized_keys'), `${authorizedKey}\n`);
    writeFileSync(join(dir, 'sshd_config'), [
      `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${join(dir, 'bastion_host_key')}`, 'PidFile none',
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      // The temp dir lives under the world-writable /tmp, which StrictModes would reject.
      'StrictModes no', 'UsePAM no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password', 'AllowTcpForwarding yes', 'GatewayPorts no', 'LogLevel VERBOSE', '',
    ].join('\n'));
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation directory
  }

  get hostPublicKey(): string {
    return readFileSync(join(this.dir, 'bastion_host_key.pub'), 'utf8').trim();
  }

  /** Starts sshd and waits until it accepts TCP connections. */
  async start(): Promise<void> {
    const child = spawn(SSHD, ['-D', '-e', '-f', join(this.dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    child.stderr.on('data', (c: Buffer) => { this.log += c.toString(); });
    await waitFor(`sshd on port ${this.port} (log: ${this.log})`, () => new Promise<boolean>((resolve) => {
      if (child.exitCode !== null) throw new Error(`sshd exited ${child.exitCode}: ${this.log}`);
      const s = net.connect(this.port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => { resolve(false); });
    }));
  }

  /**
   * SIGKILLs the sshd we started and every process descending from it, by PID. Session
   * processes call setsid(), so a process-group kill would miss them and the tunnel would
   * survive; killing only the listener is what an sshd restart does, which keeps sessions.
   */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child?.pid === undefined || child.exitCode !== null) return;
    const pids = [child.pid, ...descendants(child.pid)];
    const closed = new Promise<void>((resolve) => child.once('close', () => { resolve(); }));
    for (const pid of pids.reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await closed;
  }
}

/** PIDs of all descendants of `root`, from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const pid of children.get(queue.shift() ?? -1) ?? []) {
      out.push(pid);
      queue.push(pid);
    }
  }
  return out;
}

interface Setup {
  bastion: Bastion;
  tunnelOptions: TunnelOptions;
  opsKey: string;
}

/** Sets up the bastion, rackside's server and keys; runs `body`; cleans up everything. */
async function withBastion(t: TestContext, body: (s: Setup) => Promise<void>): Promise<void> {
  if (!requireTools(t, TOOLS, true)) return;
  const { dir, cleanup } = scratchDir('bastion');
  let bastion: Bastion | undefined;
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
  try {
    server = await startTestServer('');
    const rack = sshKeygen(dir, 'rack_identity');
    const ops = sshKeygen(dir, 'ops');
    writeFileSync(server.authorizedKeysPath, `${ops.publicKey}\n`);
    bastion = new Bastion(dir, await freePort(), `restrict,port-forwarding,permitlisten="localhost:*" ${rack.publicKey}`);
    await bastion.start();
    const tunnelOptions: TunnelOptions = {
      host: '127.0.0.1', port: bastion.port, user: userInfo().username, hostKey: bastion.hostPublicKey,
      identity: rack.path, remotePort: await freePort(), target: { host: '127.0.0.1', port: server.port },
      keepaliveIntervalMs: 1000, keepaliveCountMax: 3, backoff: { initialMs: 50, maxMs: 500 },
    };
    await body({ bastion, tunnelOptions, opsKey: ops.path });
  } finally {
    await bastion?.kill();
    await server?.close();
    cleanup();
  }
}

async function stopAll(...tunnels: Tunnel[]): Promise<void> {
  await Promise.all(tunnels.map((x) => x.stop()));
}

test('through the tunnel, ssh to the bastion port reaches rackside; the tunnel survives an sshd restart', async (t) => {
  await withBastion(t, async ({ bastion, tunnelOptions, opsKey }) => {
    const tunnel = createTunnel(tunnelOptions);
    try {
      tunnel.start();
      await waitFor(`tunnel connected (${JSON.stringify(tunnel.status())}; sshd: ${bastion.log})`, () => tunnel.status().state === 'connected');
      const via = (): ReturnType<typeof runProgram> =>
        runProgram('ssh', [...sshArgs(tunnelOptions.remotePort, opsKey), 'ops@127.0.0.1', 'get', 'hosts']);
      const first = await via();
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, 'argv: ["get","hosts"]\n');

      await bastion.kill();
      await waitFor('the tunnel notices the drop', () => tunnel.status().state !== 'connected');
      assert.ok(tunnel.status().lastError !== undefined, 'the drop is explained');
      await bastion.start();
      await waitFor(`tunnel reconnected (${JSON.stringify(tunnel.status())})`, () => tunnel.status().state === 'connected');
      const status = tunnel.status();
      assert.ok(status.reconnects >= 1, JSON.stringify(status));
      assert.equal(status.remotePort, tunnelOptions.remotePort);
      assert.equal(status.lastError, undefined);
      const second = await via();
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, 'argv: ["get","hosts"]\n');
    } finally {
      await stopAll(tunnel);
    }
    assert.equal(tunnel.status().state, 'disabled');
  });
});

test('a bastion whose host key does not match the pin is refused', async (t) => {
  await withBastion(t, async ({ bastion, tunnelOptions }) => {
    const { dir, cleanup } = scratchDir('otherkey');
    const wrong = createTunnel({ ...tunnelOptions, hostKey: sshKeygen(dir, 'impostor').publicKey });
    try {
      wrong.start();
      await waitFor('the mismatch', () => /host key mismatch/.test(wrong.status().lastError ?? ''));
      const status = wrong.status();
      assert.notEqual(status.state, 'connected');
      assert.match(status.lastError ?? '', new RegExp(`127\\.0\\.0\\.1:${bastion.port} presented ssh-ed25519 key SHA256:`));
      assert.ok(!/Accepted publickey/.test(bastion.log), 'the tunnel never logged in');
    } finally {
      await stopAll(wrong);
      cleanup();
    }
  });
});
