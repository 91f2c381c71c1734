// RAKP key exchange vectors: (1) a real exchange between ipmitool 1.8.19 (-I lanplus -C 3 -vvvv)
// and OpenIPMI's ipmi_sim, captured on this machine; (2) values recomputed here from the spec
// formulas with node:crypto over hand-assembled byte strings, for cipher suites 3 and 17.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { decodeIpmiRequest, decodeIpmiResponse } from '../../../drivers/ipmi/messages.js';
import {
  authCodesEqual, cipherSuite, deriveKey, deriveSessionKeys, isAcceptedCipherSuite, PREFERRED_CIPHER_SUITES, rakp2AuthCode,
  rakp3AuthCode, rakp4IntegrityCheckValue, sessionIntegrityKey, userKey, type RakpExchange,
} from '../../../drivers/ipmi/rakp.js';
import { computeAuthCode, decodeSessionPacket } from '../../../drivers/ipmi/session-packet.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** The captured exchange (ipmitool prints its inputs and outputs at -vvvv). */
const CAPTURED = {
  exchange: {
    consoleSessionId: 0xa0a2a3a4, bmcSessionId: 0x00000604,
    consoleRandom: hex('7f66c3f9c927927bbf00d3b7d1dcf01a'), bmcRandom: hex('120381cf9b156981d10aca2b0c049b7c'),
    bmcGuid: hex('a123456789abcdefa123456789abcdef'), role: 0x14, username: 'admin',
  } satisfies RakpExchange,
  password: 'password',
  rakp2MacInput: hex(`a4a3a2a0 04060000 7f66c3f9c927927bbf00d3b7d1dcf01a 120381cf9b156981d10aca2b0c049b7c
    a123456789abcdefa123456789abcdef 14 05 61646d696e`),
  rakp2: hex('3d2cf63475b745dcab62bc6d6561e693ed10fcc4'),
  rakp3: hex('308abd6a5186e5c3ee76f931c325a3cfe8055d7d'),
  sik: hex('a700dbba9bfb7556a5efa40d75b8b267c19e74d2'),
  k1: hex('a24bc600f789e69c10a50269d74ea2ea8e239497'),
  k2: hex('5121923a96078fc93872f15ff7b2c00fb9b4b949'),
  rakp4: hex('f0dc4ace3d98a1ff33f3a83f'),
  // Set Session Privilege Level (admin) as ipmitool sent it: AuthType..Next Header, then AuthCode.
  outbound: hex(`06c00406000003000000200068b415b23f65bf293c3182568284 67fd374fc14dbfb375f196a7ac43bd1141caffff0207`),
  outboundAuthCode: hex('453e4c47d26dc9781afe292c'),
  // ipmi_sim's answer to it.
  inbound: hex(`06c0a4a3a2a0010000002000091bccb4201b09f6d8decc89afc8ccf5a7a924e7dcd474999ed8664ccc2d6bccffff0207`),
  inboundAuthCode: hex('2d68efce8db27f8009482c84'),
};

test('captured ipmitool ↔ ipmi_sim exchange (cipher suite 3): RAKP 2/3, SIK, K1, K2, RAKP 4', () => {
  const suite = cipherSuite(3);
  const kuid = userKey(CAPTURED.password);
  const x = CAPTURED.exchange;
  // Our HMAC input layout equals the one ipmitool printed.
  assert.deepEqual(createHmac('sha1', kuid).update(CAPTURED.rakp2MacInput).digest(), CAPTURED.rakp2);
  assert.deepEqual(rakp2AuthCode(suite, kuid, x), CAPTURED.rakp2);
  assert.deepEqual(rakp3AuthCode(suite, kuid, x), CAPTURED.rakp3);
  const keys = deriveSessionKeys(suite, kuid, x);
  assert.deepEqual(keys.sik, CAPTURED.sik);
  assert.deepEqual(keys.k1, CAPTURED.k1);
  assert.deepEqual(keys.k2, CAPTURED.k2);
  assert.deepEqual(rakp4IntegrityCheckValue(suite, keys.sik, x), CAPTURED.rakp4);
  assert.deepEqual(keys.security.confidentialityKey, CAPTURED.k2.subarray(0, 16));
});

test('captured session packets: AuthCodes match and both payloads decrypt to the right messages', () => {
  const keys = deriveSessionKeys(cipherSuite(3), userKey(CAPTURED.password), CAPTURED.exchange);
  assert.deepEqual(computeAuthCode('hmac-sha1-96', keys.k1, CAPTURED.outbound), CAPTURED.outboundAuthCode);
  assert.deepEqual(computeAuthCode('hmac-sha1-96', keys.k1, CAPTURED.inbound), CAPTURED.inboundAuthCode);
  const rmcp = Buffer.from([0x06, 0x00, 0xff, 0x07]);
  const request = decodeSessionPacket(Buffer.concat([rmcp, CAPTURED.outbound, CAPTURED.outboundAuthCode]), keys.security);
  assert.equal(request.sessionId, 0x604);
  assert.equal(request.sequence, 3);
  const message = decodeIpmiRequest(request.payload);
  assert.deepEqual([message.netFn, message.command, [...message.data]], [0x06, 0x3b, [0x04]]);
  const response = decodeSessionPacket(Buffer.concat([rmcp, CAPTURED.inbound, CAPTURED.inboundAuthCode]), keys.security);
  assert.deepEqual([response.sessionId, response.sequence, response.authenticated, response.encrypted], [0xa0a2a3a4, 1, true, true]);
  const answer = decodeIpmiResponse(response.payload);
  assert.deepEqual([answer.netFn, answer.command, answer.completionCode, [...answer.data]], [0x07, 0x3b, 0x00, [0x04]]);
  // One flipped AuthCode bit is refused.
  const forged = Buffer.from(CAPTURED.inboundAuthCode);
  forged[0] = (forged[0] ?? 0) ^ 0x80;
  assert.throws(() => decodeSessionPacket(Buffer.concat([rmcp, CAPTURED.inbound, forged]), keys.security), { reason: 'integrity' });
});

/** Fixed inputs for recomputed vectors. */
const FIXED: RakpExchange = {
  consoleSessionId: 0x11223344, bmcSessionId: 0xcafebabe,
  consoleRandom: hex('000102030405060708090a0b0c0d0e0f'), bmcRandom: hex('f0e0d0c0b0a090807060504030201000'),
  bmcGuid: hex('00112233445566778899aabbccddeeff'), role: 0x14, username: 'operator7',
};

const suites = {
  'cipher suite 3 (RAKP-HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128)': { id: 3, hash: 'sha1', icv: 12, authCode: 20 },
  'cipher suite 17 (RAKP-HMAC-SHA256, HMAC-SHA256-128, AES-CBC-128)': { id: 17, hash: 'sha256', icv: 16, authCode: 32 },
} as const;

for (const [name, c] of Object.entries(suites)) {
  test(`${name}: every derivation equals the spec formula recomputed byte by byte`, () => {
    const suite = cipherSuite(c.id);
    const kuid = Buffer.from('s3cret-pw');
    const mac = (key: Buffer, data: string): Buffer => createHmac(c.hash, key).update(hex(data)).digest();
    const name9 = '09 6f70657261746f7237'; // ULENGTHm, UNAMEm ("operator7")
    const rakp2 = mac(kuid, `44332211 bebafeca 000102030405060708090a0b0c0d0e0f f0e0d0c0b0a090807060504030201000 00112233445566778899aabbccddeeff 14 ${name9}`);
    const rakp3 = mac(kuid, `f0e0d0c0b0a090807060504030201000 44332211 14 ${name9}`);
    const sik = mac(kuid, `000102030405060708090a0b0c0d0e0f f0e0d0c0b0a090807060504030201000 14 ${name9}`);
    const k1 = mac(sik, '01'.repeat(20));
    const k2 = mac(sik, '02'.repeat(20));
    const icv = mac(sik, '000102030405060708090a0b0c0d0e0f bebafeca 00112233445566778899aabbccddeeff').subarray(0, c.icv);

    assert.equal(rakp2.length, c.authCode);
    assert.deepEqual(rakp2AuthCode(suite, kuid, FIXED), rakp2);
    assert.deepEqual(rakp3AuthCode(suite, kuid, FIXED), rakp3);
    assert.deepEqual(sessionIntegrityKey(suite, kuid, FIXED), sik);
    assert.deepEqual(deriveKey(suite, sik, 1), k1);
    assert.deepEqual(deriveKey(suite, sik, 2), k2);
    assert.deepEqual(rakp4IntegrityCheckValue(suite, sik, FIXED), icv);
    const keys = deriveSessionKeys(suite, kuid, FIXED);
    assert.deepEqual([keys.sik, keys.k1, keys.k2], [sik, k1, k2]);
    assert.equal(keys.security.integrity, c.id === 3 ? 'hmac-sha1-96' : 'hmac-sha256-128');
    assert.deepEqual(keys.security.confidentialityKey, k2.subarray(0, 16));
    // Integrity AuthCode: HMAC over the covered bytes with K1, truncated.
    const covered = hex('06c0 bebafeca 01000000 1000 00112233445566778899aabbccddeeff ffff 02 07');
    assert.deepEqual(computeAuthCode(suite.integrity, k1, covered), createHmac(c.hash, k1).update(covered).digest().subarray(0, c.icv));
  });

  test(`${name}: a BMC key Kg replaces the password as the SIK key only`, () => {
    const suite = cipherSuite(c.id);
    const kuid = Buffer.from('pw');
    const kg = Buffer.from('0123456789abcdefghij');
    const withKg = deriveSessionKeys(suite, kg, FIXED);
    assert.notDeepEqual(withKg.sik, deriveSessionKeys(suite, kuid, FIXED).sik);
    assert.deepEqual(withKg.sik, sessionIntegrityKey(suite, kg, FIXED));
  });
}

test('a password padded with zeros to 20 bytes (as ipmitool keys HMAC) gives the same codes', () => {
  const suite = cipherSuite(17);
  const padded = Buffer.alloc(20);
  Buffer.from('password').copy(padded);
  assert.deepEqual(rakp2AuthCode(suite, padded, FIXED), rakp2AuthCode(suite, userKey('password'), FIXED));
});

test('only cipher suites 17 and 3 exist; 0 and the rest are refused', () => {
  assert.deepEqual([...PREFERRED_CIPHER_SUITES], [17, 3]);
  for (const id of [0, 1, 2, 4, 8, 12, 15, 16, 18, 255]) {
    assert.equal(isAcceptedCipherSuite(id), false, `suite ${id}`);
    assert.throws(() => cipherSuite(id), /not accepted/);
  }
  assert.equal(cipherSuite(3).authenticationAlgorithm, 0x01);
  assert.equal(cipherSuite(17).authenticationAlgorithm, 0x03);
  assert.equal(cipherSuite(17).integrityAlgorithm, 0x04);
});

test('userKey refuses passwords over 20 bytes without echoing them; authCodesEqual handles lengths', () => {
  assert.throws(() => userKey('x'.repeat(21) + 'TOPSECRET'), (err: Error) => !err.message.includes('TOPSECRET') && /20 bytes/.test(err.message));
  assert.equal(userKey('x'.repeat(20)).length, 20);
  assert.equal(authCodesEqual(Buffer.from([1, 2]), Buffer.from([1, 2, 3])), false);
  assert.equal(authCodesEqual(Buffer.from([1, 2]), Buffer.from([1, 2])), true);
});
