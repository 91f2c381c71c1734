/** Router Advertisement encoding and Router Solicitation validation (RFC 4861 §4.1, §4.2, §6.1.1). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRouterSolicitation, encodeRouterAdvertisement, RaDecodeError, type RouterAdvertisement } from '../../../../bootsvc/ra/ra-codec.js';

const base: RouterAdvertisement = {
  curHopLimit: 64, managed: true, other: true, routerLifetimeSeconds: 0, reachableTimeMs: 0, retransTimerMs: 0,
  sourceMac: '52:54:00:12:34:56',
  prefixes: [{ prefix: 'fd00:1::1', length: 64, onLink: true, autonomous: false, validSeconds: 2_592_000, preferredSeconds: 604_800 }],
  dns: { addresses: ['fd00:1::53'], lifetimeSeconds: 1800 },
};

test('a router advertisement is encoded byte for byte: header, source link-layer address, prefix, RDNSS', () => {
  const hex = [
    '8600 0000', '40c0 0000', '0000 0000', '0000 0000', // type 134, code 0, checksum 0; hop limit 64, M|O, lifetime 0; reachable; retrans
    '0101 5254 0012 3456', // SLLA
    '0304 4080', '0027 8d00', '0009 3a80', '0000 0000', 'fd00 0001 0000 0000 0000 0000 0000 0000', // PIO: /64, L, host bits cleared
    '1903 0000', '0000 0708', 'fd00 0001 0000 0000 0000 0000 0000 0053', // RDNSS
  ].join('').replace(/ /g, '');
  assert.equal(encodeRouterAdvertisement(base).toString('hex'), hex);
});

test('flags and lifetimes follow the model: autonomous prefix, default router, no M/O', () => {
  const b = encodeRouterAdvertisement({ ...base, managed: false, other: false, routerLifetimeSeconds: 1800, prefixes: [{ ...base.prefixes[0]!, autonomous: true, length: 48 }] });
  assert.equal(b[5], 0x00);
  assert.equal(b.readUInt16BE(6), 1800);
  assert.equal(b[24 + 2], 48);
  assert.equal(b[24 + 3], 0xc0);
  assert.equal(b.subarray(24 + 16, 24 + 32).toString('hex'), 'fd000001000000000000000000000000');
});

test('options left out of the model are left out of the message', () => {
  const { sourceMac: _m, dns: _d, ...bare } = base;
  const b = encodeRouterAdvertisement({ ...bare, prefixes: [] });
  assert.equal(b.length, 16);
  assert.equal(encodeRouterAdvertisement({ ...base, dns: { addresses: [], lifetimeSeconds: 1 } }).length, 16 + 8 + 32);
});

test('values that do not fit are refused', () => {
  assert.throws(() => encodeRouterAdvertisement({ ...base, routerLifetimeSeconds: 9001 }), RangeError);
  assert.throws(() => encodeRouterAdvertisement({ ...base, sourceMac: '52:54:00' }), RangeError);
  assert.throws(() => encodeRouterAdvertisement({ ...base, prefixes: [{ ...base.prefixes[0]!, length: 129 }] }), RangeError);
  assert.throws(() => encodeRouterAdvertisement({ ...base, dns: { addresses: ['192.0.2.1'], lifetimeSeconds: 1 } }), RangeError);
});

const rs = (...bytes: number[]): Buffer => Buffer.from([133, 0, 0, 0, 0, 0, 0, 0, ...bytes]);
const slla = [1, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56];

test('a valid router solicitation yields the sender MAC when it names one', () => {
  assert.deepEqual(decodeRouterSolicitation(rs(...slla), 'fe80::5054:ff:fe12:3456', 255), { sourceMac: '52:54:00:12:34:56' });
  assert.deepEqual(decodeRouterSolicitation(rs(), '::', 255), {});
  assert.deepEqual(decodeRouterSolicitation(rs(99, 1, 0, 0, 0, 0, 0, 0), 'fe80::1', 255), {}); // unknown options are skipped
});

test('solicitations failing RFC 4861 §6.1.1 are refused with RaDecodeError and a reason', () => {
  const cases: Record<string, [Buffer, string, number, RegExp]> = {
    'hop limit below 255 (forwarded)': [rs(), 'fe80::1', 254, /hop limit 254/],
    'hop limit unknown': [rs(), 'fe80::1', -1, /hop limit -1/],
    'shorter than 8 bytes': [Buffer.from([133, 0, 0, 0]), 'fe80::1', 255, /fewer than 8/],
    'not type 133': [Buffer.from([134, 0, 0, 0, 0, 0, 0, 0]), 'fe80::1', 255, /type 134/],
    'code not 0': [Buffer.from([133, 1, 0, 0, 0, 0, 0, 0]), 'fe80::1', 255, /code 1/],
    'option of length 0': [rs(1, 0, 0, 0, 0, 0, 0, 0), 'fe80::1', 255, /length 0/],
    'option past the end': [rs(1, 2, 0, 0, 0, 0, 0, 0), 'fe80::1', 255, /past the end/],
    'truncated option header': [rs(1), 'fe80::1', 255, /length 0/],
    'link-layer address from ::': [rs(...slla), '::', 255, /unspecified/],
  };
  for (const [name, [bytes, source, hop, reason]] of Object.entries(cases)) {
    assert.throws(() => decodeRouterSolicitation(bytes, source, hop), (err: unknown) => err instanceof RaDecodeError && reason.test(err.reason), name);
  }
});
