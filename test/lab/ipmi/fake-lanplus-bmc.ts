/**
 * @module An in-process lanplus BMC on a loopback UDP port, for unit tests of the session and
 * driver where ipmi_sim cannot go: cipher suite 17 (ipmi_sim stops at 3), a BMC that answers
 * Open Session with "none" algorithms (cipher suite 0), forged datagrams (wrong AuthCode, wrong
 * session ID, replays, garbage, truncation, cleartext), a BMC that answers a suite-17 proposal
 * with suite 3's algorithms, a Get Channel Cipher Suites list that is missing, silent or lists
 * other suites, dropped requests, expired sessions,
 * busy completion codes, and boot flags that do read back. Built from the drivers' codecs (BMC
 * side); the codecs themselves are checked against independent vectors and ipmitool elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { decodeIpmiRequest, encodeIpmiResponse } from '../../../drivers/ipmi/messages.js';
import {
  authCodesEqual, cipherSuite, deriveSessionKeys, isAcceptedCipherSuite, rakp2AuthCode, rakp3AuthCode, rakp4IntegrityCheckValue,
  type CipherSuite, type RakpExchange,
} from '../../../drivers/ipmi/rakp.js';
import {
  decodeOpenSessionRequest, decodeRakp1, decodeRakp3, encodeOpenSessionResponse, encodeRakp2, encodeRakp4,
} from '../../../drivers/ipmi/rakp-messages.js';
import { encodeAsfPong } from '../../../drivers/ipmi/rmcp.js';
import {
  decodeSessionPacket, encodeIpmi15Packet, encodeSessionPacket, PayloadType, peekSessionId, type SessionSecurity,
} from '../../../drivers/ipmi/session-packet.js';
import { encodeFruImage } from './fru-image.js';
import { DEFAULT_FRU } from './ipmi-sim.js';

/** A forgery sent just before the genuine response. */
export type Forgery = 'wrong-hmac' | 'wrong-session' | 'replay' | 'garbage' | 'truncated' | 'unauthenticated' | 'duplicate';

/** Options of {@link FakeLanplusBmc.start}. */
export interface FakeLanplusBmcOptions {
  readonly users?: readonly { readonly name: string; readonly password: string }[];
  /** Suites offered; default [17, 3]. `0` alone makes the BMC answer every proposal with "none". */
  readonly cipherSuites?: readonly number[];
  /** Answer refused proposals in ipmi_sim's 2-byte form (tag, status). */
  readonly shortErrors?: boolean;
  /**
   * What Get Channel Cipher Suites (IPMI v2.0 §22.15) lists: suite IDs (0, 1, 2, 3, 17 with their
   * standard algorithms), `'unsupported'` (completion code 0xC1, as older BMCs), or `'silent'` (no
   * answer). Default: the offered suites — and for the downgrading BMC (`cipherSuites` with 0)
   * 0, 3 and 17, since it claims to take anything.
   */
  readonly cipherSuiteList?: readonly number[] | 'unsupported' | 'silent';
  /**
   * Answer every proposal of an offered suite with this suite's algorithms and run the session
   * with it — `3` is the field BMC that answers a suite-17 proposal with 1/1/1.
   */
  readonly answerSuite?: number;
}

interface Session {
  readonly suite: CipherSuite;
  readonly consoleSessionId: number;
  readonly bmcSessionId: number;
  readonly user: { readonly name: string; readonly password: string };
  exchange: RakpExchange | undefined;
  security: SessionSecurity | undefined;
  outbound: number;
  lastResponse: Buffer | undefined;
}

/** Test knobs, changed freely between calls. */
export interface FakeLanplusKnobs {
  /** Ignore the next N in-session requests (no answer). */
  dropRequests: number;
  /** Ignore everything (a dead BMC). */
  silent: boolean;
  /** Forgeries to send before the next genuine in-session response, consumed in order. */
  forgeries: Forgery[];
  /** Answer the next N in-session requests with completion code 0xC0 (node busy). */
  busyResponses: number;
}

/** The fake BMC. */
export class FakeLanplusBmc {
  readonly knobs: FakeLanplusKnobs = { dropRequests: 0, silent: false, forgeries: [], busyResponses: 0 };
  /** Chassis state. */
  power = false;
  /** Boot flag data bytes 1–5 as last set (read back in full, unlike ipmi_sim). */
  bootFlags = Buffer.alloc(5);
  /** Chassis Control actions received, in order. */
  readonly controls: number[] = [];
  /** Cipher suite of every session opened. */
  readonly openedSuites: number[] = [];
  /** Suite (or `auth/integrity/confidentiality` text) of every Open Session proposal received. */
  readonly proposals: (number | string)[] = [];
  /** Get Channel Cipher Suites requests received. */
  cipherSuiteListRequests = 0;
  closeSessions = 0;
  readonly #socket: Socket;
  readonly #options: FakeLanplusBmcOptions;
  readonly #sessions = new Map<number, Session>();
  readonly #fru = encodeFruImage(DEFAULT_FRU);

  private constructor(socket: Socket, options: FakeLanplusBmcOptions) {
    this.#socket = socket;
    this.#options = options;
    socket.on('message', (d, rinfo) => { this.#onDatagram(d, rinfo); });
  }

  /** Binds to a free port on 127.0.0.1. */
  static async start(options: FakeLanplusBmcOptions = {}): Promise<FakeLanplusBmc> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => { socket.once('error', reject); socket.bind(0, '127.0.0.1', resolve); });
    return new FakeLanplusBmc(socket, options);
  }

  /** The UDP port it listens on (127.0.0.1). */
  get port(): number {
    return this.#socket.address().port;
  }

  /** Number of live sessions. */
  get sessionCount(): number {
    return [...this.#sessions.values()].filter((s) => s.security !== undefined).length;
  }

  /** Forgets every session, as a BMC does when they time out. */
  expireSessions(): void {
    this.#sessions.clear();
  }

  /** Closes the socket. */
  stop(): Promise<void> {
    return new Promise((resolve) => { this.#socket.close(() => { resolve(); }); });
  }

  #send(datagram: Buffer, to: RemoteInfo): void {
    this.#socket.send(datagram, to.port, to.address);
  }

  #onDatagram(datagram: Buffer, from: RemoteInfo): void {
    if (this.knobs.silent) return;
    try {
      const pong = this.#asf(datagram);
      if (pong !== undefined) { this.#send(pong, from); return; }
      const sid = peekSessionId(datagram) ?? 0;
      if (sid !== 0) { this.#inSession(datagram, sid, from); return; }
      const packet = decodeSessionPacket(datagram);
      if (packet.format === 'v1.5') {
        const answer = this.#sessionless(packet.payload);
        if (answer !== undefined) this.#send(encodeIpmi15Packet(answer), from);
        return;
      }
      const reply = this.#setup(packet.payloadType, packet.payload);
      if (reply !== undefined) this.#send(encodeSessionPacket({ payloadType: reply.type, sessionId: 0, sequence: 0, payload: reply.payload }), from);
    } catch {
      // a fake BMC ignores what it cannot parse, like a real one
    }
  }

  #asf(datagram: Buffer): Buffer | undefined {
    if (datagram[3] !== 0x06 || datagram[8] !== 0x80) return undefined;
    const tag = datagram[9] ?? 0;
    return encodeAsfPong({ messageTag: tag, oemIana: 4542, oemDefined: 0, supportsIpmi: true, asfVersion: 1, supportedInteractions: 0 });
  }

  /** Get Channel Authentication Capabilities and Get Channel Cipher Suites, outside a session. */
  #sessionless(message: Buffer): Buffer | undefined {
    const request = decodeIpmiRequest(message);
    const answer = (completionCode: number, data: Buffer): Buffer => encodeIpmiResponse({
      rqAddr: request.rqAddr, netFn: request.netFn + 1, rqLun: request.rqLun, rsAddr: 0x20, rqSeq: request.rqSeq, rsLun: 0,
      command: request.command, completionCode, data,
    });
    if (request.command === 0x38) return answer(0, Buffer.from([0x01, 0x80, 0x04, 0x02, 0, 0, 0, 0]));
    if (request.command !== 0x54) return answer(0xc1, Buffer.alloc(0));
    this.cipherSuiteListRequests += 1;
    const offered = this.#options.cipherSuites ?? [17, 3];
    const list = this.#options.cipherSuiteList ?? (offered.includes(0) ? [0, 3, 17] : offered);
    if (list === 'silent') return undefined;
    if (list === 'unsupported') return answer(0xc1, Buffer.alloc(0));
    const records = Buffer.concat(list.map(cipherSuiteRecord));
    const index = (request.data[2] ?? 0) & 0x3f;
    return answer(0, Buffer.concat([Buffer.from([0x01]), records.subarray(index * 16, index * 16 + 16)]));
  }

  #setup(type: number, payload: Buffer): { type: number; payload: Buffer } | undefined {
    const offered = this.#options.cipherSuites ?? [17, 3];
    if (type === PayloadType.openSessionRequest) {
      const request = decodeOpenSessionRequest(payload);
      const match = offered.filter(isAcceptedCipherSuite).map(cipherSuite).find((s) => s.authenticationAlgorithm === request.authenticationAlgorithm
        && s.integrityAlgorithm === request.integrityAlgorithm && s.confidentialityAlgorithm === request.confidentialityAlgorithm);
      this.proposals.push(match?.id ?? `${request.authenticationAlgorithm}/${request.integrityAlgorithm}/${request.confidentialityAlgorithm}`);
      const bmcSessionId = (randomBytes(4).readUInt32LE(0) | 1) >>> 0;
      const base = { messageTag: request.messageTag, maxPrivilege: 4, consoleSessionId: request.consoleSessionId, bmcSessionId };
      if (offered.includes(0) && match === undefined) {
        // A BMC that "accepts" anything by downgrading to cipher suite 0.
        return { type: PayloadType.openSessionResponse, payload: encodeOpenSessionResponse({ ...base, status: 0, authenticationAlgorithm: 0, integrityAlgorithm: 0, confidentialityAlgorithm: 0 }) };
      }
      if (match === undefined) {
        const refused = encodeOpenSessionResponse({ ...base, status: 0x11, authenticationAlgorithm: undefined, integrityAlgorithm: undefined, confidentialityAlgorithm: undefined });
        return { type: PayloadType.openSessionResponse, payload: this.#options.shortErrors === true ? refused.subarray(0, 2) : refused };
      }
      const user = { name: '', password: '' };
      const chosen = this.#options.answerSuite === undefined ? match : cipherSuite(this.#options.answerSuite);
      this.#sessions.set(bmcSessionId, { suite: chosen, consoleSessionId: request.consoleSessionId, bmcSessionId, user, exchange: undefined, security: undefined, outbound: 0, lastResponse: undefined });
      return {
        type: PayloadType.openSessionResponse,
        payload: encodeOpenSessionResponse({ ...base, status: 0, authenticationAlgorithm: chosen.authenticationAlgorithm, integrityAlgorithm: chosen.integrityAlgorithm, confidentialityAlgorithm: chosen.confidentialityAlgorithm }),
      };
    }
    if (type === PayloadType.rakp1) {
      const rakp1 = decodeRakp1(payload);
      const session = this.#sessions.get(rakp1.bmcSessionId);
      if (session === undefined) return undefined;
      const user = (this.#options.users ?? [{ name: 'admin', password: 'password' }]).find((u) => u.name === rakp1.username);
      const head = { messageTag: rakp1.messageTag, consoleSessionId: session.consoleSessionId };
      if (user === undefined) {
        return { type: PayloadType.rakp2, payload: encodeRakp2({ ...head, status: 0x0d, bmcRandom: Buffer.alloc(0), bmcGuid: Buffer.alloc(0), authCode: Buffer.alloc(0) }) };
      }
      const exchange: RakpExchange = {
        consoleSessionId: session.consoleSessionId, bmcSessionId: session.bmcSessionId, consoleRandom: rakp1.consoleRandom,
        bmcRandom: randomBytes(16), bmcGuid: Buffer.from('a123456789abcdefa123456789abcdef', 'hex'), role: rakp1.role, username: rakp1.username,
      };
      this.#sessions.set(session.bmcSessionId, { ...session, user, exchange });
      const authCode = rakp2AuthCode(session.suite, Buffer.from(user.password), exchange);
      return { type: PayloadType.rakp2, payload: encodeRakp2({ ...head, status: 0, bmcRandom: exchange.bmcRandom, bmcGuid: exchange.bmcGuid, authCode }) };
    }
    if (type === PayloadType.rakp3) {
      const rakp3 = decodeRakp3(payload);
      const session = this.#sessions.get(rakp3.bmcSessionId);
      if (session?.exchange === undefined) return undefined;
      const head = { messageTag: rakp3.messageTag, consoleSessionId: session.consoleSessionId };
      const key = Buffer.from(session.user.password);
      if (rakp3.status !== 0 || !authCodesEqual(rakp3AuthCode(session.suite, key, session.exchange), rakp3.authCode)) {
        this.#sessions.delete(session.bmcSessionId);
        return { type: PayloadType.rakp4, payload: encodeRakp4({ ...head, status: 0x0f, integrityCheckValue: Buffer.alloc(0) }) };
      }
      const keys = deriveSessionKeys(session.suite, key, session.exchange);
      session.security = keys.security;
      this.openedSuites.push(session.suite.id);
      return { type: PayloadType.rakp4, payload: encodeRakp4({ ...head, status: 0, integrityCheckValue: rakp4IntegrityCheckValue(session.suite, keys.sik, session.exchange) }) };
    }
    return undefined;
  }

  #inSession(datagram: Buffer, bmcSessionId: number, from: RemoteInfo): void {
    const session = this.#sessions.get(bmcSessionId);
    if (session?.security === undefined) return;
    const packet = decodeSessionPacket(datagram, session.security);
    if (!packet.authenticated || !packet.encrypted || packet.payloadType !== PayloadType.ipmi) return;
    if (this.knobs.dropRequests > 0) { this.knobs.dropRequests -= 1; return; }
    const request = decodeIpmiRequest(packet.payload);
    let cc = 0;
    let data: Buffer = Buffer.alloc(0);
    if (this.knobs.busyResponses > 0) {
      this.knobs.busyResponses -= 1;
      cc = 0xc0;
    } else {
      [cc, data] = this.#command(request.netFn, request.command, request.data, session);
    }
    const message = encodeIpmiResponse({
      rqAddr: request.rqAddr, netFn: request.netFn + 1, rqLun: request.rqLun, rsAddr: 0x20, rqSeq: request.rqSeq, rsLun: 0,
      command: request.command, completionCode: cc, data,
    });
    const encode = (sessionId: number, security: SessionSecurity | undefined): Buffer => {
      session.outbound += 1;
      return encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId, sequence: session.outbound, payload: message }, security, randomBytes(16));
    };
    const genuine = encode(session.consoleSessionId, session.security);
    for (const forgery of this.knobs.forgeries.splice(0)) {
      const forged = forgery === 'wrong-hmac' ? flipLastByte(genuine)
        : forgery === 'wrong-session' ? encode(session.consoleSessionId ^ 0x5a5a, session.security)
          : forgery === 'replay' ? session.lastResponse
            : forgery === 'garbage' ? randomBytes(40)
              : forgery === 'truncated' ? genuine.subarray(0, 20)
                : forgery === 'unauthenticated' ? encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId: session.consoleSessionId, sequence: session.outbound + 100, payload: message })
                  : undefined;
      if (forged !== undefined) this.#send(forged, from);
      if (forgery === 'duplicate') setImmediate(() => { this.#send(genuine, from); });
    }
    session.lastResponse = genuine;
    this.#send(genuine, from);
  }

  #command(netFn: number, command: number, data: Buffer, session: Session): [number, Buffer] {
    const key = (netFn << 8) | command;
    switch (key) {
      case 0x0601: return [0, Buffer.from([0x20, 0x81, 0x02, 0x15, 0x02, 0x9f, 0xa2, 0x02, 0x00, 0x34, 0x12])]; // Dell (IANA 674), fw 2.15, product 0x1234
      case 0x063b: return [0, Buffer.from([(data[0] ?? 0) & 0x0f])];
      case 0x063c:
        this.closeSessions += 1;
        this.#sessions.delete(session.bmcSessionId);
        return [0, Buffer.alloc(0)];
      case 0x0001: return [0, Buffer.from([this.power ? 0x01 : 0x00, 0x00, 0x00])];
      case 0x0002: {
        const action = data[0] ?? 0xff;
        this.controls.push(action);
        if (action === 0x00 || action === 0x05) this.power = false;
        else if (action === 0x01 || action === 0x02 || action === 0x03) this.power = true;
        else return [0xcc, Buffer.alloc(0)];
        return [0, Buffer.alloc(0)];
      }
      case 0x0008:
        if (data[0] !== 0x05 || data.length < 6) return [0xcc, Buffer.alloc(0)];
        this.bootFlags = Buffer.from(data.subarray(1, 6));
        return [0, Buffer.alloc(0)];
      case 0x0009: return data[0] === 0x05 ? [0, Buffer.concat([Buffer.from([0x01, 0x05]), this.bootFlags])] : [0x80, Buffer.alloc(0)];
      case 0x0a10: return [0, Buffer.from([this.#fru.length & 0xff, this.#fru.length >> 8, 0x00])];
      case 0x0a11: {
        const offset = data.readUInt16LE(1);
        const chunk = this.#fru.subarray(offset, offset + (data[3] ?? 0));
        return [0, Buffer.concat([Buffer.from([chunk.length]), chunk])];
      }
      default: return [0xc1, Buffer.alloc(0)];
    }
  }
}

/** Standard algorithms (auth/integrity/confidentiality) of the suites the fake can list. */
const LISTED_ALGORITHMS: Readonly<Record<number, readonly [number, number, number]>> = {
  0: [0, 0, 0], 1: [1, 0, 0], 2: [1, 1, 0], 3: [1, 1, 1], 17: [3, 4, 1],
};

/** One standard cipher suite record (IPMI v2.0 table 22-18): C0h, ID, tagged algorithm bytes. */
function cipherSuiteRecord(id: number): Buffer {
  const [auth, integrity, confidentiality] = LISTED_ALGORITHMS[id] ?? [0, 0, 0];
  return Buffer.from([0xc0, id, auth, 0x40 | integrity, 0x80 | confidentiality]);
}

function flipLastByte(datagram: Buffer): Buffer {
  const copy = Buffer.from(datagram);
  copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0x01;
  return copy;
}
