/**
 * @module The interface-bound DHCP socket (native/udp-bind) on the loopback interface, against
 * the kernel itself: it reports the receive buffer the kernel granted, and counts the datagrams
 * the kernel dropped on a full receive queue (SO_RXQ_OVFL) — as of the next datagram read,
 * which is when the count reaches user space.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isUdpBindAddonAvailable, openBoundSocket, type BoundDatagram } from '../../../../bootsvc/dhcp/bound-socket.js';
import { skipOrFail } from '../../../helpers/integration.js';

async function waitUntil(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

test('a burst beyond the receive queue: every datagram is either read or counted as a kernel drop', async (t) => {
  if (!isUdpBindAddonAvailable()) {
    skipOrFail(t, 'native/udp-bind is not built (npm run build:native)');
    return;
  }
  const received: BoundDatagram[] = [];
  const socket = openBoundSocket({ interface: 'lo', port: 0, receiveBufferBytes: 16 * 1024, onMessage: (d) => { received.push(d); }, onError: () => undefined });
  t.after(() => { socket.close(); });
  // As root SO_RCVBUFFORCE grants exactly what was asked; otherwise rmem_max may cap it lower.
  if (process.getuid?.() === 0) assert.equal(socket.receiveBufferBytes, 16 * 1024);
  assert.ok(socket.receiveBufferBytes > 0 && socket.receiveBufferBytes <= 16 * 1024, `granted ${socket.receiveBufferBytes}`);

  const sender = createSocket('udp4');
  t.after(() => { sender.close(); });
  await new Promise<void>((resolve) => sender.bind(0, '127.0.0.1', resolve));
  const BURST = 400;
  const payload = Buffer.alloc(300, 0x42);
  // libuv sends at once while its queue is empty and loopback delivers in the same call, so the
  // whole burst reaches the socket before this event loop turns and the addon reads any of it.
  for (let i = 0; i < BURST; i++) sender.send(payload, socket.port, '127.0.0.1');
  await waitUntil(() => received.length > 0, 'the first datagrams');
  await sleep(100);
  const readOfBurst = received.length;
  assert.ok(readOfBurst < BURST, `a 16 KiB queue cannot hold ${BURST} datagrams (read ${readOfBurst})`);

  // The drops after the last queued datagram reach user space with the next datagram.
  sender.send(Buffer.from('probe'), socket.port, '127.0.0.1');
  await waitUntil(() => received.length === readOfBurst + 1, 'the probe');
  assert.equal(socket.kernelDrops(), BURST - readOfBurst, `read ${readOfBurst} of ${BURST}`);
  socket.close();
  assert.equal(socket.kernelDrops(), BURST - readOfBurst, 'the count outlives close');
});
