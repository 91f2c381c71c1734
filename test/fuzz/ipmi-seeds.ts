/**
 * @module Seeds of the IPMI fuzzer: the recorded ipmitool 1.8.19 ↔ ipmi_sim exchange (cipher
 * suite 3; the same bytes as test/unit/drivers/ipmi-rakp.test.ts, printed by `ipmitool -I lanplus
 * -C 3 -vvvv`), session keys derived from it for suites 3 and 17, session-setup answers, ipmi_sim's
 * command answers (test/unit/drivers/ipmi-codecs.test.ts, ipmi-fru-sdr.test.ts) and the lab's FRU
 * and SDR images.
 */
import { decodeSessionPacket, encodeIpmi15Packet, encodeSessionPacket, PayloadType, type SessionSecurity } from '../../drivers/ipmi/session-packet.js';
import { encodeIpmiResponse } from '../../drivers/ipmi/messages.js';
import { cipherSuite, deriveSessionKeys, userKey, type RakpExchange } from '../../drivers/ipmi/rakp.js';
import { encodeAsfPong } from '../../drivers/ipmi/rmcp.js';
import { encodeOpenSessionResponse, encodeRakp2, encodeRakp4 } from '../../drivers/ipmi/rakp-messages.js';
import { encodeFruImage } from '../lab/ipmi/fru-image.js';
import { DEFAULT_FRU, DEFAULT_SENSORS, PRESENCE_SENSOR } from '../lab/ipmi/ipmi-sim.js';
import { encodeCompactSensorRecord, encodeFullSensorRecord } from '../lab/ipmi/sdr-records.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** The recorded exchange's RAKP inputs (console/BMC session IDs, randoms, GUID, role, user). */
export const CAPTURED_EXCHANGE: RakpExchange = {
  consoleSessionId: 0xa0a2a3a4, bmcSessionId: 0x00000604,
  consoleRandom: hex('7f66c3f9c927927bbf00d3b7d1dcf01a'), bmcRandom: hex('120381cf9b156981d10aca2b0c049b7c'),
  bmcGuid: hex('a123456789abcdefa123456789abcdef'), role: 0x14, username: 'admin',
};

/** Session security of the recorded exchange (suite 3, password `password`), and suite 17 over the same inputs. */
export const SECURITY: Readonly<Record<3 | 17, SessionSecurity>> = {
  3: deriveSessionKeys(cipherSuite(3), userKey('password'), CAPTURED_EXCHANGE).security,
  17: deriveSessionKeys(cipherSuite(17), userKey('password'), CAPTURED_EXCHANGE).security,
};

const RMCP_IPMI = hex('0600ff07');
/** ipmi_sim's answer to Set Session Privilege Level, as captured (suite 3, encrypted and authenticated). */
export const CAPTURED_INBOUND = Buffer.concat([
  RMCP_IPMI,
  hex('06c0a4a3a2a0010000002000091bccb4201b09f6d8decc89afc8ccf5a7a924e7dcd474999ed8664ccc2d6bccffff0207'),
  hex('2d68efce8db27f8009482c84'),
]);

const IV = hex('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff');

function response(netFn: number, command: number, data: string, completionCode = 0): Buffer {
  return encodeIpmiResponse({ rqAddr: 0x81, netFn, rqLun: 0, rsAddr: 0x20, rqSeq: 1, rsLun: 0, command, completionCode, data: hex(data) });
}

/** IPMI response messages (the payload inside a session packet) of every command the driver decodes. */
export const RESPONSE_MESSAGES: readonly Buffer[] = [
  decodeSessionPacket(CAPTURED_INBOUND, SECURITY[3]).payload, // Set Session Privilege Level → 04
  response(0x07, 0x38, '01 97 04 03 000000 00'), // Get Channel Authentication Capabilities
  response(0x07, 0x01, '00 03 09 08 02 9f 911200 020f 00000000'), // Get Device ID
  response(0x01, 0x01, '61 00 40 00'), // Get Chassis Status
  response(0x01, 0x09, '01 05 00 04 00 00 00'), // Get System Boot Options, parameter 5
  response(0x0b, 0x10, '7000 00'), // Get FRU Inventory Area Info
  response(0x0b, 0x11, '03 aabbcc'), // Read FRU Data
  response(0x0b, 0x20, '51 0400 0010 00000000 00000000 02'), // Get SDR Repository Info
  response(0x0b, 0x22, '3412'), // Reserve SDR Repository
  response(0x0b, 0x23, '0300 0200510131'), // Get SDR
  response(0x05, 0x2d, '2d c0 00'), // Get Sensor Reading
  response(0x07, 0x01, '', 0xc0), // node busy
];

/** Whole datagrams: captured, session setup (clear), v1.5 wrapper, ASF pong, and sealed suite-17 packets. */
export const DATAGRAMS: readonly Buffer[] = [
  CAPTURED_INBOUND,
  encodeSessionPacket({
    payloadType: PayloadType.openSessionResponse, sessionId: 0, sequence: 0,
    payload: encodeOpenSessionResponse({ messageTag: 1, status: 0, maxPrivilege: 4, consoleSessionId: 0xa0a2a3a4, bmcSessionId: 0x604, authenticationAlgorithm: 1, integrityAlgorithm: 1, confidentialityAlgorithm: 1 }),
  }),
  encodeSessionPacket({ payloadType: PayloadType.openSessionResponse, sessionId: 0, sequence: 0, payload: hex('01 11') }),
  encodeSessionPacket({
    payloadType: PayloadType.rakp2, sessionId: 0, sequence: 0,
    payload: encodeRakp2({ messageTag: 2, status: 0, consoleSessionId: 0xa0a2a3a4, bmcRandom: CAPTURED_EXCHANGE.bmcRandom, bmcGuid: CAPTURED_EXCHANGE.bmcGuid, authCode: hex('3d2cf63475b745dcab62bc6d6561e693ed10fcc4') }),
  }),
  encodeSessionPacket({ payloadType: PayloadType.rakp4, sessionId: 0, sequence: 0, payload: encodeRakp4({ messageTag: 3, status: 0, consoleSessionId: 0xa0a2a3a4, integrityCheckValue: hex('f0dc4ace3d98a1ff33f3a83f') }) }),
  encodeSessionPacket({ payloadType: PayloadType.rakp4, sessionId: 0, sequence: 0, payload: hex('03 0d') }),
  encodeIpmi15Packet(hex('81 1c 63 20 00 38 00 01 97 04 03 00 00 00 00 8f')),
  encodeAsfPong({ messageTag: 7, oemIana: 4542, oemDefined: 0, supportsIpmi: true, asfVersion: 1, supportedInteractions: 0 }),
  ...RESPONSE_MESSAGES.slice(1, 5).map((payload, i) => encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId: 0xa0a2a3a4, sequence: 2 + i, payload }, SECURITY[17], IV)),
];

/** The lab's FRU image (what `ipmitool fru print` decodes against ipmi_sim). */
export const FRU_IMAGE = encodeFruImage(DEFAULT_FRU);

/** The lab's SDR records: three threshold sensors and a discrete presence sensor. */
export const SDR_RECORDS: readonly Buffer[] = [
  ...DEFAULT_SENSORS.map((s, i) => encodeFullSensorRecord({ recordId: i + 1, ...s })),
  encodeCompactSensorRecord({ recordId: 4, ...PRESENCE_SENSOR }),
];
