// RMCP+ session wrapper: AES-CBC-128 confidentiality pad, integrity pad, AuthCode checks,
// refusals and the replay window. Random and mutated datagrams: test/fuzz/ipmi.test.ts.
import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { IpmiDecodeError } from '../../../drivers/ipmi/decode-error.js';
import { encodeIpmiResponse } from '../../../drivers/ipmi/messages.js';
import { cipherSuite, deriveSessionKeys, type RakpExchange } from '../../../drivers/ipmi/rakp.js';
import { REPLAY_WINDOW_SIZE, ReplayWindow } from '../../../drivers/ipmi/replay-window.js';
import {
  decodeSessionPacket, decryptAesCbc128, encodeIpmi15Packet, encodeSessionPacket, encryptAesCbc128, integrityPadLength, PayloadType,
  peekSessionId, type SessionSecurity,
} from '../../../drivers/ipmi/session-packet.js';

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const IV = Buffer.from('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', 'hex');

function securityFor(id: 3 | 17): SessionSecurity {
  const x: RakpExchange = {
    consoleSessionId: 0x01020304, bmcSessionId: 0x0a0b0c0d, consoleRandom: Buffer.alloc(16, 1), bmcRandom: Buffer.alloc(16, 2),
    bmcGuid: Buffer.alloc(16, 3), role: 0x14, username: 'admin',
  };
  return deriveSessionKeys(cipherSuite(id), Buffer.from('password'), x).security;
}

test('AES-CBC-128 confidentiality pad: 1, 2, 3 … N then N, to a multiple of 16, for every length 0–40', () => {
  for (let length = 0; length <= 40; length++) {
    const plain = Buffer.alloc(length, 0xab);
    const sealed = encryptAesCbc128(KEY, IV, plain);
    assert.deepEqual(sealed.subarray(0, 16), IV);
    assert.equal((sealed.length - 16) % 16, 0);
    const padLength = (16 - ((length + 1) % 16)) % 16;
    assert.equal(sealed.length - 16, length + padLength + 1, `length ${length}`);
    // Look under the encryption: the pad bytes are exactly 01 02 … N followed by N.
    const raw = createDecipheriv('aes-128-cbc', KEY, IV).setAutoPadding(false);
    const inner = Buffer.concat([raw.update(sealed.subarray(16)), raw.final()]);
    assert.deepEqual([...inner.subarray(length)], [...Array.from({ length: padLength }, (_, i) => i + 1), padLength]);
    assert.deepEqual(decryptAesCbc128(KEY, sealed), plain);
  }
});

test('a wrong confidentiality pad or length is refused', () => {
  const sealed = encryptAesCbc128(KEY, IV, Buffer.from('hello'));
  const wrongKey = Buffer.alloc(16, 9);
  assert.throws(() => decryptAesCbc128(wrongKey, sealed), { reason: 'padding' });
  assert.throws(() => decryptAesCbc128(KEY, encryptAesCbc128(KEY, IV, Buffer.alloc(20)).subarray(0, 40)), { reason: 'malformed' });
  assert.throws(() => decryptAesCbc128(KEY, sealed.subarray(0, 16)), { reason: 'truncated' });
  assert.throws(() => encryptAesCbc128(KEY.subarray(0, 8), IV, Buffer.alloc(1)), RangeError);
});

test('integrity pad makes AuthType..Next Header a multiple of 4', () => {
  for (let n = 12; n < 80; n++) {
    const pad = integrityPadLength(n);
    assert.ok(pad >= 0 && pad <= 3);
    assert.equal((n + pad + 2) % 4, 0, `n = ${n}`);
  }
  assert.equal(integrityPadLength(44), 2); // the captured ipmitool packet: 12 + 32 payload → ff ff 02 07
});

for (const id of [3, 17] as const) {
  test(`cipher suite ${id}: authenticated + encrypted packets round-trip; any flipped bit is refused`, () => {
    const security = securityFor(id);
    const message = encodeIpmiResponse({ rqAddr: 0x81, netFn: 0x01, rqLun: 0, rsAddr: 0x20, rqSeq: 1, rsLun: 0, command: 1, completionCode: 0, data: Buffer.from([1, 0, 0]) });
    for (let extra = 0; extra < 20; extra++) {
      const payload = Buffer.concat([message, Buffer.alloc(extra, 0x55)]);
      const datagram = encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId: 0x01020304, sequence: 7 + extra, payload }, security, randomBytes(16));
      assert.equal((datagram.length - 4 - (id === 3 ? 12 : 16)) % 4, 0);
      const packet = decodeSessionPacket(datagram, security);
      assert.deepEqual([packet.format, packet.authenticated, packet.encrypted, packet.sessionId, packet.sequence], ['v2.0', true, true, 0x01020304, 7 + extra]);
      assert.deepEqual(packet.payload, payload);
      assert.equal(peekSessionId(datagram), 0x01020304);
    }
    const datagram = encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId: 1, sequence: 1, payload: message }, security, IV);
    for (let at = 4; at < datagram.length; at++) {
      const bad = Buffer.from(datagram);
      bad[at] = (bad[at] ?? 0) ^ 0x10;
      assert.throws(() => decodeSessionPacket(bad, security), IpmiDecodeError, `byte ${at}`);
    }
    // Another session's keys do not verify it.
    assert.throws(() => decodeSessionPacket(datagram, securityFor(id === 3 ? 17 : 3)), IpmiDecodeError);
    // Without keys, an authenticated packet is refused.
    assert.throws(() => decodeSessionPacket(datagram), { reason: 'integrity' });
  });
}

test('sessionless packets: RMCP+ setup payloads and the IPMI v1.5 wrapper', () => {
  const setup = encodeSessionPacket({ payloadType: PayloadType.openSessionResponse, sessionId: 0, sequence: 0, payload: Buffer.from([1, 4]) });
  assert.deepEqual(setup, Buffer.from('0600ff07061100000000000000000200' + '0104', 'hex'));
  const decoded = decodeSessionPacket(setup);
  assert.deepEqual([decoded.payloadType, decoded.authenticated, [...decoded.payload]], [0x11, false, [1, 4]]);
  const v15 = decodeSessionPacket(encodeIpmi15Packet(Buffer.from([0x81, 0x1c, 0x63, 0x20, 0x00, 0x38, 0x00, 0xa7])));
  assert.deepEqual([v15.format, v15.sessionId, v15.payload.length], ['v1.5', 0, 8]);
  assert.throws(() => decodeSessionPacket(Buffer.concat([setup, Buffer.from([0])])), { reason: 'malformed' });
  assert.throws(() => decodeSessionPacket(Buffer.from('0600ff0702000000000000000000', 'hex')), { reason: 'unsupported' }); // MD5
  assert.throws(() => decodeSessionPacket(Buffer.from('0600ff06000011be80010000', 'hex')), { reason: 'unsupported' }); // ASF
  assert.throws(() => decodeSessionPacket(Buffer.from('0600ff07060200000000000000000000', 'hex')), { reason: 'unsupported' }); // OEM
});

test('replay window: accepts each number once, within 32 behind or 32 ahead, across the wrap', () => {
  const w = new ReplayWindow();
  assert.equal(w.accept(0), 'zero');
  assert.equal(w.accept(10), 'accept');
  assert.equal(w.accept(10), 'replay');
  assert.equal(w.accept(12), 'accept');
  assert.equal(w.accept(11), 'accept'); // late but new
  assert.equal(w.accept(11), 'replay');
  assert.equal(w.accept(12 + REPLAY_WINDOW_SIZE), 'accept');
  assert.equal(w.highest, 44);
  assert.equal(w.accept(12), 'too-old');
  assert.equal(w.accept(13), 'accept'); // 31 behind
  assert.equal(w.accept(44 + REPLAY_WINDOW_SIZE + 1), 'too-far');
  assert.equal(w.check(45), 'accept');
  const wrap = new ReplayWindow();
  assert.equal(wrap.accept(0xfffffffe), 'accept');
  assert.equal(wrap.accept(3), 'accept'); // wrapped forward
  assert.equal(wrap.accept(0xffffffff), 'accept');
  assert.equal(wrap.accept(0xfffffffe), 'replay');
  wrap.reset();
  assert.equal(wrap.highest, undefined);
  assert.equal(wrap.accept(0xfffffffe), 'accept');
});

test('replay window: a long random walk never accepts a number twice', () => {
  const w = new ReplayWindow();
  const accepted = new Set<number>();
  let next = 1;
  for (let i = 0; i < 20_000; i++) {
    const seq = Math.max(1, next + Math.floor(Math.random() * 70) - 40);
    if (w.accept(seq) === 'accept') {
      assert.ok(!accepted.has(seq), `accepted ${seq} twice`);
      accepted.add(seq);
    }
    next += 1;
  }
  assert.ok(accepted.size > 5000);
});
