/**
 * @module The reverse tunnel against an in-process ssh2 bastion: forwards come up and carry
 * connections to the local targets, the pinned host key is enforced, drops and refusals lead
 * to backoff and reconnects, a silent bastion times out, and stop() ends everything.
 * (test/integration/ssh-tunnel.test.ts does the same against OpenSSH's sshd.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import type { ClientChannel, Connection } from 'ssh2';
import { createTunnel, disabledTunnelStatus, type TunnelOptions } from '../../../agent/ssh/index.js';
import { generateKey, scratchDir, waitFor } from './helpers.js';

interface FakeBastion {
  port: number;
  hostPublicKey: string;
  /** Connections that asked for tcpip-forward, with the port. */
  forwards: { conn: Connection; bindAddr: string; bindPort: number }[];
  connections: Connection[];
  refuseForward: boolean;
  close: () => Promise<void>;
}

async function startBastion(): Promise<FakeBastion> {
  const hostKey = generateKey('ed25519', 'bastion');
  const state: FakeBastion = { port: 0, hostPublicKey: hostKey.publicKey, forwards: [], connections: [], refuseForward: false, close: () => Promise.resolve() };
  const server = new ssh2.Server({ hostKeys: [hostKey.privateKey] }, (conn) => {
    state.connections.push(conn);
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => { if (ctx.method === 'publickey') ctx.accept(); else ctx.reject(['publickey']); });
    conn.on('request', (accept, reject, name, info) => {
      if (name !== 'tcpip-forward' || state.refuseForward) {
        reject?.();
        return;
      }
      state.forwards.push({ conn, bindAddr: info.bindAddr, bindPort: info.bindPort });
      accept?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () => new Promise<void>((resolve) => {
    for (const c of state.connections) c.end();
    server.close(() => { resolve(); });
  });
  return state;
}

/** A TCP server answering every line with `<name>:<line>`. */
async function startEcho(name: string): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('data', (d) => s.write(`${name}:${d.toString()}`));
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => { resolve(); }); }),
  };
}

/** What the bastion does when someone connects to the forwarded port: open forwarded-tcpip. */
function connectThrough(bastion: FakeBastion, remotePort: number): Promise<ClientChannel> {
  const forward = [...bastion.forwards].reverse().find((f) => f.bindPort === remotePort);
  if (forward === undefined) return Promise.reject(new Error(`no forward for ${remotePort}`));
  return new Promise((resolve, reject) => {
    forward.conn.forwardOut(forward.bindAddr, forward.bindPort, '203.0.113.5', 50000, (err, channel) => {
      if (err !== undefined) reject(err);
      else resolve(channel as unknown as ClientChannel);
    });
  });
}

async function roundTrip(channel: ClientChannel, text: string): Promise<string> {
  const reply = new Promise<string>((resolve) => channel.once('data', (d: Buffer) => { resolve(d.toString()); }));
  channel.write(text);
  const answer = await reply;
  channel.end();
  return answer;
}

function tunnelOptions(dir: string, bastion: FakeBastion, target: number, extra: Partial<TunnelOptions> = {}): TunnelOptions {
  const identity = join(dir, 'id_ed25519');
  writeFileSync(identity, generateKey('ed25519', 'rack1').privateKey, { mode: 0o600 });
  return {
    host: '127.0.0.1', port: bastion.port, user: 'rack1', hostKey: bastion.hostPublicKey, identity, remotePort: 22001,
    target: { host: '127.0.0.1', port: target },
    backoff: { initialMs: 20, maxMs: 100 }, readyTimeoutMs: 5000, keepaliveIntervalMs: 1000,
    ...extra,
  };
}

test('the tunnel forwards the SSH port and extra ports to their local targets', async () => {
  const bastion = await startBastion();
  const sshTarget = await startEcho('ssh');
  const webTarget = await startEcho('web');
  const { dir, cleanup } = scratchDir('tunnel');
  const tunnel = createTunnel(tunnelOptions(dir, bastion, sshTarget.port, {
    extraForwards: [{ remotePort: 22002, target: { host: '127.0.0.1', port: webTarget.port } }],
  }));
  try {
    assert.equal(tunnel.status().state, 'disabled');
    tunnel.start();
    await waitFor('connected', () => tunnel.status().state === 'connected');
    const status = tunnel.status();
    assert.equal(status.remotePort, 22001);
    assert.equal(status.reconnects, 0);
    assert.equal(status.lastError, undefined);
    assert.equal(status.bastion, `127.0.0.1:${bastion.port}`);
    assert.deepEqual(bastion.forwards.map((f) => [f.bindAddr, f.bindPort]), [['localhost', 22001], ['localhost', 22002]]);
    assert.equal(await roundTrip(await connectThrough(bastion, 22001), 'hello'), 'ssh:hello');
    assert.equal(await roundTrip(await connectThrough(bastion, 22002), 'page'), 'web:page');
  } finally {
    await tunnel.stop();
    assert.equal(tunnel.status().state, 'disabled');
    await Promise.all([bastion.close(), sshTarget.close(), webTarget.close()]);
    cleanup();
  }
});

test('a bastion with another host key is refused with both fingerprints named', async () => {
  const bastion = await startBastion();
  const { dir, cleanup } = scratchDir('tunnel');
  const tunnel = createTunnel(tunnelOptions(dir, bastion, 1, { hostKey: generateKey('ed25519', 'impostor').publicKey }));
  try {
    tunnel.start();
    await waitFor('a mismatch error', () => /host key mismatch/.test(tunnel.status().lastError ?? ''));
    const status = tunnel.status();
    assert.match(status.lastError ?? '', /presented ssh-ed25519 key SHA256:\S+, but ssh\.tunnel\.hostKey pins SHA256:\S+; refusing/);
    assert.match(status.bastionFingerprint ?? '', /^SHA256:/);
    assert.equal(bastion.forwards.length, 0, 'nothing was forwarded');
    await waitFor('retries', () => tunnel.status().reconnects >= 2);
    assert.notEqual(tunnel.status().state, 'connected');
  } finally {
    await tunnel.stop();
    await bastion.close();
    cleanup();
  }
});

test('after the bastion drops the connection the tunnel reconnects', async () => {
  const bastion = await startBastion();
  const target = await startEcho('ssh');
  const { dir, cleanup } = scratchDir('tunnel');
  const tunnel = createTunnel(tunnelOptions(dir, bastion, target.port));
  try {
    tunnel.start();
    await waitFor('connected', () => tunnel.status().state === 'connected');
    bastion.connections[0]!.end();
    await waitFor('reconnected', () => tunnel.status().state === 'connected' && tunnel.status().reconnects >= 1);
    assert.equal(bastion.forwards.length, 2, 'the forward was requested again');
    assert.equal(await roundTrip(await connectThrough(bastion, 22001), 'again'), 'ssh:again');
  } finally {
    await tunnel.stop();
    await Promise.all([bastion.close(), target.close()]);
    cleanup();
  }
});

test('a refused forward, a missing identity and a silent bastion each end in backoff with a reason', async () => {
  const bastion = await startBastion();
  bastion.refuseForward = true;
  const silentSockets = new Set<net.Socket>();
  const silent = net.createServer((s) => { silentSockets.add(s); s.on('error', () => undefined); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { dir, cleanup } = scratchDir('tunnel');
  const tunnels = [
    createTunnel(tunnelOptions(dir, bastion, 1)),
    createTunnel({ ...tunnelOptions(dir, bastion, 1), identity: join(dir, 'missing') }),
    createTunnel({ ...tunnelOptions(dir, bastion, 1), port: (silent.address() as AddressInfo).port, readyTimeoutMs: 200 }),
  ];
  const expected = [/refused to listen on port 22001/, /cannot read ssh\.tunnel\.identity .*missing/, /Timed out while waiting for handshake/];
  try {
    for (const t of tunnels) t.start();
    for (const [i, t] of tunnels.entries()) {
      await waitFor(`tunnel ${i} error`, () => expected[i]!.test(t.status().lastError ?? ''));
      await waitFor(`tunnel ${i} backoff`, () => t.status().state === 'backoff');
      assert.match(t.status().nextAttemptAt ?? '', /^\d{4}-\d\d-\d\dT/);
    }
  } finally {
    await Promise.all(tunnels.map((t) => t.stop()));
    await bastion.close();
    for (const s of silentSockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
    cleanup();
  }
});

test('bad pins are a config error; the disabled status has no port', () => {
  assert.throws(() => createTunnel({
    host: 'b', port: 22, user: 'u', hostKey: 'bastion.example.org', identity: '/x', remotePort: 1, target: { host: '127.0.0.1', port: 1 },
  }), /ssh\.tunnel\.hostKey: expected a SHA256/);
  assert.deepEqual(disabledTunnelStatus(0), { state: 'disabled', since: '1970-01-01T00:00:00.000Z', remotePort: null, reconnects: 0 });
});
