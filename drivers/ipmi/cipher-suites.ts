/**
 * @module Cipher suite negotiation of an RMCP+ session, as data: the Get Channel Cipher Suites
 * command (IPMI v2.0 §22.15, sent sessionless like Get Channel Authentication Capabilities),
 * its record decoder (table 22-18: standard records `C0h id algs…`, OEM records `C1h id IANA×3
 * algs…`; algorithm bytes tagged 00b authentication, 01b integrity, 10b confidentiality), the
 * choice of what to propose, and the judgement of the BMC's Open Session answer.
 *
 * Rules: only suites 17 and 3 are ever used (authenticated, integrity-protected, AES); the
 * operator's allowed list (a pinned suite is a list of one) bounds everything — the BMC's list
 * only narrows it, never widens it; an Open Session answer naming the algorithms of another
 * allowed suite is followed (BMCs answer a suite-17 proposal with suite 3's 1/1/1, as ipmitool
 * and Ironic tolerate), any other answer (cipher suite 0's "none", a suite the operator did not
 * allow) is refused.
 * @pure
 */
import { NetFn } from './messages.js';
import { cipherSuite, isAcceptedCipherSuite, type CipherSuite, type CipherSuiteId } from './rakp.js';
import type { IpmiCommandRequest } from './commands.js';

/** Command number of Get Channel Cipher Suites (App NetFn). */
export const GET_CHANNEL_CIPHER_SUITES = 0x54;
/** Record data bytes per Get Channel Cipher Suites answer; a shorter answer is the last one. */
export const CIPHER_SUITE_CHUNK_BYTES = 16;
/** Highest list index the command takes (6 bits). */
export const MAX_CIPHER_SUITE_LIST_INDEX = 0x3f;

/** Get Channel Cipher Suites for the current channel and IPMI payloads, listing by suite, page `index`. */
export function encodeGetChannelCipherSuites(index: number): IpmiCommandRequest {
  return { netFn: NetFn.app, command: GET_CHANNEL_CIPHER_SUITES, data: Buffer.from([0x0e, 0x00, 0x80 | (index & 0x3f)]) };
}

/** One cipher suite record a BMC listed. */
export interface ListedCipherSuite {
  readonly id: number;
  /** OEM IANA number for OEM records (`C1h`). */
  readonly oemIana?: number;
  readonly authenticationAlgorithm: number | undefined;
  readonly integrityAlgorithm: number | undefined;
  readonly confidentialityAlgorithm: number | undefined;
}

/** Record data of one answer (after the channel byte); `undefined` data (too short) reads as none. */
export function cipherSuiteRecordData(data: Buffer): Buffer {
  return data.length <= 1 ? Buffer.alloc(0) : data.subarray(1);
}

/**
 * Decodes the concatenated record data of every Get Channel Cipher Suites answer. Bytes that
 * fit no record are skipped (a BMC's page boundary may fall anywhere, so callers concatenate).
 */
export function decodeCipherSuiteRecords(records: Buffer): ListedCipherSuite[] {
  const out: ListedCipherSuite[] = [];
  let i = 0;
  while (i < records.length) {
    const start = records[i] ?? 0;
    if ((start !== 0xc0 && start !== 0xc1) || i + 1 >= records.length) { i += 1; continue; }
    const id = records[i + 1] ?? 0;
    let j = i + 2;
    let oemIana: number | undefined;
    if (start === 0xc1) {
      oemIana = (records[j] ?? 0) | ((records[j + 1] ?? 0) << 8) | ((records[j + 2] ?? 0) << 16);
      j += 3;
    }
    const algorithms: { auth?: number; integrity?: number; confidentiality?: number } = {};
    for (; j < records.length && ((records[j] ?? 0) & 0xc0) !== 0xc0; j++) {
      const byte = records[j] ?? 0;
      const tag = byte >> 6;
      if (tag === 0) algorithms.auth ??= byte & 0x3f;
      else if (tag === 1) algorithms.integrity ??= byte & 0x3f;
      else algorithms.confidentiality ??= byte & 0x3f;
    }
    out.push({
      id, ...(oemIana === undefined ? {} : { oemIana }),
      authenticationAlgorithm: algorithms.auth, integrityAlgorithm: algorithms.integrity, confidentialityAlgorithm: algorithms.confidentiality,
    });
    i = j;
  }
  return out;
}

/**
 * The accepted suites (17, 3) a BMC's list names: a standard record with that ID whose
 * algorithms (when listed) are the suite's own, or any record carrying exactly its algorithms.
 */
export function acceptedSuitesListed(listed: readonly ListedCipherSuite[]): Set<CipherSuiteId> {
  const out = new Set<CipherSuiteId>();
  for (const record of listed) {
    const byAlgorithms = ([17, 3] as const).find((id) => sameAlgorithms(cipherSuite(id), record));
    if (byAlgorithms !== undefined) out.add(byAlgorithms);
    else if (record.oemIana === undefined && isAcceptedCipherSuite(record.id) && record.authenticationAlgorithm === undefined) out.add(record.id);
  }
  return out;
}

function sameAlgorithms(suite: CipherSuite, a: { authenticationAlgorithm?: number | undefined; integrityAlgorithm?: number | undefined; confidentialityAlgorithm?: number | undefined }): boolean {
  return a.authenticationAlgorithm === suite.authenticationAlgorithm && a.integrityAlgorithm === suite.integrityAlgorithm
    && a.confidentialityAlgorithm === suite.confidentialityAlgorithm;
}

/** What to propose: the allowed suites, in the operator's order, that the BMC lists (all allowed when its list is empty or missing). */
export type SuitePlan = { readonly propose: readonly CipherSuite[] } | { readonly refused: string };

/**
 * Plans the Open Session proposals. `listed` is undefined when the BMC did not answer Get Channel
 * Cipher Suites; then, and when it listed no record at all, every allowed suite is proposed in
 * order (the Open Session answers decide). A list without any allowed suite is refused up front.
 */
export function planCipherSuites(allowed: readonly CipherSuiteId[], listed: readonly ListedCipherSuite[] | undefined): SuitePlan {
  if (listed === undefined || listed.length === 0) return { propose: allowed.map(cipherSuite) };
  const offered = acceptedSuitesListed(listed);
  const both = allowed.filter((id) => offered.has(id));
  if (both.length > 0) return { propose: both.map(cipherSuite) };
  const ids = [...new Set(listed.map((r) => r.id))].sort((a, b) => a - b);
  return {
    refused: `the BMC offers cipher suite${ids.length === 1 ? '' : 's'} ${ids.length === 0 ? '(none)' : ids.join(', ')}, `
      + `none of the allowed ${allowed.join(', ')} (rackside uses only 17 and 3; never 0)`,
  };
}

/** The verdict on an Open Session answer's algorithms to a proposal of `proposed`. */
export type AnswerVerdict = { readonly suite: CipherSuite } | { readonly refused: string; readonly none: boolean };

/**
 * Judges the algorithms a BMC answered: the proposed suite's, or another allowed suite's (the
 * BMC chose it) → use that suite; anything else → refused, with `none` set for cipher suite 0.
 */
export function judgeOpenSessionAnswer(
  proposed: CipherSuite, allowed: readonly CipherSuiteId[],
  answer: { readonly authenticationAlgorithm?: number | undefined; readonly integrityAlgorithm?: number | undefined; readonly confidentialityAlgorithm?: number | undefined },
): AnswerVerdict {
  if (sameAlgorithms(proposed, answer)) return { suite: proposed };
  const other = allowed.map(cipherSuite).find((s) => sameAlgorithms(s, answer));
  if (other !== undefined) return { suite: other };
  const algs = `${answer.authenticationAlgorithm ?? '?'}/${answer.integrityAlgorithm ?? '?'}/${answer.confidentialityAlgorithm ?? '?'}`;
  const known = ([17, 3] as const).find((id) => sameAlgorithms(cipherSuite(id), answer));
  const none = answer.authenticationAlgorithm === 0 || answer.integrityAlgorithm === 0;
  const why = known !== undefined ? `cipher suite ${known}'s, which is not allowed here (allowed: ${allowed.join(', ')})`
    : none ? 'without authentication or integrity' : 'of no cipher suite rackside uses';
  return {
    none,
    refused: `Open Session answered algorithms ${algs} instead of cipher suite ${proposed.id}'s: ${why}; refusing (never downgrading, never cipher suite 0)`,
  };
}

/**
 * Parses an operator's cipher suite setting (a pin such as `17`, or a list `17,3`) into the
 * allowed list; throws RangeError naming what is wrong (0, 1, 2 … are refused, never used).
 */
export function parseAllowedCipherSuites(value: number | string | readonly number[]): CipherSuiteId[] {
  const items = typeof value === 'number' ? [value] : typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  const ids = items.map((item) => (typeof item === 'number' ? item : /^\d{1,3}$/.test(item) ? Number(item) : Number.NaN));
  const refused = items.filter((_, i) => !isAcceptedCipherSuite(ids[i] ?? Number.NaN));
  if (ids.length === 0 || refused.length > 0) {
    throw new RangeError(`cipher suite ${refused.map(String).join(', ') || '(none)'} refused: only 17 and 3 are accepted (never 0)`);
  }
  return [...new Set(ids.filter(isAcceptedCipherSuite))];
}
