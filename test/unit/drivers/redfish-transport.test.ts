/**
 * @module The per-BMC transport's connection contract against a real HTTP server: one connection
 * per BMC however many requests are queued, a reconnect of its own after the BMC closes an idle
 * connection (the power sweep every ~55 s meets BMCs whose keep-alive is a few seconds), and a
 * path from a BMC with a space in it percent-encoded as a URL would be, not refused.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedfishTransport } from '../../../drivers/redfish/transport.js';

interface Peer {
  readonly server: Server;
  endpoint: string;
  readonly paths: string[];
  connections: number;
}

async function startPeer(keepAliveTimeoutMs: number): Promise<Peer> {
  const paths: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    paths.push(req.url ?? '');
    // A little latency so that queued requests would overlap on a second connection if one opened.
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 5);
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  const peer: Peer = { server, endpoint: '', paths, connections: 0 };
  server.on('connection', () => { peer.connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return peer;
}

async function stopPeer(peer: Peer): Promise<void> {
  peer.server.closeAllConnections();
  await new Promise((resolve) => peer.server.close(resolve));
}

/** Runs `body` against a transport to a fresh peer, and closes both whatever happens. */
async function withTransport(keepAliveTimeoutMs: number, body: (transport: RedfishTransport, peer: Peer) => Promise<void>): Promise<void> {
  const peer = await startPeer(keepAliveTimeoutMs);
  const transport = new RedfishTransport({ endpoint: peer.endpoint, address: `redfish+${peer.endpoint}/redfish/v1/Systems/1`, disableCertificateVerification: false, timeoutMs: 5000, maxBodyBytes: 1 << 20 });
  try {
    await body(transport, peer);
  } finally {
    await transport.close();
    await stopPeer(peer);
  }
}

test('eight requests queued at once travel over one connection, in order', async () => {
  await withTransport(5000, async (transport, peer) => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => transport.exchange({ method: 'GET', path: `/redfish/v1/Systems/${i}` })));
    assert.deepEqual(answers.map((a) => a.status), Array<number>(8).fill(200));
    assert.equal(peer.connections, 1);
    assert.deepEqual(peer.paths, Array.from({ length: 8 }, (_, i) => `/redfish/v1/Systems/${i}`));
  });
});

test('after the BMC closes an idle connection, the next request reconnects and is answered', async () => {
  await withTransport(50, async (transport, peer) => {
    assert.equal((await transport.exchange({ method: 'GET', path: '/redfish/v1' })).status, 200);
    await sleep(300);
    assert.equal((await transport.exchange({ method: 'GET', path: '/redfish/v1' })).status, 200);
    assert.equal(peer.connections, 2);
  });
});

test('a path with a space is sent percent-encoded, as a URL would carry it', async () => {
  await withTransport(5000, async (transport, peer) => {
    const answer = await transport.exchange({ method: 'GET', path: '/redfish/v1/Systems/System 1?$expand=.' });
    assert.equal(answer.status, 200);
    assert.deepEqual(peer.paths, ['/redfish/v1/Systems/System%201?$expand=.']);
  });
});
