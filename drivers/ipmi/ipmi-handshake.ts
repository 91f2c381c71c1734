/**
 * @module RMCP+ session establishment over an {@link IpmiTransport} (IPMI v2.0 §13.14–§13.21,
 * ipmitool's lanplus order): Get Channel Authentication Capabilities and Get Channel Cipher Suites
 * (§22.15) in IPMI v1.5 wrappers, then Open Session Requests proposing the allowed suites the BMC
 * lists (17, then 3; all allowed ones when the BMC does not answer the list), the next one when
 * the BMC refuses the algorithms. An answer naming another allowed suite's algorithms is followed
 * (suite 3's 1/1/1 to a suite-17 proposal); "none" (cipher suite 0) or a suite the operator did
 * not allow is refused, never followed (cipher-suites.ts decides). RAKP 1 (name-only lookup) → RAKP 2
 * (status and HMAC checked: unknown user and wrong password are AUTH errors) → RAKP 3 → RAKP 4
 * (ICV checked), then Set Session Privilege Level. Errors are `BmcError`s with the address.
 */
import { BmcError, BmcErrorCode, type BmcErrorCodeValue } from '../errors.js';
import {
  decodeGetChannelAuthCapabilities, decodeSetSessionPrivilegeLevel, encodeGetChannelAuthCapabilities,
  encodeSetSessionPrivilegeLevel, type IpmiCommandRequest,
} from './commands.js';
import { ExchangeTimeoutError, TransportError, type Classifier, type IpmiTransport } from './ipmi-transport.js';
import { decodeIpmiResponse, describeCompletionCode, encodeIpmiRequest, type IpmiResponse } from './messages.js';
import {
  authCodesEqual, deriveSessionKeys, rakp2AuthCode, rakp3AuthCode, rakp4IntegrityCheckValue, userKey,
  type CipherSuite, type CipherSuiteId, type RakpExchange,
} from './rakp.js';
import {
  CIPHER_SUITE_CHUNK_BYTES, cipherSuiteRecordData, decodeCipherSuiteRecords, encodeGetChannelCipherSuites, judgeOpenSessionAnswer,
  MAX_CIPHER_SUITE_LIST_INDEX, planCipherSuites, type ListedCipherSuite,
} from './cipher-suites.js';
import {
  ALGORITHM_REFUSED_STATUSES, decodeOpenSessionResponse, decodeRakp2, decodeRakp4, describeRmcpPlusStatus,
  encodeOpenSessionRequest, encodeRakp1, encodeRakp3, type OpenSessionResponse, type Rakp2, type Rakp4,
} from './rakp-messages.js';
import { ReplayWindow } from './replay-window.js';
import { decodeSessionPacket, encodeIpmi15Packet, encodeSessionPacket, PayloadType, type SessionSecurity } from './session-packet.js';

/** State of an open session, shared with ipmi-session.ts. */
export interface ActiveSession {
  readonly suite: CipherSuite;
  /** SIDm: our ID; the BMC puts it in every packet it sends us. */
  readonly consoleSessionId: number;
  /** SIDc: the BMC's ID; we put it in every packet we send. */
  readonly bmcSessionId: number;
  readonly security: SessionSecurity;
  /** Last session sequence number we sent. */
  outboundSequence: number;
  readonly window: ReplayWindow;
}

/** Inputs of {@link openRmcpPlusSession}. */
export interface HandshakeParams {
  readonly transport: IpmiTransport;
  readonly address: string;
  readonly username: string;
  readonly password: string;
  readonly privilege: number;
  /** Suites to propose, in order (already filtered to 17 and 3). */
  readonly suites: readonly CipherSuite[];
  readonly kg: Buffer | undefined;
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly random: (size: number) => Buffer;
  readonly nextTag: () => number;
  readonly nextRqSeq: () => number;
  /** Sends Set Session Privilege Level inside the new session. */
  readonly setPrivilege: (session: ActiveSession, request: IpmiCommandRequest) => Promise<IpmiResponse>;
}

/** Name-only lookup bit of ROLEm (RAKP 1 byte 25 bit 4), as ipmitool sets it by default. */
const NAME_ONLY_LOOKUP = 0x10;

/**
 * Runs the whole handshake and returns the open session. Longer than ~80 lines on purpose: it is
 * the protocol's one sequence of six numbered steps in spec order, sharing the exchange and error
 * helpers and the values each step hands the next; the suite negotiation (steps 2–3) is apart.
 */
export async function openRmcpPlusSession(p: HandshakeParams): Promise<ActiveSession> {
  const fail = (code: BmcErrorCodeValue, message: string, cause?: unknown): BmcError =>
    new BmcError(code, `BMC ${p.address}: ${message}`, { address: p.address, cause });
  const exchange = async <T>(what: string, build: () => Buffer, classify: Classifier<T>, noAnswer: BmcErrorCodeValue, attempts = p.attempts): Promise<T> => {
    try {
      return await p.transport.exchange(build, classify, p.timeoutMs, attempts);
    } catch (err) {
      if (err instanceof ExchangeTimeoutError) throw fail(noAnswer, `no answer to ${what} after ${err.attempts} attempt(s) of ${p.timeoutMs} ms`);
      if (err instanceof TransportError) throw fail(BmcErrorCode.unreachable, `unreachable (${err.message})`, err);
      throw err;
    }
  };

  let kuid: Buffer;
  try {
    kuid = userKey(p.password);
  } catch (err) {
    throw fail(BmcErrorCode.auth, err instanceof Error ? err.message : 'bad password');
  }

  // 1. Get Channel Authentication Capabilities, sessionless (IPMI v1.5 wrapper, AuthType none).
  const capsRequest = encodeGetChannelAuthCapabilities(p.privilege);
  const capsSeq = p.nextRqSeq();
  const caps = await exchange<IpmiResponse>('Get Channel Authentication Capabilities',
    () => encodeIpmi15Packet(encodeIpmiRequest({ ...capsRequest, rqSeq: capsSeq })), sessionlessClassifier(capsRequest, capsSeq), BmcErrorCode.unreachable);
  if (caps.completionCode !== 0) {
    throw fail(BmcErrorCode.protocol, `Get Channel Authentication Capabilities failed: ${describeCompletionCode(caps.completionCode)}`);
  }
  const capabilities = decodeCapabilities(caps.data, fail);
  if (!capabilities.supportsIpmi20) throw fail(BmcErrorCode.unsupported, 'the LAN channel does not offer IPMI v2.0 / RMCP+ (lanplus) sessions');
  if (capabilities.kgRequired && p.kg === undefined) throw fail(BmcErrorCode.auth, 'the BMC has a BMC key (Kg) set and none was given');

  // 2. Ask which suites the BMC offers (Get Channel Cipher Suites); plan what to propose.
  const listed = await listCipherSuites(p, exchange);
  const allowed = p.suites.map((s) => s.id);
  const plan = planCipherSuites(allowed, listed);
  if ('refused' in plan) throw fail(BmcErrorCode.unsupported, `no acceptable cipher suite: ${plan.refused}`);

  // 3. Open Session: propose each planned suite in turn; follow an answer naming an allowed suite.
  const consoleSessionId = nonZeroId(p.random);
  const opened = await openSession(p, plan.propose, allowed, consoleSessionId, exchange, fail);
  const { suite } = opened;
  const bmcSessionId = opened.response.bmcSessionId;

  // 4. RAKP 1 → RAKP 2.
  const consoleRandom = p.random(16);
  const role = (p.privilege & 0x0f) | NAME_ONLY_LOOKUP;
  const tag1 = p.nextTag();
  const rakp2: Rakp2 = await exchange('RAKP Message 1',
    () => setupPacket(PayloadType.rakp1, encodeRakp1({ messageTag: tag1, bmcSessionId, consoleRandom, role, username: p.username })),
    setupClassifier(PayloadType.rakp2, tag1, consoleSessionId, (payload) => decodeRakp2(payload, suite)), BmcErrorCode.timeout);
  if (rakp2.status !== 0) {
    const reason = rakp2.status === 0x0d ? `unknown user (RAKP 2 status ${describeRmcpPlusStatus(rakp2.status)})`
      : `RAKP 2 status ${describeRmcpPlusStatus(rakp2.status)}`;
    throw fail(rakp2.status === 0x01 || rakp2.status === 0x0b ? BmcErrorCode.busy : BmcErrorCode.auth, `authentication failed: ${reason}`);
  }
  const exchangeValues: RakpExchange = {
    consoleSessionId, bmcSessionId, consoleRandom, bmcRandom: rakp2.bmcRandom, bmcGuid: rakp2.bmcGuid, role, username: p.username,
  };
  if (!authCodesEqual(rakp2AuthCode(suite, kuid, exchangeValues), rakp2.authCode)) {
    // Tell the BMC (RAKP 3 with status "invalid integrity check value"), then give up.
    await p.transport.sendOnly(setupPacket(PayloadType.rakp3, encodeRakp3({ messageTag: p.nextTag(), status: 0x0f, bmcSessionId, authCode: Buffer.alloc(0) })))
      .catch(() => undefined);
    throw fail(BmcErrorCode.auth, 'authentication failed: RAKP 2 HMAC mismatch (wrong password, unknown user, or wrong Kg)');
  }

  // 5. RAKP 3 → RAKP 4.
  const keys = deriveSessionKeys(suite, p.kg ?? kuid, exchangeValues);
  const tag3 = p.nextTag();
  const rakp4: Rakp4 = await exchange('RAKP Message 3',
    () => setupPacket(PayloadType.rakp3, encodeRakp3({ messageTag: tag3, status: 0, bmcSessionId, authCode: rakp3AuthCode(suite, kuid, exchangeValues) })),
    setupClassifier(PayloadType.rakp4, tag3, consoleSessionId, (payload) => decodeRakp4(payload, suite)), BmcErrorCode.timeout);
  if (rakp4.status !== 0) throw fail(BmcErrorCode.auth, `authentication failed: RAKP 4 status ${describeRmcpPlusStatus(rakp4.status)}`);
  if (!authCodesEqual(rakp4IntegrityCheckValue(suite, keys.sik, exchangeValues), rakp4.integrityCheckValue)) {
    throw fail(BmcErrorCode.auth, 'authentication failed: RAKP 4 integrity check value mismatch (wrong Kg?)');
  }

  // 6. The session is up; raise it to the requested privilege (it starts at User).
  const session: ActiveSession = {
    suite, consoleSessionId, bmcSessionId, security: keys.security, outboundSequence: 0, window: new ReplayWindow(),
  };
  let privilege: IpmiResponse;
  try {
    privilege = await p.setPrivilege(session, encodeSetSessionPrivilegeLevel(p.privilege));
  } catch (err) {
    if (err instanceof ExchangeTimeoutError) throw fail(BmcErrorCode.timeout, 'no answer to Set Session Privilege Level');
    if (err instanceof TransportError) throw fail(BmcErrorCode.unreachable, `unreachable (${err.message})`, err);
    throw err;
  }
  if (privilege.completionCode !== 0) {
    throw fail(BmcErrorCode.auth, `privilege level ${p.privilege} refused: ${describeCompletionCode(privilege.completionCode)}`);
  }
  if (privilege.data.length >= 1 && decodeSetSessionPrivilegeLevel(privilege.data) !== (p.privilege & 0x0f)) {
    throw fail(BmcErrorCode.auth, `the BMC granted privilege ${decodeSetSessionPrivilegeLevel(privilege.data)}, not ${p.privilege}`);
  }
  return session;
}

type Fail = (code: BmcErrorCodeValue, message: string, cause?: unknown) => BmcError;
type Exchange = <T>(what: string, build: () => Buffer, classify: Classifier<T>, noAnswer: BmcErrorCodeValue, attempts?: number) => Promise<T>;

/**
 * Reads the BMC's cipher suite list, page by page (at most 64 pages of 16 bytes). Undefined when
 * the BMC does not answer the command or refuses it: then every allowed suite is proposed.
 */
async function listCipherSuites(p: HandshakeParams, exchange: Exchange): Promise<ListedCipherSuite[] | undefined> {
  const pages: Buffer[] = [];
  for (let index = 0; index <= MAX_CIPHER_SUITE_LIST_INDEX; index++) {
    const request = encodeGetChannelCipherSuites(index);
    const rqSeq = p.nextRqSeq();
    let answer: IpmiResponse;
    try {
      answer = await exchange<IpmiResponse>('Get Channel Cipher Suites',
        () => encodeIpmi15Packet(encodeIpmiRequest({ ...request, rqSeq })), sessionlessClassifier(request, rqSeq), BmcErrorCode.timeout,
        Math.min(p.attempts, 2)); // optional: a lost answer only means proposing every allowed suite
    } catch (err) {
      if (err instanceof BmcError && err.code === BmcErrorCode.timeout) return undefined; // an older BMC ignores the command
      throw err;
    }
    if (answer.completionCode !== 0) return undefined;
    const chunk = cipherSuiteRecordData(answer.data);
    pages.push(chunk);
    if (chunk.length < CIPHER_SUITE_CHUNK_BYTES) break;
  }
  return decodeCipherSuiteRecords(Buffer.concat(pages));
}

/** Proposes each planned suite until the BMC opens a session with an allowed one (RAKP not yet run). */
async function openSession(
  p: HandshakeParams, propose: readonly CipherSuite[], allowed: readonly CipherSuiteId[], consoleSessionId: number, exchange: Exchange, fail: Fail,
): Promise<{ suite: CipherSuite; response: OpenSessionResponse }> {
  const refusals: string[] = [];
  for (const proposed of propose) {
    const tag = p.nextTag();
    const response = await exchange(`Open Session Request (cipher suite ${proposed.id})`,
      () => setupPacket(PayloadType.openSessionRequest, encodeOpenSessionRequest({
        messageTag: tag, maxPrivilege: p.privilege, consoleSessionId,
        authenticationAlgorithm: proposed.authenticationAlgorithm, integrityAlgorithm: proposed.integrityAlgorithm,
        confidentialityAlgorithm: proposed.confidentialityAlgorithm,
      })),
      setupClassifier(PayloadType.openSessionResponse, tag, consoleSessionId, decodeOpenSessionResponse), BmcErrorCode.timeout);
    if (response.status !== 0) {
      refusals.push(`suite ${proposed.id}: ${describeRmcpPlusStatus(response.status)}`);
      if (ALGORITHM_REFUSED_STATUSES.has(response.status)) continue;
      throw fail(response.status === 0x01 || response.status === 0x0b ? BmcErrorCode.busy : BmcErrorCode.auth,
        `Open Session refused: ${describeRmcpPlusStatus(response.status)}`);
    }
    const verdict = judgeOpenSessionAnswer(proposed, allowed, response);
    if ('refused' in verdict) throw fail(verdict.none ? BmcErrorCode.protocol : BmcErrorCode.unsupported, verdict.refused);
    if (response.bmcSessionId === 0) throw fail(BmcErrorCode.protocol, 'Open Session Response carries managed system session ID 0');
    return { suite: verdict.suite, response };
  }
  throw fail(BmcErrorCode.unsupported, `no acceptable cipher suite (tried ${propose.map((s) => s.id).join(', ')}: ${refusals.join('; ')})`);
}

/** Accepts the sessionless (IPMI v1.5, AuthType none) answer to `request` sent with `rqSeq`. */
function sessionlessClassifier(request: IpmiCommandRequest, rqSeq: number): Classifier<IpmiResponse> {
  return (d) => {
    const packet = decodeSessionPacket(d);
    if (packet.payloadType !== PayloadType.ipmi || packet.authenticated || packet.sessionId !== 0) return { drop: 'unmatched' };
    const r = decodeIpmiResponse(packet.payload);
    return r.rqSeq === rqSeq && r.command === request.command && r.netFn === (request.netFn | 1) ? { value: r } : { drop: 'unmatched' };
  };
}

function decodeCapabilities(data: Buffer, fail: Fail): ReturnType<typeof decodeGetChannelAuthCapabilities> {
  try {
    return decodeGetChannelAuthCapabilities(data);
  } catch (err) {
    throw fail(BmcErrorCode.protocol, `bad Get Channel Authentication Capabilities response: ${err instanceof Error ? err.message : String(err)}`, err);
  }
}

function nonZeroId(random: (size: number) => Buffer): number {
  for (;;) {
    const id = random(4).readUInt32LE(0);
    if (id !== 0) return id;
  }
}

function setupPacket(payloadType: number, payload: Buffer): Buffer {
  return encodeSessionPacket({ payloadType, sessionId: 0, sequence: 0, payload });
}

/** Accepts an unauthenticated session-setup payload of `payloadType` answering `tag` for our session. */
function setupClassifier<T extends { readonly messageTag: number; readonly status: number; readonly consoleSessionId: number }>(
  payloadType: number, tag: number, consoleSessionId: number, decode: (payload: Buffer) => T,
): Classifier<T> {
  return (datagram) => {
    const packet = decodeSessionPacket(datagram);
    if (packet.format !== 'v2.0' || packet.payloadType !== payloadType) return { drop: 'unmatched' };
    const message = decode(packet.payload);
    if (message.messageTag !== tag) return { drop: 'unmatched' };
    // Error answers may carry our ID or 0 (the BMC may not have parsed it); success must echo it.
    const idOk = message.consoleSessionId === consoleSessionId || (message.status !== 0 && message.consoleSessionId === 0);
    if (!idOk) return { drop: 'sessionId' };
    return { value: message };
  };
}
