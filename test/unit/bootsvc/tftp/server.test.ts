/**
 * The TFTP server over loopback with the test client and raw sockets: serving, options, the
 * jail, refusals, the hook, malformed input, vanished and aborting clients, limits, stop.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TftpWireError } from '../../../../bootsvc/tftp/errors.js';
import { encodeAckPacket, encodeErrorPacket, encodeTftpRequest, type TftpPacket } from '../../../../bootsvc/tftp/packet.js';
import { startTftpServer, type TftpEvent, type TftpServer, type TftpServerOptions } from '../../../../bootsvc/tftp/tftp-server.js';
import { loadConnectedAddon } from '../../../../bootsvc/tftp/transfer-socket.js';
import { fetchFile, RawPeer } from './test-client.js';

/**
 * The three ways a transfer can run: on the addon's transfer thread (the default), on the
 * addon's sockets from the event loop, and on node:dgram. Every hand-back path of the thread
 * (final ACK, non-ACK datagram, unreachable, retries out, cancel) is tested in each mode.
 */
const MODES: readonly (readonly [string, Partial<TftpServerOptions>])[] = [
  ['transfer thread', { nativeSockets: true, transferThread: true }],
  ['native sockets on the event loop', { nativeSockets: true, transferThread: false }],
  ['node:dgram', { nativeSockets: false }],
];
/** The addon is built by `npm test` (build:native); without it the thread mode falls back to dgram. */
const ADDON_BUILT = loadConnectedAddon() !== undefined;
const threaded = (mode: Partial<TftpServerOptions>): boolean => ADDON_BUILT && mode.transferThread === true;

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface Fixture {
  root: string;
  extra: string;
  outside: string;
  files: Record<string, Buffer>;
}

async function makeFixture(t: TestContext): Promise<Fixture> {
  const base = await mkdtemp(join(tmpdir(), 'rackside-tftp-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'root');
  const extra = join(base, 'extra');
  const outside = join(base, 'outside');
  await Promise.all([mkdir(join(root, 'grub'), { recursive: true }), mkdir(extra), mkdir(outside)]);
  const files: Record<string, Buffer> = {
    'small.txt': Buffer.from('hello\nworld\r\n'),
    'exact.bin': randomBytes(1024),
    'empty.bin': Buffer.alloc(0),
    'big.bin': randomBytes(700_000),
    'grub/x86_64.mod': randomBytes(3000),
  };
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(root, name), bytes);
  await writeFile(join(extra, 'only-extra.cfg'), 'from the extra root');
  await writeFile(join(extra, 'small.txt'), 'shadowed by the first root');
  await writeFile(join(outside, 'secret'), 'must never be served');
  await symlink(join(outside, 'secret'), join(root, 'escape'));
  await symlink(outside, join(root, 'escape-dir'));
  await symlink(join(root, 'small.txt'), join(root, 'alias.txt'));
  return { root, extra, outside, files };
}

async function start(t: TestContext, fixture: Fixture, extra: Partial<TftpServerOptions> = {}): Promise<{ server: TftpServer; events: TftpEvent[] }> {
  const events: TftpEvent[] = [];
  const server = await startTftpServer({
    listen: { host: '127.0.0.1', port: 0 },
    roots: [fixture.root, fixture.extra],
    timeoutMs: 400,
    minTimeoutMs: 50,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  t.after(() => server.stop());
  return { server, events };
}

async function until<T>(check: () => T | undefined, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const fetches: Record<string, { file: string; options?: [string, string][]; expectOack?: string[] }> = {
  'lock-step, no options': { file: 'big.bin' },
  'blksize 1468 with tsize': { file: 'big.bin', options: [['blksize', '1468'], ['tsize', '0']], expectOack: ['blksize=1468', 'tsize=700000'] },
  'blksize 8192 windowsize 8': { file: 'big.bin', options: [['blksize', '8192'], ['windowsize', '8']], expectOack: ['blksize=8192', 'windowsize=8'] },
  'windowsize 16 at 512': { file: 'big.bin', options: [['windowsize', '16']], expectOack: ['windowsize=16'] },
  'exact multiple of the block size (final empty DATA)': { file: 'exact.bin', options: [['tsize', '0']], expectOack: ['tsize=1024'] },
  'empty file': { file: 'empty.bin', options: [['tsize', '0']], expectOack: ['tsize=0'] },
  'nested path with a leading slash (GRUB prefix)': { file: '/grub/x86_64.mod' },
  'backslash separators': { file: 'grub\\x86_64.mod' },
};

for (const [name, c] of Object.entries(fetches)) for (const [mode, socketOptions] of MODES) {
  test(`serves: ${name} (${mode})`, async (t) => {
    const fixture = await makeFixture(t);
    const { server } = await start(t, fixture, socketOptions);
    const options = (c.options ?? []).map(([n, v]) => ({ name: n, value: v }));
    const result = await fetchFile('127.0.0.1', server.address.port, c.file, { options });
    assert.equal(result.error, undefined);
    const expected = fixture.files[c.file.replace(/^\//, '').replaceAll('\\', '/')];
    assert.ok(expected !== undefined);
    assert.equal(sha256(result.data), sha256(expected));
    assert.deepEqual(result.oack?.map((o) => `${o.name}=${o.value}`), c.expectOack);
    await until(() => (server.stats().completedTransfers === 1 ? true : undefined), 'the transfer to finish');
    assert.equal(server.stats().activeTransfers, 0);
    assert.equal(server.stats().threadedTransfers, threaded(socketOptions) ? 1 : 0, 'ran on the transfer thread exactly when asked');
  });
}

test('flight recorder: request, oack, done with bytes, sizes and duration', async (t) => {
  const fixture = await makeFixture(t);
  let clock = 1_000_000;
  const { server, events } = await start(t, fixture, { now: () => (clock += 1) });
  await fetchFile('127.0.0.1', server.address.port, 'big.bin', { options: [{ name: 'blksize', value: '1468' }, { name: 'windowsize', value: '4' }, { name: 'utimeout', value: '1' }] });
  const done = await until(() => events.find((e) => e.type === 'done'), 'done');
  assert.deepEqual(events.map((e) => e.type), ['request', 'oack', 'done']);
  const [request, oack] = events;
  assert.ok(request?.type === 'request' && oack?.type === 'oack');
  assert.equal(request.file, 'big.bin');
  assert.equal(request.client.address, '127.0.0.1');
  assert.deepEqual(oack.ignoredOptions, [{ name: 'utimeout', value: '1', reason: 'unknown option' }]);
  assert.deepEqual([done.bytes, done.blockSize, done.windowSize], [700_000, 1468, 4]);
  assert.ok(done.durationMs > 0);
});

const refusals: Record<string, { file: string; code: number; message: RegExp; mode?: string }> = {
  'missing file: fast "file not found" (shim asks for revocations_sku.efi first)': { file: 'revocations_sku.efi', code: TftpWireError.fileNotFound, message: /file not found: revocations_sku\.efi/ },
  'parent directory': { file: '../outside/secret', code: TftpWireError.accessViolation, message: /parent directory/ },
  'absolute path out of the root': { file: '/../../../etc/passwd', code: TftpWireError.accessViolation, message: /parent directory/ },
  'absolute system path stays inside the root': { file: '/etc/passwd', code: TftpWireError.fileNotFound, message: /file not found: etc\/passwd/ },
  'backslash parent directory': { file: '..\\outside\\secret', code: TftpWireError.accessViolation, message: /parent directory/ },
  'symlink to a file outside the root': { file: 'escape', code: TftpWireError.accessViolation, message: /leads outside the served root/ },
  'symlinked directory outside the root': { file: 'escape-dir/secret', code: TftpWireError.accessViolation, message: /leads outside the served root/ },
  'a directory': { file: 'grub', code: TftpWireError.fileNotFound, message: /not a regular file/ },
  'non-ASCII name': { file: 'caf\xe9', code: TftpWireError.accessViolation, message: /not printable ASCII/ },
  'mail mode': { file: 'small.txt', mode: 'mail', code: TftpWireError.illegalOperation, message: /transfer mode "mail" is not supported/ },
};

for (const [name, c] of Object.entries(refusals)) {
  test(`refuses: ${name}`, async (t) => {
    const fixture = await makeFixture(t);
    const { server, events } = await start(t, fixture);
    const result = await fetchFile('127.0.0.1', server.address.port, c.file, c.mode === undefined ? {} : { mode: c.mode });
    assert.equal(result.error?.code, c.code);
    assert.match(result.error.message, c.message);
    assert.equal(result.data.length, 0);
    const error = await until(() => events.find((e) => e.type === 'error'), 'error event');
    assert.deepEqual([error.origin, error.errorCode], ['server', c.code]);
    assert.notEqual(result.serverPort, server.address.port, 'the ERROR comes from a new TID, as tftpd-hpa sends it');
  });
}

test('a symlink that stays inside the root is served', async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, fixture);
  const result = await fetchFile('127.0.0.1', server.address.port, 'alias.txt');
  assert.deepEqual(result.data, fixture.files['small.txt']);
});

test('roots are searched in order: the first root wins, the next serves what it lacks', async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, fixture);
  assert.deepEqual((await fetchFile('127.0.0.1', server.address.port, 'small.txt')).data, fixture.files['small.txt']);
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'only-extra.cfg')).data.toString(), 'from the extra root');
});

test('WRQ is refused: read-only server', async (t) => {
  const fixture = await makeFixture(t);
  const { server, events } = await start(t, fixture);
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('wrq', 'upload.bin'), server.address.port);
  const reply = await peer.waitFor((p) => p?.kind === 'error');
  assert.deepEqual(reply.packet, { kind: 'error', errorCode: TftpWireError.accessViolation, message: 'read-only server: write requests are refused' });
  const error = await until(() => events.find((e) => e.type === 'error'), 'error event');
  assert.equal(error.origin, 'server');
});

test('netascii mode converts line ends (tftp-hpa default mode)', async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, fixture);
  const result = await fetchFile('127.0.0.1', server.address.port, 'small.txt', { mode: 'netascii' });
  assert.deepEqual(result.data, Buffer.from('hello\r\nworld\r\0\r\n', 'latin1'));
});

test('the hook serves generated files, falls through with undefined, and a failing hook answers ERROR 0', async (t) => {
  const fixture = await makeFixture(t);
  const seen: string[] = [];
  const { server, events } = await start(t, fixture, {
    resolve: (path, client) => {
      seen.push(`${path} from ${client.address}`);
      if (path === 'grub/grub.cfg') return Promise.resolve(Buffer.from(`set default=0 # for ${client.address}\n`));
      if (path === 'broken.cfg') return Promise.reject(new Error('lookup store unavailable'));
      return Promise.resolve(undefined);
    },
  });
  const generated = await fetchFile('127.0.0.1', server.address.port, '/grub/grub.cfg', { options: [{ name: 'tsize', value: '0' }] });
  assert.equal(generated.data.toString(), 'set default=0 # for 127.0.0.1\n');
  assert.deepEqual(generated.oack, [{ name: 'tsize', value: String(generated.data.length) }]);
  assert.deepEqual((await fetchFile('127.0.0.1', server.address.port, 'small.txt')).data, fixture.files['small.txt']);
  const broken = await fetchFile('127.0.0.1', server.address.port, 'broken.cfg');
  assert.equal(broken.error?.code, TftpWireError.notDefined);
  assert.match(broken.error.message, /lookup store unavailable/);
  assert.deepEqual(seen, ['grub/grub.cfg from 127.0.0.1', 'small.txt from 127.0.0.1', 'broken.cfg from 127.0.0.1']);
  assert.ok(events.some((e) => e.type === 'error' && e.file === 'broken.cfg' && e.origin === 'server'));
});

for (const [mode, socketOptions] of MODES) test(`malformed and unexpected datagrams are dropped and counted; the server keeps serving (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, fixture, socketOptions);
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  for (const junk of ['', '00', '0009', '0001', '0001616200', '000100006f6374657400']) peer.send(Buffer.from(junk, 'hex'), server.address.port);
  peer.send(encodeAckPacket(1), server.address.port);
  await until(() => (server.stats().malformedPackets === 6 ? true : undefined), 'six malformed datagrams counted');
  assert.equal(server.stats().unexpectedPackets, 1);
  // A transfer socket counts malformed datagrams too, and the transfer survives them.
  peer.send(encodeTftpRequest('rrq', 'small.txt'), server.address.port);
  const first = await peer.waitFor((p) => p?.kind === 'data');
  peer.send(Buffer.from('0004', 'hex'), first.from.port);
  await until(() => (server.stats().malformedPackets === 7 ? true : undefined), 'the malformed ACK counted');
  peer.send(encodeAckPacket(1), first.from.port);
  await until(() => (server.stats().completedTransfers === 1 ? true : undefined), 'the transfer to complete');
  assert.equal(peer.received.filter((r) => r.packet?.kind === 'error').length, 0);
  assert.equal(server.stats().threadedTransfers, threaded(socketOptions) ? 1 : 0);
});

for (const [mode, socketOptions] of MODES) test(`duplicate ACKs do not resend (RFC 1123 §4.2.3.1); only the timer does (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, fixture, { ...socketOptions, timeoutMs: 3000, minTimeoutMs: 3000 });
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  const first = await peer.waitFor((p) => p?.kind === 'data');
  peer.send(encodeAckPacket(1), first.from.port);
  await peer.waitFor((p) => p?.kind === 'data' && p.block === 2);
  for (let i = 0; i < 5; i++) peer.send(encodeAckPacket(1), first.from.port);
  await until(() => (server.stats().transfers[0]?.counters.duplicateAcks === 5 ? true : undefined), 'five duplicate ACKs counted');
  assert.equal(server.stats().transfers[0]?.onTransferThread, threaded(socketOptions), 'stats show where the transfer runs');
  assert.equal(server.stats().transfers[0]?.bytesAcknowledged, 512, 'progress read from wherever it runs');
  const block2 = peer.received.filter((r) => r.packet?.kind === 'data' && r.packet.block === 2);
  assert.equal(block2.length, 1, 'block 2 was sent once');
});

for (const [mode, socketOptions] of MODES) test(`a client that vanishes mid-transfer is abandoned after the bounded retries and freed (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const { server, events } = await start(t, fixture, { ...socketOptions, timeoutMs: 100, minTimeoutMs: 100, maxRetries: 2 });
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('rrq', 'big.bin', 'octet', [{ name: 'blksize', value: '1024' }]), server.address.port);
  const oack = await peer.waitFor((p) => p?.kind === 'oack');
  const tid = oack.from.port;
  peer.send(encodeAckPacket(0), tid);
  for (let block = 1; block <= 3; block++) {
    await peer.waitFor((p) => p?.kind === 'data' && p.block === block);
    if (block < 3) peer.send(encodeAckPacket(block), tid);
  }
  // Silence: block 3 is never acknowledged.
  const error = await until(() => events.find((e) => e.type === 'error'), 'the transfer to be abandoned');
  assert.equal(error.origin, 'timeout');
  assert.equal(error.atBlock, 3);
  assert.equal(error.bytes, 2048);
  assert.match(error.message, /no ACK for block 3 after 2 retransmissions/);
  const stats = server.stats();
  assert.deepEqual([stats.activeTransfers, stats.failedTransfers, stats.transfers.length], [0, 1, 0]);
  const resent = peer.received.filter((r) => r.packet?.kind === 'data' && r.packet.block === 3).length;
  assert.equal(resent, 3, 'block 3: sent once, retransmitted twice');
});

for (const [mode, socketOptions] of MODES) test(`a client whose port closes is dropped at the next send (ICMP port unreachable) (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const { server, events } = await start(t, fixture, { ...socketOptions, timeoutMs: 200, minTimeoutMs: 200, maxRetries: 50 });
  const peer = await RawPeer.open();
  peer.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  const first = await peer.waitFor((p) => p?.kind === 'data');
  peer.close();
  const error = await until(() => events.find((e) => e.type === 'error'), 'the transfer to end', 8000);
  assert.equal(error.origin, 'unreachable');
  assert.match(error.message, /client port unreachable at block 1/);
  assert.equal(server.stats().activeTransfers, 0);
  assert.ok(first.from.port > 0);
});

for (const [mode, socketOptions] of MODES) test(`an ERROR from the client aborts the transfer and is recorded with its block (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const { server, events } = await start(t, fixture, socketOptions);
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  const first = await peer.waitFor((p) => p?.kind === 'data');
  peer.send(encodeAckPacket(1), first.from.port);
  await peer.waitFor((p) => p?.kind === 'data' && p.block === 2);
  peer.send(encodeErrorPacket(0, 'TFTP Aborted'), first.from.port);
  const error = await until(() => events.find((e) => e.type === 'error'), 'the abort to be recorded');
  assert.deepEqual([error.origin, error.errorCode, error.atBlock, error.bytes], ['client', 0, 2, 512]);
  assert.equal(error.message, 'aborted at block 2 by the client: error 0 "TFTP Aborted"');
  assert.equal(peer.received.filter((r) => r.packet?.kind === 'error').length, 0, 'an ERROR is never answered with an ERROR');
});

test('a retransmitted RRQ of a running transfer is ignored; requests beyond maxTransfers are dropped', async (t) => {
  const fixture = await makeFixture(t);
  const { server, events } = await start(t, fixture, { maxTransfers: 1, timeoutMs: 2000, minTimeoutMs: 2000 });
  const a = await RawPeer.open();
  const b = await RawPeer.open();
  t.after(() => {
    a.close();
    b.close();
  });
  a.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  await a.waitFor((p) => p?.kind === 'data');
  a.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  b.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  await until(() => (server.stats().busyDrops === 1 && server.stats().duplicateRequests === 1 ? true : undefined), 'the drops counted');
  assert.equal(server.stats().activeTransfers, 1);
  assert.equal(new Set(a.received.map((r) => r.from.port)).size, 1, 'one transfer, one TID');
  assert.equal(b.received.length, 0);
  assert.ok(events.some((e) => e.type === 'busy'));
});

for (const [mode, socketOptions] of MODES) test(`stop() ends running transfers with ERROR 0 and closes everything (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  const events: TftpEvent[] = [];
  const server = await startTftpServer({ ...socketOptions, listen: { host: '127.0.0.1', port: 0 }, roots: [fixture.root], onEvent: (e) => events.push(e) });
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  await peer.waitFor((p) => p?.kind === 'data');
  await server.stop();
  const reply = await peer.waitFor((p: TftpPacket | undefined) => p?.kind === 'error');
  assert.deepEqual(reply.packet, { kind: 'error', errorCode: 0, message: 'server stopping' });
  assert.equal(server.stats().activeTransfers, 0);
  assert.ok(events.some((e) => e.type === 'error' && e.origin === 'server' && e.message === 'server stopping'));
  await server.stop();
});

test('startTftpServer rejects when no root exists and no hook is given', async () => {
  await assert.rejects(startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: ['/nonexistent/rackside-tftp'] }), /no TFTP root exists/);
});

for (const [mode, socketOptions] of MODES) test(`a new request from the same client address ends the previous transfer's wait for its lost final ACK: done, unconfirmed, recorded before the new transfer's own done (${mode})`, async (t) => {
  const fixture = await makeFixture(t);
  // Without the new request the final block would be resent for a long time (5 s timer, 8 retries).
  const { server, events } = await start(t, fixture, { ...socketOptions, timeoutMs: 5000, minTimeoutMs: 5000 });
  const first = await RawPeer.open();
  const second = await RawPeer.open();
  t.after(() => {
    first.close();
    second.close();
  });
  first.send(encodeTftpRequest('rrq', 'small.txt'), server.address.port);
  await first.waitFor((p) => p?.kind === 'data' && p.block === 1);
  // small.txt is one short block: the final one. Its ACK is "lost". Another fetch of the same
  // file from the address is no sign of moving on (parallel clients behind one address).
  await fetchFile('127.0.0.1', server.address.port, 'small.txt');
  await until(() => (server.stats().completedTransfers === 1 ? true : undefined), 'the second small.txt transfer to complete');
  assert.equal(server.stats().transfers.filter((x) => x.file === 'small.txt').length, 1, 'the first small.txt transfer still waits for its final ACK');
  // The client asks for the next file.
  const asked = Date.now();
  second.send(encodeTftpRequest('rrq', 'grub/x86_64.mod'), server.address.port);
  const done = await until(() => events.find((e): e is Extract<TftpEvent, { type: 'done' }> => e.type === 'done' && e.client.port === first.port), 'the first transfer to end');
  assert.equal(done.confirmed, false);
  assert.ok(Date.now() - asked < 2000, 'ended by the new request, not by its retries');
  assert.equal(first.received.filter((r) => r.packet?.kind === 'data').length, 1, 'the final block was not resent');
  const result = await fetchFile('127.0.0.1', server.address.port, 'grub/x86_64.mod');
  assert.equal(sha256(result.data), sha256(fixture.files['grub/x86_64.mod'] ?? Buffer.alloc(0)));
  const modDone = await until(() => {
    const i = events.findIndex((e) => e.type === 'done' && e.file === 'grub/x86_64.mod');
    return i < 0 ? undefined : i;
  }, 'the next file done');
  assert.ok(events.indexOf(done) < modDone, 'the first file is recorded done before the next one');
  // A transfer that is not at its final block is not ended by another request from the address.
  const third = await RawPeer.open();
  t.after(() => {
    third.close();
  });
  third.send(encodeTftpRequest('rrq', 'big.bin'), server.address.port);
  const big = await third.waitFor((p) => p?.kind === 'data' && p.block === 1);
  await fetchFile('127.0.0.1', server.address.port, 'small.txt');
  third.send(encodeAckPacket(1), big.from.port);
  await third.waitFor((p) => p?.kind === 'data' && p.block === 2);
  assert.equal(server.stats().transfers.filter((x) => x.file === 'big.bin').length, 1, 'big.bin still runs');
  assert.equal(server.stats().unconfirmedTransfers, 1);
});
