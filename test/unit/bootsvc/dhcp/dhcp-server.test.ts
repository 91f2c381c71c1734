/**
 * The DHCP server's I/O layer on fake sockets: modes, DORA with routing and persistence,
 * restart stability, relay, link-layer unicast and its broadcast fallback, malformed datagrams,
 * pool exhaustion, lease-store failures, overload, lookup failures, open failures, the sweep.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDhcpServer } from '../../../../bootsvc/dhcp/dhcp-server.js';
import { encodePxeVendorOptions } from '../../../../bootsvc/dhcp/encapsulated.js';
import { DhcpOption } from '../../../../bootsvc/dhcp/options.js';
import { subnetsFromRanges } from '../../../../bootsvc/dhcp/server-events.js';
import { encodeClientMessage, optionText, replyType } from '../../../helpers/dhcp-packets.js';
import { FakeSocket, HTTP_BASE, MapLookup, MemoryLeaseStore, SERVER, startHarness, T0 } from './server-harness.js';

const MAC = '52:54:00:12:34:56';
const PXE_UEFI = { vendorClass: 'PXEClient:Arch:00007:UNDI:003016', archType: 7 };

test('mode off opens no socket and stops cleanly', async () => {
  let opened = 0;
  const server = await startDhcpServer({
    mode: 'off', interface: 'prov0', serverAddress: SERVER, bootLookup: new MapLookup(), bootFiles: { httpBaseUrl: HTTP_BASE },
    openSocket: () => { opened++; throw new Error('must not open'); },
  });
  await server.stop();
  assert.equal(opened, 0);
  assert.equal(server.mode, 'off');
  assert.deepEqual(server.stats().received, {});
});

test('full mode opens 67 and 4011; DORA offers from the range, ACKs after the lease is stored, and reports events', async () => {
  const h = await startHarness();
  assert.deepEqual([...h.sockets.keys()].sort((a, b) => a - b), [67, 4011]);
  await h.deliver({ type: 'discover', mac: MAC, xid: 1, ...PXE_UEFI });
  const offer = h.sent[0];
  assert.ok(offer);
  assert.equal(replyType(offer.packet), 'offer');
  assert.equal(offer.packet.yiaddr, '10.20.0.100');
  assert.equal(offer.packet.file, 'ipxe.efi');
  assert.equal(offer.packet.siaddr, SERVER);
  // RFC 2131 §4.1: no broadcast flag, no ciaddr → unicast to chaddr/yiaddr as a link-layer frame.
  assert.deepEqual([offer.kind, offer.mac, offer.address, offer.destinationPort], ['frame', MAC, '10.20.0.100', 68]);
  await h.deliver({ type: 'request', mac: MAC, xid: 2, serverId: SERVER, requestedAddress: '10.20.0.100', broadcast: true, ...PXE_UEFI });
  const ack = h.sent[1];
  assert.ok(ack);
  assert.equal(replyType(ack.packet), 'ack');
  assert.deepEqual([ack.kind, ack.address, ack.destinationPort], ['send', '255.255.255.255', 68]);
  assert.equal(h.store.records.get(MAC)?.state, 'bound');
  assert.equal(h.store.records.get(MAC)?.address, '10.20.0.100');
  assert.deepEqual(h.events.map((e) => `${e.message}${e.address === undefined ? '' : ` ${e.address}`}`), ['discover', 'offer 10.20.0.100', 'request 10.20.0.100', 'ack 10.20.0.100']);
  const first = h.events[0];
  assert.deepEqual([first?.arch, first?.firmware, first?.archType, first?.vendorClass], ['x86_64', 'uefi', 7, PXE_UEFI.vendorClass]);
  assert.equal(h.events[1]?.bootFile, 'ipxe.efi');
  assert.equal(h.lookup.queries[0]?.mac, MAC);
  const stats = h.server.stats();
  assert.deepEqual(stats.replies, { offer: 1, ack: 1 });
  assert.equal(stats.hardwareUnicast, 1);
  await h.server.stop();
  assert.ok([...h.sockets.values()].every((s) => s.closed));
});

test('a client keeps its address across a server restart (leases reloaded from the store)', async () => {
  const store = new MemoryLeaseStore();
  const a = await startHarness({}, store);
  await a.deliver({ type: 'discover', mac: '52:54:00:00:00:01', xid: 1 });
  await a.deliver({ type: 'discover', mac: MAC, xid: 2 });
  await a.deliver({ type: 'request', mac: MAC, xid: 3, serverId: SERVER, requestedAddress: '10.20.0.101' });
  assert.equal(replyType(a.sent[2]?.packet ?? assert.fail('no ack')), 'ack');
  await a.server.stop();
  const b = await startHarness({}, store);
  await b.deliver({ type: 'discover', mac: MAC, xid: 4 });
  assert.equal(b.sent[0]?.packet.yiaddr, '10.20.0.101');
  // INIT-REBOOT after the restart: the stored binding is honoured.
  await b.deliver({ type: 'request', mac: MAC, xid: 5, requestedAddress: '10.20.0.101' });
  assert.equal(replyType(b.sent[1]?.packet ?? assert.fail('no reply')), 'ack');
  await b.server.stop();
});

test('relayed requests use the giaddr subnet and go back to the relay on port 67 with option 82 echoed', async () => {
  const h = await startHarness();
  const relayInformation = Uint8Array.of(1, 4, 0x65, 0x74, 0x68, 0x31);
  await h.deliver({ type: 'discover', mac: MAC, giaddr: '10.30.0.1', relayInformation, ...PXE_UEFI }, { sourceAddress: '10.30.0.1', sourcePort: 67 });
  const offer = h.sent[0] ?? assert.fail('no offer');
  assert.deepEqual([offer.kind, offer.address, offer.destinationPort], ['send', '10.30.0.1', 67]);
  assert.equal(offer.packet.yiaddr, '10.30.0.100');
  assert.equal(offer.packet.giaddr, '10.30.0.1');
  assert.deepEqual([...(offer.packet.options.get(DhcpOption.relayAgentInformation) ?? [])], [...relayInformation]);
  assert.equal(h.events[0]?.giaddr, '10.30.0.1');
  await h.server.stop();
});

test('without CAP_NET_RAW link-layer unicast falls back to broadcast once and for all', async () => {
  const h = await startHarness();
  const socket = h.sockets.get(67) ?? assert.fail('no socket');
  socket.failFrames = 'EPERM';
  await h.deliver({ type: 'discover', mac: MAC, xid: 1 });
  socket.failFrames = undefined;
  await h.deliver({ type: 'discover', mac: '52:54:00:00:00:02', xid: 2 });
  assert.deepEqual(h.sent.map((s) => `${s.kind} ${s.address}:${s.destinationPort}`), ['send 255.255.255.255:68', 'send 255.255.255.255:68']);
  assert.equal(h.server.stats().hardwareUnicastFallbacks, 2);
  assert.ok(h.logs.some((l) => l.includes('CAP_NET_RAW')));
  await h.server.stop();
});

test('malformed datagrams are dropped and counted, and the server keeps answering', async () => {
  const h = await startHarness();
  const garbage = [new Uint8Array(0), new Uint8Array(100), Uint8Array.from({ length: 400 }, (_, i) => (i * 37) & 255)];
  for (const g of garbage) await h.deliver(g);
  // A real DISCOVER cut inside its options: option 55 now runs past the end.
  await h.deliver(encodeClientMessage({ type: 'discover', mac: MAC }).subarray(0, 250));
  assert.equal(h.server.stats().dropped.malformed, 4);
  assert.equal(h.sent.length, 0);
  await h.deliver({ type: 'discover', mac: MAC });
  assert.equal(h.sent.length, 1);
  await h.server.stop();
});

test('pool exhaustion: more clients than addresses get silence, one decision each, no retry loop', async () => {
  const h = await startHarness({ ranges: [{ subnet: '10.20.0.0/24', first: '10.20.0.100', last: '10.20.0.102' }] });
  for (let i = 0; i < 8; i++) await h.deliver({ type: 'discover', mac: `52:54:00:00:01:${i.toString(16).padStart(2, '0')}`, xid: i });
  const offered = h.sent.map((s) => s.packet.yiaddr);
  assert.deepEqual(offered, ['10.20.0.100', '10.20.0.101', '10.20.0.102']);
  const stats = h.server.stats();
  assert.equal(stats.ignored['pool-exhausted'], 5);
  assert.equal(stats.received['67'], 8);
  assert.equal(h.lookup.queries.length, 8);
  assert.equal(h.events.filter((e) => e.message === 'ignored' && e.detail === 'discover: pool-exhausted').length, 5);
  assert.equal(h.logs.filter((l) => l.includes('pool exhausted')).length, 1, 'the warning is rate-limited');
  await h.server.stop();
});

test('an ACK whose lease cannot be stored is not sent', async () => {
  const h = await startHarness();
  await h.deliver({ type: 'discover', mac: MAC });
  h.store.fail = true;
  await h.deliver({ type: 'request', mac: MAC, serverId: SERVER, requestedAddress: '10.20.0.100' });
  assert.deepEqual(h.sent.map((s) => replyType(s.packet)), ['offer']);
  assert.equal(h.server.stats().dropped['lease-store-error'], 1);
  assert.equal(h.events.at(-1)?.detail, 'request: lease-store-error');
  await h.server.stop();
});

test('proxy mode: boot information without an address on 67, and the PXE boot-server ACK on 4011', async () => {
  const h = await startHarness({ mode: 'proxy', ranges: [], leaseStore: undefined });
  await h.deliver({ type: 'discover', mac: MAC, ...PXE_UEFI });
  const offer = h.sent[0] ?? assert.fail('no proxy offer');
  assert.equal(offer.packet.yiaddr, '0.0.0.0');
  assert.equal(optionText(offer.packet, DhcpOption.vendorClass), 'PXEClient');
  assert.deepEqual([offer.kind, offer.address], ['send', '255.255.255.255']);
  await h.deliver({ type: 'discover', mac: '52:54:00:00:00:09' }); // not a netboot client: silence
  assert.equal(h.sent.length, 1);
  const bootItem = encodePxeVendorOptions({ bootItem: { type: 0, layer: 0 } });
  await h.deliver(
    { type: 'request', mac: MAC, ciaddr: '10.20.0.57', vendorSpecific: bootItem, ...PXE_UEFI },
    { port: 4011, sourceAddress: '10.20.0.57', sourcePort: 4011, destinationAddress: SERVER },
  );
  const ack = h.sent[1] ?? assert.fail('no boot-server ack');
  assert.deepEqual([ack.port, ack.kind, ack.address, ack.destinationPort], [4011, 'send', '10.20.0.57', 4011]);
  assert.equal(replyType(ack.packet), 'ack');
  assert.equal(ack.packet.file, 'ipxe.efi');
  assert.equal(h.server.stats().ignored['not-netboot-client'], 1);
  await h.server.stop();
});

test('a datagram that claims another interface is dropped (IP_PKTINFO check)', async () => {
  const h = await startHarness();
  await h.deliver({ type: 'discover', mac: MAC }, { interfaceIndex: 3 });
  assert.equal(h.sent.length, 0);
  assert.equal(h.server.stats().dropped['wrong-interface'], 1);
  await h.server.stop();
});

test('a failing BootLookup makes the client unknown, counted and logged', async () => {
  const lookup = new MapLookup();
  lookup.reject = true;
  const h = await startHarness({}, undefined, lookup);
  await h.deliver({ type: 'discover', mac: MAC });
  assert.equal(h.sent.length, 0);
  assert.equal(h.server.stats().lookupErrors, 1);
  assert.equal(h.server.stats().ignored['unknown-host'], 1);
  await h.server.stop();
});

test('unknown hosts: ignored by default, answered from discoveryLookup with unknownHosts discover', async () => {
  const lookup = new MapLookup();
  lookup.fallback = undefined;
  const ignoring = await startHarness({}, undefined, lookup);
  await ignoring.deliver({ type: 'discover', mac: MAC, ...PXE_UEFI });
  assert.equal(ignoring.sent.length, 0);
  await ignoring.server.stop();
  const discovery = new MapLookup();
  // The discovery answer is told apart from the main lookup's by its chain: Secure Boot's shim.
  discovery.fallback = { plan: { kind: 'ramdisk', purpose: 'discovery', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: HTTP_BASE }, secureBoot: true };
  const discovering = await startHarness({ unknownHosts: 'discover', discoveryLookup: discovery }, undefined, lookup);
  await discovering.deliver({ type: 'discover', mac: MAC, ...PXE_UEFI });
  assert.equal(discovering.sent[0]?.packet.file, 'shimx64.efi');
  await discovering.server.stop();
});

test('more requests in flight than maxInFlight are dropped as overload', async () => {
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const slow = { target: async () => { await gate; return { plan: { kind: 'local-disk' } } as const; } };
  const h = await startHarness({ maxInFlight: 1, bootLookup: slow });
  const socket = h.sockets.get(67) ?? assert.fail('no socket');
  for (const xid of [1, 2]) {
    socket.options.onMessage({ payload: encodeClientMessage({ type: 'discover', mac: MAC, xid }), sourceAddress: '0.0.0.0', sourcePort: 68, interfaceIndex: 7, destinationAddress: '255.255.255.255' });
  }
  assert.equal(h.server.stats().dropped.overload, 1);
  release();
  await h.settle();
  assert.equal(h.sent.length, 1);
  await h.server.stop();
});

test('a receive buffer capped below the one asked is warned about at start; kernel drops show in stats', async () => {
  const capped = await startHarness({
    openSocket: (o) => Object.assign(new FakeSocket(o, []), { receiveBufferBytes: 208 * 1024 }),
  });
  const warnings = capped.logs.filter((l) => l.startsWith('warn: ') && l.includes('receive buffer'));
  assert.equal(warnings.length, 2, capped.logs.join('\n'));
  assert.match(warnings[0]!, /prov0:67 got a 208 KiB receive buffer of the 1024 KiB asked: net\.core\.rmem_max caps it.*sysctl -w net\.core\.rmem_max=1048576/);
  await capped.server.stop();

  const h = await startHarness();
  assert.deepEqual(h.logs.filter((l) => l.includes('receive buffer')), [], 'no warning when the kernel granted the buffer');
  assert.equal(h.server.stats().dropped['socket-queue-full'], undefined);
  h.sockets.get(67)!.drops = 12;
  h.sockets.get(4011)!.drops = 3;
  assert.equal(h.server.stats().dropped['socket-queue-full'], 15);
  await h.server.stop();
});

test('a socket that cannot be opened fails the start and closes what was opened', async () => {
  const closed: number[] = [];
  await assert.rejects(
    startDhcpServer({
      mode: 'proxy', interface: 'prov0', serverAddress: SERVER, bootLookup: new MapLookup(), bootFiles: { httpBaseUrl: HTTP_BASE },
      openSocket: (o) => {
        if (o.port === 4011) throw Object.assign(new Error('bind on prov0 port 4011: Address already in use'), { code: 'EADDRINUSE' });
        return { interfaceName: 'prov0', interfaceIndex: 7, port: o.port, receiveBufferBytes: 1 << 20, kernelDrops: () => 0, send() {}, sendFrame() {}, close() { closed.push(o.port); } };
      },
    }),
    { code: 'EADDRINUSE' },
  );
  assert.deepEqual(closed, [67]);
});

test('bad options are refused with a clear message', async () => {
  const base = { interface: 'prov0', serverAddress: SERVER, bootLookup: new MapLookup(), bootFiles: { httpBaseUrl: HTTP_BASE } };
  await assert.rejects(startDhcpServer({ ...base, mode: 'full', ranges: [] }), /at least one range/);
  await assert.rejects(startDhcpServer({ ...base, mode: 'full', ranges: [{ subnet: '10.20.0.0/24', first: '10.20.0.100', last: '10.20.0.110' }] }), /needs a leaseStore/);
  await assert.rejects(startDhcpServer({ ...base, mode: 'proxy', serverAddress: 'nope' }), /serverAddress "nope"/);
  await assert.rejects(startDhcpServer({ ...base, mode: 'proxy', interface: 'a very long interface name' }), /interface/);
  assert.throws(() => subnetsFromRanges([{ subnet: '10.20.0.0', first: '10.20.0.1', last: '10.20.0.2' }]), /ADDRESS\/PREFIX/);
});

test('the sweep forgets expired offers and quarantines but keeps expired bindings', async () => {
  const store = new MemoryLeaseStore();
  store.records.set('52:54:00:00:00:01', { mac: '52:54:00:00:00:01', address: '10.20.0.100', state: 'offered', expiresAtMs: T0 - 1 });
  store.records.set('52:54:00:00:00:02', { mac: '52:54:00:00:00:02', address: '10.20.0.101', state: 'bound', expiresAtMs: T0 - 1 });
  store.records.set('declined:10.20.0.102', { mac: '52:54:00:00:00:03', address: '10.20.0.102', state: 'declined', expiresAtMs: T0 - 1 });
  store.records.set('52:54:00:00:00:04', { mac: '52:54:00:00:00:04', address: '10.20.0.103', state: 'offered', expiresAtMs: T0 + 60_000 });
  const h = await startHarness({ sweepIntervalMs: 5 }, store);
  for (let i = 0; i < 200 && store.records.size > 2; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual([...store.records.keys()].sort(), ['52:54:00:00:00:02', '52:54:00:00:00:04']);
  await h.server.stop();
});

test('a throwing logger, event listener or metrics sink never reaches the socket callback', async () => {
  const boom = (): never => {
    throw new Error('broken');
  };
  const h = await startHarness({ log: boom, onEvent: boom, metrics: boom });
  const socket = h.sockets.get(67) ?? assert.fail('no socket');
  assert.doesNotThrow(() => {
    socket.options.onMessage({ payload: Buffer.alloc(3), sourceAddress: '10.20.0.5', sourcePort: 68, interfaceIndex: 7, destinationAddress: SERVER });
  });
  await h.deliver({ type: 'discover', mac: MAC });
  assert.equal(h.server.stats().dropped.malformed, 1);
  assert.equal(h.sent.length, 1, 'still answering');
  await h.server.stop();
});

test('stop() gives up on a BootLookup that never answers after stopTimeoutMs', async () => {
  const never = { target: () => new Promise<never>(() => undefined) };
  const h = await startHarness({ bootLookup: never, stopTimeoutMs: 50 });
  const socket = h.sockets.get(67) ?? assert.fail('no socket');
  socket.options.onMessage({ payload: encodeClientMessage({ type: 'discover', mac: MAC }), sourceAddress: '0.0.0.0', sourcePort: 68, interfaceIndex: 7, destinationAddress: '255.255.255.255' });
  assert.equal(h.server.stats().inFlight, 1);
  await h.server.stop();
  assert.ok(h.logs.some((l) => l.includes('gave up waiting for 1 requests')));
});

test('the next boot stage asking again gets its durable lease back with the time left and no write; a retransmission during the write gets a write', async () => {
  const h = await startHarness();
  const leaseTime = (i: number): number => {
    const value = h.sent[i]?.packet.options.get(DhcpOption.leaseTime);
    return value === undefined ? -1 : Buffer.from(value).readUInt32BE(0);
  };
  await h.deliver({ type: 'discover', mac: MAC, xid: 1, ...PXE_UEFI });
  await h.deliver({ type: 'request', mac: MAC, xid: 2, serverId: SERVER, requestedAddress: '10.20.0.100', ...PXE_UEFI });
  assert.equal(leaseTime(1), 3600);
  assert.deepEqual(h.store.log, ['put 52:54:00:12:34:56 bound 10.20.0.100']);
  // iPXE, 12 s later: DORA again.
  h.clock.now += 12_000;
  await h.deliver({ type: 'discover', mac: MAC, xid: 3, userClass: 'iPXE', ...PXE_UEFI });
  await h.deliver({ type: 'request', mac: MAC, xid: 4, serverId: SERVER, requestedAddress: '10.20.0.100', userClass: 'iPXE', ...PXE_UEFI });
  assert.deepEqual([replyType(h.sent[2]?.packet ?? assert.fail()), leaseTime(2)], ['offer', 3588]);
  assert.deepEqual([replyType(h.sent[3]?.packet ?? assert.fail()), leaseTime(3)], ['ack', 3588]);
  assert.equal(h.store.log.length, 1, 'nothing written');
  assert.match(h.events.at(-1)?.detail ?? '', /^selecting, lease reused; sent /);
  // Past a quarter of the lease: renewed with a write.
  h.clock.now += 1000 * 1000;
  await h.deliver({ type: 'request', mac: MAC, xid: 5, requestedAddress: '10.20.0.100', ...PXE_UEFI });
  assert.deepEqual([replyType(h.sent[4]?.packet ?? assert.fail()), leaseTime(4)], ['ack', 3600]);
  assert.equal(h.store.log.length, 2);
  // A REQUEST retransmitted while that binding's write is still in flight is not acknowledged from memory.
  h.store.delayMs = 20;
  h.clock.now += 1000 * 1000;
  const socket = h.sockets.get(67) ?? assert.fail('no socket');
  const retransmitted = encodeClientMessage({ type: 'request', mac: MAC, xid: 6, requestedAddress: '10.20.0.100', ...PXE_UEFI });
  for (let i = 0; i < 2; i++) socket.options.onMessage({ payload: retransmitted, sourceAddress: '0.0.0.0', sourcePort: 68, interfaceIndex: socket.interfaceIndex, destinationAddress: '255.255.255.255' });
  for (let waited = 0; h.sent.length < 7 && waited < 2000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual([leaseTime(5), leaseTime(6)], [3600, 3600]);
  assert.ok(h.store.log.length >= 3, 'the retransmission waited for a write, not acknowledged from memory');
  await h.server.stop();
});
