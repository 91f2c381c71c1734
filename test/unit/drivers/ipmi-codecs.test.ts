// Codec round-trips and fixed bytes: RMCP/ASF, IPMI LAN messages, RMCP+ session setup payloads,
// App/Chassis commands and boot flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BOOT_DEVICE_SELECTORS, ChassisControl, decodeBootFlagsResponse, decodeGetChannelAuthCapabilities, decodeGetChassisStatus,
  decodeGetDeviceId, encodeChassisControl, encodeCloseSession, encodeGetBootOptions, encodeGetChannelAuthCapabilities,
  encodeSetBootFlags, parsePrivilegeLevel, type IpmiBootDevice,
} from '../../../drivers/ipmi/commands.js';
import { IpmiDecodeError } from '../../../drivers/ipmi/decode-error.js';
import {
  BUSY_COMPLETION_CODES, decodeIpmiRequest, decodeIpmiResponse, describeCompletionCode, encodeIpmiRequest, encodeIpmiResponse,
  ipmiChecksum,
} from '../../../drivers/ipmi/messages.js';
import { cipherSuite } from '../../../drivers/ipmi/rakp.js';
import {
  decodeOpenSessionRequest, decodeOpenSessionResponse, decodeRakp1, decodeRakp2, decodeRakp3, decodeRakp4, describeRmcpPlusStatus,
  encodeOpenSessionRequest, encodeOpenSessionResponse, encodeRakp1, encodeRakp2, encodeRakp3, encodeRakp4,
} from '../../../drivers/ipmi/rakp-messages.js';
import { decodeAsfPong, decodeRmcpHeader, encodeAsfPing, encodeAsfPong } from '../../../drivers/ipmi/rmcp.js';
import { encodeIpmi15Packet } from '../../../drivers/ipmi/session-packet.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

test('ASF presence ping bytes and pong round-trip', () => {
  assert.deepEqual(encodeAsfPing(0x2a), hex('0600ff06 000011be 80 2a 00 00'));
  const pong = { messageTag: 7, oemIana: 4542, oemDefined: 0, supportsIpmi: true, asfVersion: 1, supportedInteractions: 0 };
  assert.deepEqual(decodeAsfPong(encodeAsfPong(pong)), pong);
  assert.throws(() => decodeAsfPong(encodeAsfPing(1)), { reason: 'unsupported' });
  assert.throws(() => decodeRmcpHeader(hex('0500ff07')), { reason: 'malformed' });
  assert.throws(() => decodeRmcpHeader(hex('0600')), { reason: 'truncated' });
  assert.deepEqual(decodeRmcpHeader(hex('0600ff87')), { sequence: 0xff, messageClass: 7, isAck: true });
});

test('Get Channel Authentication Capabilities request matches the bytes ipmitool sends', () => {
  // From ipmitool -vvvv: netfn 0x06 cmd 0x38 data 0x8e 0x04, rqSeq 0; session header AuthType none.
  const request = encodeGetChannelAuthCapabilities(4);
  const message = encodeIpmiRequest({ ...request, rqSeq: 0 });
  assert.deepEqual(message, hex('20 18 c8 81 00 38 8e 04 b5'));
  assert.deepEqual(encodeIpmi15Packet(message), Buffer.concat([hex('0600ff07 00 00000000 00000000 09'), message]));
  const caps = decodeGetChannelAuthCapabilities(hex('01 97 04 03 000000 00'));
  assert.equal(caps.supportsIpmi20, true);
  assert.equal(caps.kgRequired, false);
  assert.equal(caps.nonNullUsernames, true);
  assert.equal(decodeGetChannelAuthCapabilities(hex('01 17 04 00 000000 00')).supportsIpmi20, false);
  assert.equal(decodeGetChannelAuthCapabilities(hex('01 80 24 02 000000 00')).kgRequired, true);
});

test('IPMI messages: checksums, round-trips, refusal of corrupted bytes', () => {
  assert.equal(ipmiChecksum(hex('2018')), 0xc8);
  const request = { netFn: 0x0a, command: 0x11, data: hex('00 1000 20'), rqSeq: 63 };
  const decoded = decodeIpmiRequest(encodeIpmiRequest(request));
  assert.deepEqual([decoded.netFn, decoded.command, decoded.rqSeq, [...decoded.data]], [0x0a, 0x11, 63, [0, 0x10, 0, 0x20]]);
  const response = { rqAddr: 0x81, netFn: 0x0b, rqLun: 0, rsAddr: 0x20, rqSeq: 5, rsLun: 0, command: 0x11, completionCode: 0, data: hex('02 abcd') };
  const bytes = encodeIpmiResponse(response);
  assert.deepEqual(decodeIpmiResponse(bytes), { ...response, data: hex('02 abcd') });
  for (const at of [1, bytes.length - 2]) {
    const bad = Buffer.from(bytes);
    bad[at] = (bad[at] ?? 0) ^ 0x04;
    assert.throws(() => decodeIpmiResponse(bad), { reason: 'checksum' });
  }
  assert.throws(() => decodeIpmiResponse(encodeIpmiRequest(request)), IpmiDecodeError); // request NetFn is even
  assert.throws(() => decodeIpmiResponse(bytes.subarray(0, 6)), { reason: 'truncated' });
});

test('completion codes have names; busy codes are marked', () => {
  assert.equal(describeCompletionCode(0xc1), '0xC1 (invalid command)');
  assert.equal(describeCompletionCode(0xd5), '0xD5 (command not supported in present state)');
  assert.match(describeCompletionCode(0x80), /command-specific/);
  assert.match(describeCompletionCode(0x01), /OEM/);
  assert.ok(BUSY_COMPLETION_CODES.has(0xc0));
  assert.ok(!BUSY_COMPLETION_CODES.has(0xc1));
  assert.equal(describeRmcpPlusStatus(0x0d), '0x0D (unauthorized name)');
});

test('Open Session Request/Response round-trip; short error answers (ipmi_sim style) decode', () => {
  const request = { messageTag: 9, maxPrivilege: 4, consoleSessionId: 0xa0a2a3a4, authenticationAlgorithm: 3, integrityAlgorithm: 4, confidentialityAlgorithm: 1 };
  const bytes = encodeOpenSessionRequest(request);
  assert.equal(bytes.length, 32);
  assert.deepEqual(bytes.subarray(8, 16), hex('00 0000 08 03 000000'));
  assert.deepEqual(decodeOpenSessionRequest(bytes), request);
  const ok = { messageTag: 9, status: 0, maxPrivilege: 4, consoleSessionId: 0xa0a2a3a4, bmcSessionId: 0x604, authenticationAlgorithm: 1, integrityAlgorithm: 1, confidentialityAlgorithm: 1 };
  assert.deepEqual(decodeOpenSessionResponse(encodeOpenSessionResponse(ok)), ok);
  // ipmi_sim refuses cipher suite 17 with exactly two bytes: tag, status 0x04.
  const short = decodeOpenSessionResponse(hex('0104'));
  assert.deepEqual([short.status, short.consoleSessionId, short.authenticationAlgorithm], [4, 0, undefined]);
  assert.throws(() => decodeOpenSessionResponse(hex('0100')), { reason: 'truncated' });
  assert.throws(() => decodeOpenSessionResponse(encodeOpenSessionResponse(ok).subarray(0, 30)), { reason: 'truncated' });
});

test('RAKP messages 1–4 round-trip, with the suite deciding AuthCode and ICV lengths', () => {
  const rakp1 = { messageTag: 2, bmcSessionId: 0x604, consoleRandom: Buffer.alloc(16, 7), role: 0x14, username: 'admin' };
  const bytes1 = encodeRakp1(rakp1);
  assert.deepEqual(bytes1.subarray(24), hex('14 0000 05 61646d696e'));
  assert.deepEqual(decodeRakp1(bytes1), rakp1);
  assert.throws(() => encodeRakp1({ ...rakp1, username: 'x'.repeat(17) }), RangeError);
  for (const id of [3, 17] as const) {
    const suite = cipherSuite(id);
    const rakp2 = { messageTag: 2, status: 0, consoleSessionId: 1, bmcRandom: Buffer.alloc(16, 1), bmcGuid: Buffer.alloc(16, 2), authCode: Buffer.alloc(suite.authCodeLength, 3) };
    assert.deepEqual(decodeRakp2(encodeRakp2(rakp2), suite), rakp2);
    assert.throws(() => decodeRakp2(encodeRakp2(rakp2), cipherSuite(id === 3 ? 17 : 3)), IpmiDecodeError);
    const rakp4 = { messageTag: 3, status: 0, consoleSessionId: 1, integrityCheckValue: Buffer.alloc(suite.icvLength, 9) };
    assert.deepEqual(decodeRakp4(encodeRakp4(rakp4), suite), rakp4);
  }
  const rakp3 = { messageTag: 3, status: 0, bmcSessionId: 0x604, authCode: Buffer.alloc(20, 4) };
  assert.deepEqual(decodeRakp3(encodeRakp3(rakp3)), rakp3);
  assert.equal(decodeRakp2(hex('020d'), cipherSuite(3)).status, 0x0d);
  // ipmi_sim's RAKP 4 carries 20 bytes, of which the first 12 are the ICV.
  assert.equal(decodeRakp4(Buffer.concat([hex('03000000 04060000'), Buffer.alloc(20, 5)]), cipherSuite(3)).integrityCheckValue.length, 12);
});

test('Get Device ID decodes ipmi_sim\'s answer like ipmitool prints it', () => {
  // Device ID 0, revision 3, firmware 9.08, IPMI 2.0, support 0x9f, IANA 4753, product 0x0f02, aux 0.
  const id = decodeGetDeviceId(hex('00 03 09 08 02 9f 911200 020f 00000000'));
  assert.deepEqual(
    [id.deviceId, id.deviceRevision, id.firmwareRevision, id.ipmiVersion, id.manufacturerId, id.productId, id.deviceAvailable, id.providesDeviceSdrs],
    [0, 3, '9.08', '2.0', 4753, 0x0f02, true, false],
  );
  assert.equal(decodeGetDeviceId(hex('20 81 82 15 51 00 a20200 0100')).ipmiVersion, '1.5');
  assert.equal(decodeGetDeviceId(hex('20 81 82 15 51 00 a20200 0100')).deviceAvailable, false);
  assert.throws(() => decodeGetDeviceId(hex('00 03 09')), { reason: 'truncated' });
});

test('chassis status and control', () => {
  const status = decodeGetChassisStatus(hex('41 00 40'));
  assert.deepEqual([status.powerOn, status.restorePolicy, status.intrusion], [true, 'always-on', false]);
  assert.equal(decodeGetChassisStatus(hex('20 00 01')).restorePolicy, 'previous');
  assert.equal(decodeGetChassisStatus(hex('20 00 01')).intrusion, true);
  const cases = { powerDown: 0, powerUp: 1, powerCycle: 2, hardReset: 3, softShutdown: 5 } as const;
  for (const [name, byte] of Object.entries(cases)) {
    assert.deepEqual(encodeChassisControl(ChassisControl[name as keyof typeof cases]).data, Buffer.from([byte]), name);
  }
  assert.throws(() => encodeChassisControl(6), RangeError);
  assert.deepEqual(encodeCloseSession(0x604).data, hex('04060000'));
});

test('boot flags: every device with EFI and persistence bits, and decoding of what BMCs return', () => {
  for (const device of Object.keys(BOOT_DEVICE_SELECTORS) as IpmiBootDevice[]) {
    for (const [efi, persistent] of [[false, false], [true, false], [true, true], [false, true]] as const) {
      const request = encodeSetBootFlags({ valid: true, persistent, efi, device });
      assert.equal(request.data[0], 0x05);
      const readBack = decodeBootFlagsResponse(Buffer.concat([hex('01 05'), request.data.subarray(1)]));
      assert.deepEqual(readBack, { valid: true, persistent, efi, device });
    }
  }
  // ipmitool `chassis bootdev pxe options=efiboot` → data 1 = 0xa0, data 2 = 0x04.
  assert.deepEqual(encodeSetBootFlags({ valid: true, persistent: false, efi: true, device: 'pxe' }).data, hex('05 a0 04 00 00 00'));
  // ipmi_sim's answer after `bootdev pxe`: device only, valid/EFI bits clear ("0004000000").
  assert.deepEqual(decodeBootFlagsResponse(hex('01 05 00 04 00 00 00')), { valid: false, persistent: false, efi: false, device: 'pxe' });
  assert.equal(decodeBootFlagsResponse(hex('01 05 80 28 00 00 00')).device, 'reserved');
  assert.throws(() => decodeBootFlagsResponse(hex('01 04 00 04 00')), { reason: 'malformed' });
  assert.deepEqual(encodeGetBootOptions(5).data, hex('05 00 00'));
});

test('privilege level names follow metal3 and ipmitool spelling', () => {
  const cases = { ADMINISTRATOR: 4, administrator: 4, ADMIN: 4, OPERATOR: 3, User: 2, CALLBACK: 1, OEM: 5 } as const;
  for (const [name, level] of Object.entries(cases)) assert.equal(parsePrivilegeLevel(name), level, name);
  assert.equal(parsePrivilegeLevel('root'), undefined);
});
