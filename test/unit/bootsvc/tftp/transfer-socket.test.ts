/**
 * A transfer's socket, both kinds (the native addon's connected socket with sendmmsg/recvmmsg,
 * and the node:dgram fallback), against a plain dgram peer on loopback: header + payload pairs
 * arrive as whole datagrams in order (also past one sendmmsg batch), ACKs come back as block
 * numbers and everything else as bytes, a closed client port is reported as unreachable, and
 * the addon refuses bad arguments and handles of the other kind.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createSocket, type Socket } from 'node:dgram';
import { test, type TestContext } from 'node:test';
import { encodeAckPacket, encodeErrorPacket } from '../../../../bootsvc/tftp/packet.js';
import { DEFAULT_NATIVE_ADDON_PATH, loadConnectedAddon, openTransferSocket, type TransferSocket } from '../../../../bootsvc/tftp/transfer-socket.js';

const addon = loadConnectedAddon();

/** Skips (or fails under RACKSIDE_REQUIRE_INTEGRATION=1) when the addon is not built. */
function requireAddon(t: TestContext): boolean {
  if (addon !== undefined) return true;
  if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') assert.fail(`native addon missing at ${DEFAULT_NATIVE_ADDON_PATH} (npm run build:native)`);
  t.skip('native addon not built (npm run build:native)');
  return false;
}

interface Peer {
  socket: Socket;
  port: number;
  received: Buffer[];
}

async function peer(t: TestContext, host = '127.0.0.1'): Promise<Peer> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const received: Buffer[] = [];
  socket.on('message', (m) => received.push(m));
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  t.after(() => {
    try {
      socket.close();
    } catch {
      // The test closed it already.
    }
  });
  return { socket, port: socket.address().port, received };
}

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Seen {
  acks: number[];
  datagrams: Buffer[];
  unreachable: number;
}

async function open(t: TestContext, native: boolean, remotePort: number, host = '127.0.0.1'): Promise<{ socket: TransferSocket; seen: Seen }> {
  const socket = await openTransferSocket(native ? addon : undefined, host, host, remotePort);
  t.after(() => {
    socket.close();
  });
  const seen: Seen = { acks: [], datagrams: [], unreachable: 0 };
  socket.setHandlers({
    ack: (block) => seen.acks.push(block),
    datagram: (bytes) => seen.datagrams.push(Buffer.from(bytes)),
    unreachable: () => seen.unreachable++,
  });
  return { socket, seen };
}

const kinds = { native: true, dgram: false } as const;

for (const [kind, native] of Object.entries(kinds)) {
  test(`${kind}: header + payload pairs arrive as whole datagrams, in order, past one batch`, async (t) => {
    if (native && !requireAddon(t)) return;
    const p = await peer(t);
    const { socket } = await open(t, native, p.port);
    assert.equal(socket.native, native);
    const count = 100;
    const parts: Buffer[] = [];
    for (let i = 0; i < count; i++) parts.push(Buffer.from([0, 3, i >> 8, i & 255]), Buffer.alloc(i % 7, i));
    assert.equal(socket.sendPairs(parts, count), count);
    socket.sendPacket(encodeErrorPacket(0, 'bye'));
    await until(() => (p.received.length === count + 1 ? true : undefined), `${count + 1} datagrams`);
    for (let i = 0; i < count; i++) assert.deepEqual(p.received[i], Buffer.concat([parts[2 * i] as Buffer, parts[2 * i + 1] as Buffer]), `datagram ${i}`);
    assert.deepEqual(p.received[count], encodeErrorPacket(0, 'bye'));
  });

  test(`${kind}: a run of equal datagrams with a short last one (segmentation offload where native) arrives whole and in order`, async (t) => {
    if (native && !requireAddon(t)) return;
    const p = await peer(t);
    p.socket.setRecvBufferSize(1 << 20);
    const { socket } = await open(t, native, p.port);
    for (const [blockSize, count] of [
      [512, 40],
      [8192, 10], // more than one 64 KiB send
    ] as const) {
      p.received.length = 0;
      const parts: Buffer[] = [];
      for (let i = 0; i < count; i++) parts.push(Buffer.from([0, 3, 0, i]), Buffer.alloc(i === count - 1 ? 100 : blockSize, i + 1));
      assert.equal(socket.sendPairs(parts, count, 4 + blockSize), count);
      await until(() => (p.received.length === count ? true : undefined), `${count} datagrams of ${blockSize}`);
      for (let i = 0; i < count; i++) {
        assert.deepEqual(p.received[i], Buffer.concat([parts[2 * i] as Buffer, parts[2 * i + 1] as Buffer]), `blksize ${blockSize}, datagram ${i}`);
      }
    }
  });

  test(`${kind}: ACKs arrive as block numbers, anything else as bytes`, async (t) => {
    if (native && !requireAddon(t)) return;
    const p = await peer(t);
    const { socket, seen } = await open(t, native, p.port);
    // The peer learns the transfer socket's port from its first datagram.
    const port = await new Promise<number>((resolve) => {
      p.socket.once('message', (_m, rinfo) => { resolve(rinfo.port); });
      socket.sendPacket(Buffer.from('hello'));
    });
    const send = (bytes: Buffer): Promise<void> => new Promise((resolve) => { p.socket.send(bytes, port, '127.0.0.1', () => { resolve(); }); });
    await send(encodeAckPacket(0x1234));
    await send(encodeErrorPacket(3, 'disk full'));
    await send(Buffer.from([0, 4, 0])); // a truncated ACK is no ACK
    for (let i = 0; i < 20; i++) await send(encodeAckPacket(i)); // more than one receive batch
    await until(() => (seen.acks.length === 21 && seen.datagrams.length === 2 ? true : undefined), 'the ACKs and datagrams');
    assert.deepEqual(seen.acks, [0x1234, ...Array.from({ length: 20 }, (_, i) => i)]);
    assert.deepEqual(seen.datagrams, [encodeErrorPacket(3, 'disk full'), Buffer.from([0, 4, 0])]);
  });

  test(`${kind}: a closed client port is reported as unreachable`, async (t) => {
    if (native && !requireAddon(t)) return;
    const p = await peer(t);
    const port = p.port;
    await new Promise<void>((resolve) => {
      p.socket.close(() => {
        resolve();
      });
    });
    const { socket, seen } = await open(t, native, port);
    const deadline = Date.now() + 5000;
    while (seen.unreachable === 0 && Date.now() < deadline) {
      socket.sendPacket(Buffer.from([0, 3, 0, 1]));
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(seen.unreachable > 0, 'ICMP port unreachable reported');
  });
}

test('native: IPv6 loopback works the same', async (t) => {
  if (!requireAddon(t)) return;
  let p: Peer;
  try {
    p = await peer(t, '::1');
  } catch {
    t.skip('no IPv6 loopback here');
    return;
  }
  const { socket } = await open(t, true, p.port, '::1');
  assert.equal(socket.native, true);
  assert.equal(socket.sendPairs([Buffer.from([0, 3, 0, 1]), Buffer.from('six')], 1), 1);
  await until(() => (p.received.length === 1 ? true : undefined), 'the datagram');
  assert.deepEqual(p.received[0], Buffer.from([0, 3, 0, 1, ...Buffer.from('six')]));
});

test('native: addresses the addon cannot take fall back to dgram instead of failing the transfer', async (t) => {
  if (!requireAddon(t)) return;
  const p = await peer(t);
  const refusing = {
    openConnected: () => {
      throw Object.assign(new Error('localAddress and remoteAddress must be IPv4 or IPv6 literals'), { code: 'ERR_INVALID_ARG' });
    },
    sendBatch: () => 0,
    closeConnected: () => undefined,
  };
  const socket = await openTransferSocket(refusing, '127.0.0.1', '127.0.0.1', p.port);
  t.after(() => {
    socket.close();
  });
  assert.equal(socket.native, false);
  socket.sendPacket(Buffer.from([0, 3, 0, 1]));
  await until(() => (p.received.length === 1 ? true : undefined), 'the datagram over dgram');
});

/** The addon's functions as loaded, for argument checks. */
interface RawAddon {
  openConnected(options: object): object;
  sendBatch(handle: object, parts: unknown, per: unknown, count: unknown): number;
  closeConnected(handle: object): void;
  send(handle: object, payload: Buffer, address: string, port: number): number;
}

test('native: bad arguments and handles of the other kind are refused with a code', async (t) => {
  if (!requireAddon(t)) return;
  const raw = createRequire(import.meta.url)(DEFAULT_NATIVE_ADDON_PATH) as RawAddon;
  const p = await peer(t);
  const codeOf = (f: () => unknown): unknown => {
    try {
      f();
    } catch (err) {
      return (err as { code?: unknown }).code;
    }
    return 'no error';
  };
  const callbacks = { onMessages: () => undefined, onError: () => undefined };
  assert.equal(codeOf(() => raw.openConnected({ localAddress: 'localhost', remoteAddress: '127.0.0.1', remotePort: p.port, ...callbacks })), 'ERR_INVALID_ARG');
  assert.equal(codeOf(() => raw.openConnected({ localAddress: '127.0.0.1', remoteAddress: '::1', remotePort: p.port, ...callbacks })), 'ERR_INVALID_ARG');
  assert.equal(codeOf(() => raw.openConnected({ localAddress: '127.0.0.1', remoteAddress: '127.0.0.1', remotePort: 0, ...callbacks })), 'ERR_INVALID_ARG');
  const handle = raw.openConnected({ localAddress: '127.0.0.1', remoteAddress: '127.0.0.1', remotePort: p.port, ...callbacks });
  assert.equal(codeOf(() => raw.sendBatch(handle, ['not a buffer'], 1, 1)), 'ERR_INVALID_ARG');
  assert.equal(codeOf(() => raw.sendBatch(handle, [Buffer.alloc(1)], 1, 2)), 'ERR_INVALID_ARG');
  assert.equal(codeOf(() => raw.sendBatch(handle, [Buffer.alloc(1)], 5, 0)), 'ERR_INVALID_ARG');
  assert.equal(codeOf(() => raw.send(handle, Buffer.alloc(1), '127.0.0.1', p.port)), 'ERR_INVALID_ARG', 'a connected handle is not a udp_bind handle');
  assert.equal(codeOf(() => raw.sendBatch({}, [Buffer.alloc(1)], 1, 1)), 'ERR_INVALID_ARG');
  raw.closeConnected(handle);
  raw.closeConnected(handle);
  assert.equal(codeOf(() => raw.sendBatch(handle, [Buffer.alloc(1)], 1, 1)), 'ERR_SOCKET_CLOSED');
});
