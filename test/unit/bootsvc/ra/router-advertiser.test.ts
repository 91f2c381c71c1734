/** The sender with a fake socket: what it sends at start, on solicitations and at stop, and what it drops. */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import type { Icmp6Datagram } from '../../../../bootsvc/ra/raw-icmp6.js';
import { startRouterAdvertiser } from '../../../../bootsvc/ra/router-advertiser.js';

function harness() {
  const sent: { bytes: Buffer; destination: string }[] = [];
  let deliver: (d: Icmp6Datagram) => void = () => undefined;
  let closed = 0;
  const ra = startRouterAdvertiser({
    interface: 'lo', prefix: { address: 'fd00:1::1', length: 64 }, routerLifetimeSeconds: 1800, log: () => undefined, random: () => 0,
    intervals: { minMs: 200_000, maxMs: 600_000 },
    openSocket: (onMessage) => {
      deliver = onMessage;
      return { interfaceName: 'lo', interfaceIndex: 1, send: (bytes, destination) => { sent.push({ bytes, destination }); }, close: () => { closed++; } };
    },
  });
  return { ra, sent, deliver: (d: Icmp6Datagram) => { deliver(d); }, closed: () => closed };
}

const rs = Buffer.from([133, 0, 0, 0, 0, 0, 0, 0]);

test('an advertisement with M and O flags and the on-link prefix goes to ff02::1 at start', async (t) => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  t.after(() => { mock.timers.reset(); });
  const h = harness();
  const [first, ...more] = h.sent;
  const prefix = h.ra.advertisement.prefixes[0];
  assert.ok(first !== undefined && prefix !== undefined);
  assert.equal(more.length, 0);
  assert.equal(first.destination, 'ff02::1');
  assert.equal(first.bytes[0], 134);
  assert.equal(first.bytes[5], 0xc0);
  assert.equal(first.bytes.readUInt16BE(6), 1800);
  assert.equal(prefix.onLink, true);
  assert.equal(prefix.autonomous, false);
  mock.timers.tick(16_000); // second initial advertisement: capped at 16 s (RFC 4861 §6.2.4)
  assert.equal(h.ra.stats().unsolicitedSent, 2);
  await h.ra.stop();
});

test('a solicitation is answered, no sooner than 3 s after the last advertisement; malformed ones are counted and dropped', async (t) => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  t.after(() => { mock.timers.reset(); });
  const h = harness();
  h.deliver({ payload: rs, sourceAddress: 'fe80::1', hopLimit: 64 });
  h.deliver({ payload: Buffer.from([133, 0, 0]), sourceAddress: 'fe80::1', hopLimit: 255 });
  assert.deepEqual(h.ra.stats().dropped, { malformed: 2 });
  h.deliver({ payload: rs, sourceAddress: 'fe80::1', hopLimit: 255 });
  h.deliver({ payload: rs, sourceAddress: 'fe80::2', hopLimit: 255 });
  mock.timers.tick(2_999);
  assert.equal(h.ra.stats().solicitedSent, 0);
  mock.timers.tick(1);
  assert.equal(h.ra.stats().solicitedSent, 1, 'one answer for both pending solicitations');
  assert.equal(h.ra.stats().solicitationsReceived, 2);
  assert.equal(h.sent.length, 2);
  await h.ra.stop();
});

test('stop sends a last advertisement with router lifetime 0 and closes the socket once', async (t) => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  t.after(() => { mock.timers.reset(); });
  const h = harness();
  await h.ra.stop();
  await h.ra.stop();
  assert.equal(h.sent.length, 2);
  assert.equal(h.sent[1]?.bytes.readUInt16BE(6), 0);
  assert.equal(h.closed(), 1);
  mock.timers.tick(600_000);
  assert.equal(h.sent.length, 2, 'nothing after stop');
});
