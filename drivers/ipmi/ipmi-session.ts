/**
 * @module One IPMI v2.0 / RMCP+ ("lanplus") session per BMC over UDP: Get Channel
 * Authentication Capabilities, Get Channel Cipher Suites, Open Session (the strongest allowed suite
 * the BMC lists: 17, then 3; never 0; see cipher-suites.ts), RAKP 1–4
 * with the RAKP 2 HMAC and RAKP 4 ICV checked, Set Session Privilege Level, then authenticated
 * and encrypted requests matched by rqSeq, one at a time, retried after a per-attempt timeout
 * (1 s × 3 by default). The session is reused, kept alive with Get Device ID while idle, reopened
 * once when a request goes unanswered (it may have expired on the BMC), and closed with Close
 * Session. Forged or broken datagrams (wrong AuthCode or session ID, replayed sequence numbers,
 * garbage) are dropped and counted in {@link IpmiSession.stats}. Failures surface as `BmcError`s
 * naming the BMC address, never the password. Handshake steps live in ipmi-handshake.ts.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { BmcError, BmcErrorCode, type BmcErrorCodeValue } from '../errors.js';
import type { HostLookup } from '../host-lookup.js';
import {
  encodeCloseSession, encodeGetDeviceId, Privilege, type IpmiCommandRequest,
} from './commands.js';
import { IpmiDecodeError } from './decode-error.js';
import { openRmcpPlusSession, type ActiveSession } from './ipmi-handshake.js';
import { ExchangeTimeoutError, IpmiTransport, TransportError, type TransportStats } from './ipmi-transport.js';
import {
  BUSY_COMPLETION_CODES, decodeIpmiResponse, describeCompletionCode, encodeIpmiRequest, RQ_SEQ_MODULO, type IpmiResponse,
} from './messages.js';
import { cipherSuite, isAcceptedCipherSuite, PREFERRED_CIPHER_SUITES, type CipherSuiteId } from './rakp.js';
import { decodeAsfPong, encodeAsfPing, type AsfPong } from './rmcp.js';
import { decodeSessionPacket, encodeSessionPacket, PayloadType, peekSessionId } from './session-packet.js';

/** Options of {@link IpmiSession}. */
export interface IpmiSessionOptions {
  readonly host: string;
  /** UDP port; default 623. */
  readonly port?: number;
  readonly username: string;
  /** At most 20 bytes (IPMI v2.0). Never logged nor put in errors. */
  readonly password: string;
  /** Requested privilege level; default administrator (4). */
  readonly privilege?: number;
  /**
   * Cipher suites allowed, most preferred first; default [17, 3]. Anything but 17 and 3 is refused.
   * The BMC's list narrows them; an Open Session answer naming another allowed suite is followed.
   */
  readonly cipherSuites?: readonly number[];
  /** BMC key Kg when the BMC has one (else the password keys the SIK). */
  readonly kg?: Buffer;
  /** Wait for one answer, in ms; default 1000. */
  readonly attemptTimeoutMs?: number;
  /** Sends per request (first + retransmissions); default 3. */
  readonly attempts?: number;
  /** Idle time after which a Get Device ID keeps the session alive; default 30 000; 0 = never. */
  readonly keepaliveMs?: number;
  /** Address named in errors; default `host:port`. */
  readonly address?: string;
  /** Randomness source (tests pass a deterministic one); default node:crypto. */
  readonly randomBytes?: (size: number) => Buffer;
  /** Resolver for a host name (tests inject one); default the system's (host-lookup.ts). */
  readonly lookup?: HostLookup;
}

/** Counters of one session: transport counters plus session events. */
export interface IpmiSessionStats extends TransportStats {
  readonly sessionsOpened: number;
  readonly sessionsReopened: number;
  readonly keepalives: number;
  /** Suite of the current session; undefined when none is open. */
  readonly cipherSuite: CipherSuiteId | undefined;
}

/** A command the BMC answered with a non-zero completion code. */
export class IpmiCompletionCodeError extends BmcError {
  readonly completionCode: number;
  constructor(code: BmcErrorCodeValue, message: string, completionCode: number, address: string) {
    super(code, message, { address });
    this.completionCode = completionCode;
  }
}

const DEFAULTS = { port: 623, attemptTimeoutMs: 1000, attempts: 3, keepaliveMs: 30_000 } as const;

/** One lanplus session to one BMC; lazily opened, serialized, reusable. */
export class IpmiSession {
  readonly address: string;
  readonly #options: IpmiSessionOptions;
  readonly #suites: readonly CipherSuiteId[];
  readonly #transport: IpmiTransport;
  readonly #random: (size: number) => Buffer;
  #active: ActiveSession | undefined;
  #opening: Promise<ActiveSession> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #rqSeq = 0;
  #messageTag = 0;
  #keepaliveTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #counters = { sessionsOpened: 0, sessionsReopened: 0, keepalives: 0 };

  constructor(options: IpmiSessionOptions) {
    const suites = options.cipherSuites ?? PREFERRED_CIPHER_SUITES;
    const refused = suites.filter((id) => !isAcceptedCipherSuite(id));
    if (suites.length === 0 || refused.length > 0) {
      throw new RangeError(`cipher suites ${refused.join(', ') || '(none)'} refused: only 17 and 3 are accepted (never 0)`);
    }
    this.#suites = suites.filter(isAcceptedCipherSuite);
    this.#options = options;
    const port = options.port ?? DEFAULTS.port;
    this.address = options.address ?? `${options.host}:${port}`;
    this.#transport = new IpmiTransport(options.host, port, { address: this.address, ...(options.lookup === undefined ? {} : { lookup: options.lookup }) });
    this.#random = options.randomBytes ?? cryptoRandomBytes;
  }

  /** Cipher suite of the open session, if any. */
  get cipherSuite(): CipherSuiteId | undefined {
    return this.#active?.suite.id;
  }

  /** Snapshot of the counters. */
  stats(): IpmiSessionStats {
    const t = this.#transport.stats;
    return { ...t, dropped: { ...t.dropped }, ...this.#counters, cipherSuite: this.cipherSuite };
  }

  /** Opens the session now (otherwise the first request does). */
  async open(): Promise<void> {
    await this.#serialize(() => this.#ensureOpen());
    this.#armKeepalive();
  }

  /** Sends an ASF Presence Ping and resolves with the pong (no session needed). */
  async ping(): Promise<AsfPong> {
    return this.#serialize(async () => {
      const tag = this.#nextTag() & 0xfe;
      try {
        return await this.#transport.exchange<AsfPong>(() => encodeAsfPing(tag), (d) => {
          const pong = decodeAsfPong(d);
          return pong.messageTag === tag ? { value: pong } : { drop: 'unmatched' };
        }, this.#timeoutMs(), this.#attempts());
      } catch (err) {
        throw this.#transportError(err, 'presence ping');
      }
    });
  }

  /** Sends a request in the session and returns the raw response (any completion code). */
  async request(request: IpmiCommandRequest): Promise<IpmiResponse> {
    return this.#serialize(async () => {
      const session = await this.#ensureOpen();
      try {
        return await this.#send(session, request);
      } catch (err) {
        if (!(err instanceof ExchangeTimeoutError)) throw this.#transportError(err, describe(request));
        // Unanswered inside a session: the BMC may have expired it. Reopen once and retry.
        this.#active = undefined;
        this.#counters.sessionsReopened += 1;
        const fresh = await this.#ensureOpen();
        try {
          return await this.#send(fresh, request);
        } catch (again) {
          throw this.#transportError(again, describe(request));
        }
      } finally {
        this.#armKeepalive();
      }
    });
  }

  /** Sends a request and decodes its data; a non-zero completion code throws (BUSY for busy codes). */
  async call<T>(request: IpmiCommandRequest, decode: (data: Buffer) => T): Promise<T> {
    const response = await this.request(request);
    if (response.completionCode !== 0) {
      const cc = response.completionCode;
      const code = BUSY_COMPLETION_CODES.has(cc) ? BmcErrorCode.busy : cc === 0xd4 ? BmcErrorCode.auth : BmcErrorCode.protocol;
      throw new IpmiCompletionCodeError(code, `BMC ${this.address}: ${describe(request)} failed with completion code ${describeCompletionCode(cc)}`, cc, this.address);
    }
    try {
      return decode(response.data);
    } catch (err) {
      if (err instanceof IpmiDecodeError) {
        throw new BmcError(BmcErrorCode.protocol, `BMC ${this.address}: bad ${describe(request)} response: ${err.message}`, { address: this.address, cause: err });
      }
      throw err;
    }
  }

  /** Sends Close Session (best effort) and closes the socket; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarmKeepalive();
    const session = this.#active;
    this.#active = undefined;
    if (session !== undefined) {
      await this.#queue.catch(() => undefined);
      try {
        await this.#send(session, encodeCloseSession(session.bmcSessionId), 1, Math.min(this.#timeoutMs(), 500));
      } catch {
        // The BMC may already have dropped the session; it times out on its own then.
      }
    }
    this.#transport.close();
  }

  #serialize<T>(task: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new BmcError(BmcErrorCode.protocol, `BMC ${this.address}: the IPMI session is closed`, { address: this.address }));
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #ensureOpen(): Promise<ActiveSession> {
    if (this.#active !== undefined) return this.#active;
    this.#opening ??= openRmcpPlusSession({
      transport: this.#transport, address: this.address, username: this.#options.username, password: this.#options.password,
      privilege: this.#options.privilege ?? Privilege.administrator, suites: this.#suites.map(cipherSuite),
      kg: this.#options.kg, timeoutMs: this.#timeoutMs(), attempts: this.#attempts(), random: this.#random,
      nextTag: () => this.#nextTag(), nextRqSeq: () => this.#nextRqSeq(),
      setPrivilege: (session, request) => this.#send(session, request),
    }).finally(() => { this.#opening = undefined; });
    const session = await this.#opening;
    this.#active = session;
    this.#counters.sessionsOpened += 1;
    return session;
  }

  /** One request/response in `session`; rqSeq kept across retransmissions, sequence number not. */
  #send(session: ActiveSession, request: IpmiCommandRequest, attempts = this.#attempts(), timeoutMs = this.#timeoutMs()): Promise<IpmiResponse> {
    const rqSeq = this.#nextRqSeq();
    const message = encodeIpmiRequest({ ...request, rqSeq });
    return this.#transport.exchange<IpmiResponse>(() => {
      session.outboundSequence = session.outboundSequence >= 0xffffffff ? 1 : session.outboundSequence + 1;
      return encodeSessionPacket(
        { payloadType: PayloadType.ipmi, sessionId: session.bmcSessionId, sequence: session.outboundSequence, payload: message },
        session.security, this.#random(16),
      );
    }, (datagram) => {
      const peeked = peekSessionId(datagram);
      if (peeked !== undefined && peeked !== session.consoleSessionId) return { drop: 'sessionId' };
      const packet = decodeSessionPacket(datagram, session.security);
      if (packet.format !== 'v2.0' || packet.payloadType !== PayloadType.ipmi || !packet.authenticated || !packet.encrypted) {
        return { drop: 'unauthenticated' };
      }
      if (session.window.accept(packet.sequence) !== 'accept') return { drop: 'replay' };
      const response = decodeIpmiResponse(packet.payload);
      const matches = response.rqSeq === rqSeq && response.netFn === (request.netFn | 1) && response.command === request.command;
      return matches ? { value: response } : { drop: 'unmatched' };
    }, timeoutMs, attempts);
  }

  #transportError(err: unknown, what: string): Error {
    if (err instanceof BmcError) return err;
    if (err instanceof ExchangeTimeoutError) {
      return new BmcError(BmcErrorCode.timeout, `BMC ${this.address}: no answer to ${what} after ${err.attempts} attempt(s) of ${this.#timeoutMs()} ms`, { address: this.address });
    }
    if (err instanceof TransportError) {
      return new BmcError(BmcErrorCode.unreachable, `BMC ${this.address} is unreachable: ${err.message}`, { address: this.address, cause: err });
    }
    return err instanceof Error ? err : new Error(String(err));
  }

  #armKeepalive(): void {
    this.#disarmKeepalive();
    const every = this.#options.keepaliveMs ?? DEFAULTS.keepaliveMs;
    if (every <= 0 || this.#closed || this.#active === undefined) return;
    this.#keepaliveTimer = setTimeout(() => {
      this.#keepaliveTimer = undefined;
      this.#counters.keepalives += 1;
      // A failed keepalive only drops the session; the next request reopens it.
      this.request(encodeGetDeviceId()).catch(() => { this.#active = undefined; });
    }, every);
    this.#keepaliveTimer.unref();
  }

  #disarmKeepalive(): void {
    if (this.#keepaliveTimer !== undefined) clearTimeout(this.#keepaliveTimer);
    this.#keepaliveTimer = undefined;
  }

  #nextTag(): number {
    this.#messageTag = (this.#messageTag + 1) & 0xff;
    return this.#messageTag;
  }

  #nextRqSeq(): number {
    this.#rqSeq = (this.#rqSeq + 1) % RQ_SEQ_MODULO;
    return this.#rqSeq;
  }

  #timeoutMs(): number {
    return this.#options.attemptTimeoutMs ?? DEFAULTS.attemptTimeoutMs;
  }

  #attempts(): number {
    return this.#options.attempts ?? DEFAULTS.attempts;
  }
}

function describe(request: IpmiCommandRequest): string {
  return `IPMI command NetFn 0x${request.netFn.toString(16)} cmd 0x${request.command.toString(16)}`;
}
