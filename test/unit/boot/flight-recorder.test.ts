import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFlightRecorder, type FlightRecorderOptions } from '../../../agent/boot/flight-recorder.js';
import { createMemoryStore } from '../../../agent/store/memory-store.js';
import type { Store } from '../../../agent/store/types.js';
import type { BootEvent } from '../../../bootsvc/events.js';
import { sampleHost } from '../../helpers/fake-backend.js';

const MAC = '52:54:00:aa:bb:01';

async function setup(): Promise<Store> {
  const store = createMemoryStore();
  await store.commit([{ kind: 'host', op: 'put', object: sampleHost('node-0', { spec: { bootMACAddress: '52:54:00:AA:BB:01' } }) }]);
  return store;
}

function clock(startMs = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

const discover: BootEvent = { kind: 'dhcp', message: 'discover', mac: MAC.toUpperCase(), arch: 'x86_64', archType: 7, firmware: 'uefi', vendorClass: 'PXEClient:Arch:00007:UNDI:003016', giaddr: '10.1.0.1' };

test('events are stored with the lower-case MAC, the host, source, reason and data', async () => {
  const store = await setup();
  const c = clock();
  const recorder = createFlightRecorder({ store, nowMs: c.now });
  recorder.record(discover);
  recorder.record({ kind: 'dhcp', message: 'ack', mac: MAC, address: '10.0.0.50', bootFile: 'ipxe.efi' });
  recorder.record({ kind: 'tftp', phase: 'done', clientAddress: '10.0.0.50', file: 'ipxe.efi', bytes: 1024, durationMs: 12 });
  recorder.record({ kind: 'http', method: 'GET', path: '/boot/52-54-00-aa-bb-01.ipxe', status: 200, bytes: 300, durationMs: 2, clientAddress: '10.0.0.50', completed: true });
  await recorder.flush();
  const events = await store.listEvents({ mac: MAC });
  assert.deepEqual(events.map((e) => [e.source, e.reason, e.host, e.mac]), [
    ['bootsvc:dhcp', 'DHCPDiscover', 'node-0', MAC],
    ['bootsvc:dhcp', 'DHCPAck', 'node-0', MAC],
    ['bootsvc:tftp', 'TFTPTransferDone', 'node-0', MAC],
    ['bootsvc:http', 'HTTPRequest', 'node-0', MAC],
  ]);
  const [first, , third] = events;
  assert.ok(first && third);
  assert.equal(first.time, new Date(c.now()).toISOString());
  assert.deepEqual(first.data, { message: 'discover', arch: 'x86_64', archType: 7, firmware: 'uefi', vendorClass: 'PXEClient:Arch:00007:UNDI:003016', giaddr: '10.1.0.1' });
  assert.match(first.message, /DHCPDISCOVER from 52:54:00:aa:bb:01 \(x86_64 UEFI, PXEClient:Arch:00007:UNDI:003016, via relay 10\.1\.0\.1\)/);
  assert.match(third.message, /TFTP sent ipxe\.efi \(1024 bytes in 12 ms\)/);
  assert.equal(recorder.stats().recorded, 4);
  await recorder.close();
});

test('an address never seen in a DHCP ACK stays without MAC or host', async () => {
  const store = await setup();
  const recorder = createFlightRecorder({ store });
  recorder.record({ kind: 'tftp', phase: 'rrq', clientAddress: '10.9.9.9', file: 'undionly.kpxe' });
  await recorder.flush();
  const [event] = await store.listEvents({});
  assert.ok(event);
  assert.equal(event.mac, undefined);
  assert.equal(event.host, undefined);
  await recorder.close();
});

test('BMC events get the host\'s boot MAC', async () => {
  const store = await setup();
  const recorder = createFlightRecorder({ store });
  recorder.record({ kind: 'bmc', host: 'node-0', call: 'power-on', ok: false, detail: 'timeout' });
  await recorder.flush();
  const [event] = await store.listEvents({ host: 'node-0' });
  assert.ok(event);
  assert.equal(event.mac, MAC);
  assert.equal(event.type, 'Warning');
  assert.equal(event.reason, 'BMCCallFailed');
  await recorder.close();
});

test('a storm from one MAC is cut at its burst, summarized once the bucket refills', async () => {
  const store = await setup();
  const c = clock();
  const options: FlightRecorderOptions = { store, nowMs: c.now, perClientBurst: 5, perClientPerSecond: 1 };
  const recorder = createFlightRecorder(options);
  for (let i = 0; i < 1000; i++) recorder.record(discover);
  recorder.record({ ...discover, mac: '52:54:00:aa:bb:02' });
  await recorder.flush();
  assert.equal((await store.listEvents({ mac: MAC })).length, 5);
  assert.equal((await store.listEvents({ mac: '52:54:00:aa:bb:02' })).length, 1, 'another client is not starved');
  assert.equal(recorder.stats().suppressed, 995);
  c.advance(1000);
  recorder.record(discover);
  await recorder.flush();
  const events = await store.listEvents({ mac: MAC });
  assert.equal(events.length, 7);
  const summary = events[5];
  assert.ok(summary);
  assert.equal(summary.reason, 'BootEventsSuppressed');
  assert.match(summary.message, /995 boot events from 52:54:00:aa:bb:01 were not recorded/);
  assert.equal(events[6]?.reason, 'DHCPDiscover');
  await recorder.close();
});

test('a storm of random MACs is cut by the global bucket', async () => {
  const store = await setup();
  const c = clock();
  const recorder = createFlightRecorder({ store, nowMs: c.now, globalBurst: 50, globalPerSecond: 10 });
  for (let i = 0; i < 2000; i++) {
    const mac = `52:54:01:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
    recorder.record({ ...discover, mac });
  }
  await recorder.flush();
  assert.equal((await store.listEvents({ limit: 10_000 })).length, 50);
  assert.equal(recorder.stats().suppressed, 1950);
  await recorder.close();
});

test('a failing store is counted and logged, never thrown', async () => {
  const store = await setup();
  const warnings: string[] = [];
  const failing = { hostSnapshot: store.hostSnapshot.bind(store), onChange: store.onChange.bind(store), appendEvents: () => Promise.reject(new Error('disk full')) };
  const logger = { warn: (_obj: object, msg?: string) => { warnings.push(msg ?? ''); } };
  const recorder = createFlightRecorder({ store: failing, logger });
  recorder.record(discover);
  await recorder.flush();
  assert.equal(recorder.stats().failed, 1);
  assert.deepEqual(warnings, ['flight recorder: could not store boot events']);
  await recorder.close();
});

test('events are batched and written without an explicit flush', async () => {
  const store = await setup();
  const recorder = createFlightRecorder({ store, flushDelayMs: 1 });
  recorder.record(discover);
  for (let i = 0; i < 100 && (await store.listEvents({})).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal((await store.listEvents({})).length, 1);
  await recorder.close();
  recorder.record(discover);
  await recorder.flush();
  assert.equal((await store.listEvents({})).length, 1, 'nothing is recorded after close');
});

test('the pending queue is bounded', async () => {
  const store = await setup();
  const recorder = createFlightRecorder({ store, maxPending: 3, perClientBurst: 100 });
  for (let i = 0; i < 10; i++) recorder.record(discover);
  assert.equal(recorder.stats().pending, 3);
  assert.equal(recorder.stats().overflowed, 7);
  await recorder.close();
});

test('a large batch is stored in slices of at most 50 events, in order, and a failing slice loses only its own events', async () => {
  const store = await setup();
  const calls: number[] = [];
  let call = 0;
  const slicing = {
    hostSnapshot: store.hostSnapshot.bind(store),
    appendEvents: (events: Parameters<Store['appendEvents']>[0]) => {
      calls.push(events.length);
      return (call++ === 1 ? Promise.reject(new Error('disk full')) : store.appendEvents(events));
    },
  };
  const recorder = createFlightRecorder({ store: slicing, logger: { warn: () => undefined }, globalBurst: 1000 });
  for (let i = 0; i < 180; i++) recorder.record({ ...discover, mac: `52:54:02:00:00:${i.toString(16).padStart(2, '0')}` });
  await recorder.flush();
  assert.deepEqual(calls, [50, 50, 50, 30]);
  assert.equal(recorder.stats().failed, 50);
  const stored = await store.listEvents({ limit: 1000 });
  assert.equal(stored.length, 130);
  const macs = stored.map((e) => e.mac);
  assert.deepEqual(macs, [...Array.from({ length: 50 }, (_, i) => i), ...Array.from({ length: 80 }, (_, i) => i + 100)].map((i) => `52:54:02:00:00:${i.toString(16).padStart(2, '0')}`));
  await recorder.close();
});
