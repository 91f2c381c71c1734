/**
 * @module RMCP+ cipher suites and the RAKP key exchange arithmetic (IPMI v2.0 §13.28–§13.32):
 * the RAKP 2 and RAKP 3 key-exchange AuthCodes, the Session Integrity Key, K1/K2 and the
 * RAKP 4 integrity check value, for cipher suite 3 (RAKP-HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128)
 * and 17 (RAKP-HMAC-SHA256, HMAC-SHA256-128, AES-CBC-128). Random numbers and session IDs
 * come in as arguments. Cipher suite 0 (and any suite without authentication and integrity)
 * does not exist here: {@link cipherSuite} refuses it.
 *
 * Formulas (m = remote console, c = managed system / BMC; IDs little-endian as on the wire):
 *   RAKP2 = HMAC_Kuid(SIDm ‖ SIDc ‖ Rm ‖ Rc ‖ GUIDc ‖ ROLEm ‖ ULENGTHm ‖ UNAMEm)
 *   RAKP3 = HMAC_Kuid(Rc ‖ SIDm ‖ ROLEm ‖ ULENGTHm ‖ UNAMEm)
 *   SIK   = HMAC_KG(Rm ‖ Rc ‖ ROLEm ‖ ULENGTHm ‖ UNAMEm)      (KG = Kuid when no BMC key is set)
 *   Kn    = HMAC_SIK(20 bytes of n)  — 20 bytes for SHA-256 too, as ipmitool and BMCs do
 *   RAKP4 = HMAC_SIK(Rm ‖ SIDc ‖ GUIDc) truncated to 12 (SHA1-96) or 16 (SHA256-128) bytes
 * Kuid is the user's password, at most 20 bytes (HMAC zero-pads short keys, so padding the
 * password to 20 bytes with zeros, as ipmitool does, gives the same result).
 * @pure
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConfidentialityAlgorithm, IntegrityAlgorithm, SessionSecurity } from './session-packet.js';

/** Cipher suite IDs this client accepts, most preferred first. */
export const PREFERRED_CIPHER_SUITES = [17, 3] as const;
/** An accepted cipher suite ID. */
export type CipherSuiteId = (typeof PREFERRED_CIPHER_SUITES)[number];

/** One cipher suite (IPMI v2.0 table 22-20) with its algorithm numbers as sent on the wire. */
export interface CipherSuite {
  readonly id: CipherSuiteId;
  readonly hash: 'sha1' | 'sha256';
  /** Authentication algorithm number: 0x01 RAKP-HMAC-SHA1, 0x03 RAKP-HMAC-SHA256. */
  readonly authenticationAlgorithm: number;
  /** Integrity algorithm number: 0x01 HMAC-SHA1-96, 0x04 HMAC-SHA256-128. */
  readonly integrityAlgorithm: number;
  /** Confidentiality algorithm number: 0x01 AES-CBC-128. */
  readonly confidentialityAlgorithm: number;
  readonly integrity: IntegrityAlgorithm;
  readonly confidentiality: ConfidentialityAlgorithm;
  /** Length of the RAKP 2/3 key exchange AuthCode (full HMAC): 20 or 32. */
  readonly authCodeLength: number;
  /** Length of the RAKP 4 integrity check value: 12 or 16. */
  readonly icvLength: number;
}

const SUITES: Readonly<Record<CipherSuiteId, CipherSuite>> = {
  3: {
    id: 3, hash: 'sha1', authenticationAlgorithm: 0x01, integrityAlgorithm: 0x01, confidentialityAlgorithm: 0x01,
    integrity: 'hmac-sha1-96', confidentiality: 'aes-cbc-128', authCodeLength: 20, icvLength: 12,
  },
  17: {
    id: 17, hash: 'sha256', authenticationAlgorithm: 0x03, integrityAlgorithm: 0x04, confidentialityAlgorithm: 0x01,
    integrity: 'hmac-sha256-128', confidentiality: 'aes-cbc-128', authCodeLength: 32, icvLength: 16,
  },
};

/** True for the suites this client accepts (3 and 17); false for 0 and everything else. */
export function isAcceptedCipherSuite(id: number): id is CipherSuiteId {
  return id === 3 || id === 17;
}

/** Returns suite `id`; throws RangeError for anything but 3 and 17 (cipher suite 0 is never used). */
export function cipherSuite(id: number): CipherSuite {
  if (!isAcceptedCipherSuite(id)) {
    throw new RangeError(`cipher suite ${id} is not accepted: only 17 and 3 (authenticated, integrity-protected, encrypted) are`);
  }
  return SUITES[id];
}

/** Longest IPMI v2.0 password (Kuid), in bytes. */
export const MAX_PASSWORD_BYTES = 20;
/** Longest user name, in bytes. */
export const MAX_USERNAME_BYTES = 16;

/** The values both sides of one RAKP exchange know after RAKP 2. */
export interface RakpExchange {
  /** SIDm: the session ID the remote console chose. */
  readonly consoleSessionId: number;
  /** SIDc: the session ID the BMC chose. */
  readonly bmcSessionId: number;
  /** Rm: 16 random bytes of the remote console. */
  readonly consoleRandom: Buffer;
  /** Rc: 16 random bytes of the BMC. */
  readonly bmcRandom: Buffer;
  /** GUIDc: the BMC's 16-byte GUID as received. */
  readonly bmcGuid: Buffer;
  /** ROLEm: requested privilege level with the name-only-lookup bit (0x10) as sent in RAKP 1. */
  readonly role: number;
  readonly username: string;
}

function le32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0, 0);
  return b;
}

function nameBytes(username: string): Buffer {
  const name = Buffer.from(username, 'utf8');
  if (name.length > MAX_USERNAME_BYTES) throw new RangeError(`user name longer than ${MAX_USERNAME_BYTES} bytes`);
  return Buffer.concat([Buffer.from([name.length]), name]);
}

function hmac(suite: CipherSuite, key: Buffer, ...parts: Buffer[]): Buffer {
  const h = createHmac(suite.hash, key);
  for (const part of parts) h.update(part);
  return h.digest();
}

/** Kuid from a password; throws RangeError above 20 bytes (the message never contains it). */
export function userKey(password: string): Buffer {
  const key = Buffer.from(password, 'utf8');
  if (key.length > MAX_PASSWORD_BYTES) throw new RangeError(`the password is longer than ${MAX_PASSWORD_BYTES} bytes (IPMI v2.0 limit)`);
  return key;
}

/** RAKP 2 key exchange AuthCode the BMC must send (full HMAC, 20 or 32 bytes). */
export function rakp2AuthCode(suite: CipherSuite, kuid: Buffer, x: RakpExchange): Buffer {
  return hmac(suite, kuid, le32(x.consoleSessionId), le32(x.bmcSessionId), x.consoleRandom, x.bmcRandom, x.bmcGuid,
    Buffer.from([x.role & 0xff]), nameBytes(x.username));
}

/** RAKP 3 key exchange AuthCode the remote console sends (full HMAC). */
export function rakp3AuthCode(suite: CipherSuite, kuid: Buffer, x: RakpExchange): Buffer {
  return hmac(suite, kuid, x.bmcRandom, le32(x.consoleSessionId), Buffer.from([x.role & 0xff]), nameBytes(x.username));
}

/** Session Integrity Key; `kg` is the BMC key, Kuid when the BMC has none (all zeros). */
export function sessionIntegrityKey(suite: CipherSuite, kg: Buffer, x: RakpExchange): Buffer {
  return hmac(suite, kg, x.consoleRandom, x.bmcRandom, Buffer.from([x.role & 0xff]), nameBytes(x.username));
}

/** Additional keying material Kn = HMAC_SIK(20 bytes of n) (K1: integrity, K2: confidentiality). */
export function deriveKey(suite: CipherSuite, sik: Buffer, n: number): Buffer {
  return hmac(suite, sik, Buffer.alloc(20, n & 0xff));
}

/** RAKP 4 integrity check value the BMC must send (truncated HMAC_SIK). */
export function rakp4IntegrityCheckValue(suite: CipherSuite, sik: Buffer, x: RakpExchange): Buffer {
  return hmac(suite, sik, x.consoleRandom, le32(x.bmcSessionId), x.bmcGuid).subarray(0, suite.icvLength);
}

/** Constant-time equality that is false (not an exception) for different lengths. */
export function authCodesEqual(expected: Buffer, actual: Buffer): boolean {
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Everything the session keeps after a successful exchange. */
export interface SessionKeys {
  readonly sik: Buffer;
  readonly k1: Buffer;
  readonly k2: Buffer;
  readonly security: SessionSecurity;
}

/** Derives SIK, K1, K2 and the packet security of a session. */
export function deriveSessionKeys(suite: CipherSuite, kg: Buffer, x: RakpExchange): SessionKeys {
  const sik = sessionIntegrityKey(suite, kg, x);
  const k1 = deriveKey(suite, sik, 1);
  const k2 = deriveKey(suite, sik, 2);
  return {
    sik, k1, k2,
    security: { integrity: suite.integrity, integrityKey: k1, confidentiality: suite.confidentiality, confidentialityKey: k2.subarray(0, 16) },
  };
}
