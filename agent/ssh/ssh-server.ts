/**
 * @module rackside's embedded SSH server (ssh2 `Server`): public-key authentication only
 * (RFC 4252 §7) against an OpenSSH authorized_keys file, honouring `from=`, `command=`,
 * `no-pty`, `no-port-forwarding`/`restrict`, `permitopen=` and `expiry-time=`; sessions run
 * rackside CLI subcommands ({@link handleSession}); `direct-tcpip` (`ssh -L`, RFC 4254 §7.2) may
 * reach only the management listener; `tcpip-forward` (`ssh -R`, §7.1), streamlocal, X11,
 * agent forwarding and subsystems are refused. Every decision lands in the audit trail.
 *
 * Hardening: the TCP listener is our own `net.Server`, so a source banned by the
 * {@link FailureLimiter} is dropped before any SSH byte is read; unauthenticated connections are
 * capped and closed after `loginGraceMs` (sshd's `MaxStartups`, `LoginGraceTime`); at most
 * `maxAuthTries` credentials per connection (`MaxAuthTries`); every client connection and
 * channel has an `error` listener, so a malformed client never takes the server down.
 *
 * The decisions (admission, authentication, forwarding) are pure functions in `ssh-policy.ts`;
 * this file wires them to the sockets and ssh2's events.
 */
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { AuthContext, Connection, ParsedKey, Server, ServerChannel, Session, TcpipRequestInfo } from 'ssh2';
import { steadyNowMs } from '../clock.js';
import { normalizeAddress } from './address-match.js';
import { AuthorizedKeysFile, type AuthorizedKeysReport } from './authorized-keys-file.js';
import { loadOrCreateHostKey } from './host-key.js';
import { fingerprintSha256 } from './key-blob.js';
import { FailureLimiter, type RateLimitPolicy } from './rate-limit.js';
import { handleSession, identityEvent, type SessionContext, type SessionIdentity } from './ssh-session.js';
import { admitConnection, decideAuth, decideAuthWithoutKeys, forwardConnectHost, forwardRefusal, type AuthAttempt, type HostPort } from './ssh-policy.js';
import { silentLogger, type AuditSink, type RunCommand, type SshAuditEvent, type SshLogger } from './types.js';

export type { HostPort } from './ssh-policy.js';

/** Options of {@link createSshServer}. */
export interface SshServerOptions {
  /** `ssh.listen`; port 0 picks a free port (tests). */
  listen: HostPort;
  /** `ssh.hostKey`: the private host key file, generated (ed25519, 0600) when missing. */
  hostKeyPath: string;
  /** `ssh.authorizedKeys`: re-read whenever it changes. */
  authorizedKeysPath: string;
  /** Runs CLI subcommands for exec and the REPL. */
  runCommand: RunCommand;
  /** The management listener: the only destination `ssh -L` may reach. Absent → every -L is refused. */
  forwardTarget?: HostPort;
  /** The per-key audit trail. */
  audit?: AuditSink;
  log?: SshLogger;
  /** Wall clock (ms since the epoch) for `expiry-time` and audit stamps. */
  now?: () => number;
  /**
   * Clock for the failure window and bans (durations); default `now` when given, else the steady
   * clock (agent/clock.ts), so a wall-clock step neither lifts a ban nor stretches it by a day.
   */
  steadyNow?: () => number;
  rateLimit?: Partial<RateLimitPolicy>;
  /** Close connections not authenticated after this long; default 60 s. */
  loginGraceMs?: number;
  /** Refused credentials per connection before it is closed; default 6. */
  maxAuthTries?: number;
  /** Unauthenticated connections at once; more are dropped; default 32. */
  maxUnauthenticated?: number;
  /** Only these user names may log in; default any (the name is recorded in the audit trail). */
  users?: readonly string[];
  /** Printed when an interactive shell with a pty starts. */
  banner?: string;
  /** REPL prompt; default `rackside> `. */
  prompt?: string;
}

/** What {@link SshServer.start} reports. */
export interface SshServerInfo {
  address: HostPort;
  hostKeyFingerprint: string;
  hostPublicKey: string;
  hostKeyCreated: boolean;
}

/** Counters for the status page and tests. */
export interface SshServerCounters {
  connections: number;
  authenticated: number;
  authFailures: number;
  /** Connections that ended unauthenticated after a refused credential (what the rate limit counts). */
  failedConnections: number;
  /** Connections dropped before the handshake (rate limit, too many unauthenticated). */
  dropped: number;
  /** Protocol or socket errors of clients (malformed input, resets). */
  clientErrors: number;
}

/** The running server. */
export interface SshServer {
  /** Loads (or creates) the host key and starts listening. */
  start(): Promise<SshServerInfo>;
  /** Stops listening and closes every client connection. */
  stop(): Promise<void>;
  counters(): SshServerCounters;
  /** Sources currently banned by the rate limit. */
  banned(): { address: string; untilMs: number }[];
}

interface ConnectionState {
  address: string;
  port: number;
  authenticated: boolean;
  refused: number;
  socket: Socket;
  identity?: SessionIdentity;
}

const AUTH_METHODS: ['publickey'] = ['publickey'];

function socketKey(address: string | undefined, port: number | undefined): string {
  return `${address ?? '?'}|${port ?? 0}`;
}

/** The server: a TCP listener that admits connections ({@link onSocket}) and hands them to ssh2, whose events it answers. */
class EmbeddedSshServer implements SshServer {
  readonly #options: SshServerOptions;
  readonly #log: SshLogger;
  readonly #now: () => number;
  readonly #limiterNow: () => number;
  readonly #limiter: FailureLimiter;
  readonly #authorizedKeys: AuthorizedKeysFile;
  readonly #counters: SshServerCounters = { connections: 0, authenticated: 0, authFailures: 0, failedConnections: 0, dropped: 0, clientErrors: 0 };
  readonly #pending = new Map<string, ConnectionState>();
  readonly #live = new Set<ConnectionState>();
  #unauthenticated = 0;
  #sshServer: Server | undefined;
  #netServer: net.Server | undefined;

  constructor(options: SshServerOptions) {
    this.#options = options;
    const log = (this.#log = options.log ?? silentLogger);
    this.#now = options.now ?? Date.now;
    this.#limiterNow = options.steadyNow ?? options.now ?? steadyNowMs;
    this.#limiter = new FailureLimiter(options.rateLimit);
    const report: AuthorizedKeysReport = ({ path, keys, problems, error }) => {
      if (error !== undefined) log.warn({ path }, `ssh: ${error}`);
      for (const p of problems) log.warn({ path, line: p.line }, `ssh: ${path}:${p.line}: ${p.message} (line skipped)`);
      if (error === undefined) log.info({ path, keys, skipped: problems.length }, 'ssh: authorized_keys loaded');
    };
    this.#authorizedKeys = new AuthorizedKeysFile(options.authorizedKeysPath, report);
  }

  readonly #audit: AuditSink = (event) => {
    try {
      this.#options.audit?.(event);
    } catch (err) {
      this.#log.warn({ err }, 'ssh: audit sink threw');
    }
  };

  #baseEvent(conn: ConnectionState, type: SshAuditEvent['type'], extra: Partial<SshAuditEvent> = {}): SshAuditEvent {
    return { type, atMs: this.#now(), address: conn.address, port: conn.port, ...extra };
  }

  /** A new TCP connection: dropped (banned source, too many unauthenticated) or handed to ssh2 with a login grace timer. */
  #onSocket(socket: Socket): void {
    socket.on('error', () => undefined); // ssh2 reports socket errors through the connection
    const address = normalizeAddress(socket.remoteAddress ?? '');
    const port = socket.remotePort ?? 0;
    const admission = admitConnection(this.#limiter.admit(address, this.#limiterNow()), this.#unauthenticated, this.#options.maxUnauthenticated ?? 32);
    if (admission.kind !== 'admit') {
      this.#counters.dropped++;
      if (admission.kind === 'banned' && admission.audit) {
        this.#audit({ type: 'connection-dropped', atMs: this.#now(), address, port, reason: 'rate limited after repeated failures', bannedUntilMs: admission.bannedUntilMs });
      } else if (admission.kind === 'too-many-unauthenticated') {
        this.#log.warn({ address }, 'ssh: too many unauthenticated connections; dropping');
      }
      socket.destroy();
      return;
    }
    this.#counters.connections++;
    this.#unauthenticated++;
    const conn: ConnectionState = { address, port, authenticated: false, refused: 0, socket };
    const key = socketKey(socket.remoteAddress, socket.remotePort);
    this.#pending.set(key, conn);
    this.#live.add(conn);
    const grace = setTimeout(() => {
      if (!conn.authenticated) socket.destroy();
    }, this.#options.loginGraceMs ?? 60_000);
    grace.unref();
    socket.once('close', () => {
      clearTimeout(grace);
      this.#pending.delete(key);
      this.#live.delete(conn);
      this.#onClosed(conn);
    });
    this.#sshServer?.injectSocket(socket);
  }

  /** A connection closed: one that ended unauthenticated after a refused credential counts against its source. */
  #onClosed(conn: ConnectionState): void {
    if (conn.authenticated) return;
    this.#unauthenticated--;
    if (conn.refused === 0) return;
    this.#counters.failedConnections++;
    const { address, port } = conn;
    if (!this.#limiter.recordFailure(address, this.#limiterNow())) return;
    const until = this.#limiter.banned(this.#limiterNow()).find((b) => b.address === address)?.untilMs;
    this.#audit({ type: 'rate-limited', atMs: this.#now(), address, port, reason: 'too many failed logins', ...(until === undefined ? {} : { bannedUntilMs: until }) });
    this.#log.warn({ address }, 'ssh: source banned after repeated failed logins');
  }

  /** Answers one authentication request as {@link decideAuth} decides. */
  async #authenticate(client: Connection, conn: ConnectionState, ctx: AuthContext): Promise<void> {
    const attempt: AuthAttempt = { method: ctx.method, username: ctx.username, signed: false };
    if (ctx.method === 'publickey') {
      attempt.key = { data: ctx.key.data, fingerprint: fingerprintSha256(ctx.key.data) };
      attempt.signed = ctx.signature !== undefined && ctx.blob !== undefined;
    }
    // Only a publickey request for an allowed user name reads the file.
    const decision = decideAuthWithoutKeys(attempt, this.#options.users) ?? decideAuth<ParsedKey>(attempt, {
      keys: await this.#authorizedKeys.keys(), sourceAddress: conn.address, nowMs: this.#now(), ...this.#users(),
      // ssh2's verify returns an Error object (truthy) for a malformed signature: only `true` passes.
      verifySignature: (key) => ctx.method === 'publickey' && ctx.signature !== undefined && ctx.blob !== undefined && (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) as unknown) === true,
    });
    switch (decision.kind) {
      case 'list-methods':
        ctx.reject(AUTH_METHODS); // RFC 4252 §5.2: answers with the methods that can continue
        return;
      case 'key-ok':
        ctx.accept(); // RFC 4252 §7: SSH_MSG_USERAUTH_PK_OK, the client then signs
        return;
      case 'refuse': {
        ctx.reject(AUTH_METHODS);
        conn.refused++;
        this.#counters.authFailures++;
        const extra = decision.keyInfo ?? (decision.fingerprint === undefined ? {} : { fingerprint: decision.fingerprint });
        this.#audit(this.#baseEvent(conn, 'auth-failure', { user: ctx.username, method: ctx.method, reason: decision.reason, ...extra }));
        if (conn.refused >= (this.#options.maxAuthTries ?? 6)) client.end();
        return;
      }
      case 'accept': {
        const { keyInfo } = decision;
        conn.identity = { user: ctx.username, address: conn.address, port: conn.port, ...keyInfo, options: decision.options };
        ctx.accept();
        this.#audit(this.#baseEvent(conn, 'auth-success', { user: ctx.username, method: 'publickey', ...keyInfo }));
        this.#log.info({ user: ctx.username, address: conn.address, fingerprint: keyInfo.fingerprint }, 'ssh: login');
      }
    }
  }

  #users(): { users?: readonly string[] } {
    return this.#options.users === undefined ? {} : { users: this.#options.users };
  }

  #sessionContext(identity: SessionIdentity, connectionClosed: AbortSignal): SessionContext {
    const options = this.#options;
    return {
      identity, runCommand: options.runCommand, audit: this.#audit, now: this.#now, log: this.#log, connectionClosed,
      banner: options.banner ?? 'rackside — type "help" for commands, "exit" to leave.',
      prompt: options.prompt ?? 'rackside> ',
    };
  }

  /** `ssh -L`: refused unless {@link forwardRefusal} allows it; then piped to the management listener. */
  #onTcpip(ctx: SessionContext, accept: () => ServerChannel | undefined, reject: () => void, info: TcpipRequestInfo): void {
    const destination = { host: info.destIP, port: info.destPort };
    const target = this.#options.forwardTarget;
    const reason = forwardRefusal(target, ctx.identity.options, info);
    if (reason !== undefined || target === undefined) {
      reject();
      this.#audit(identityEvent(ctx, 'forward-refused', { destination, reason: reason ?? 'refused' }));
      return;
    }
    const upstream = net.connect({ host: forwardConnectHost(target), port: target.port });
    upstream.once('error', (err) => {
      this.#log.debug({ err }, 'ssh: -L upstream failed');
      reject();
    });
    upstream.once('connect', () => {
      const channel = accept();
      if (channel === undefined) {
        upstream.destroy();
        return;
      }
      this.#audit(identityEvent(ctx, 'forward-allowed', { destination }));
      channel.on('error', () => { upstream.destroy(); });
      upstream.on('error', () => { channel.destroy(); });
      upstream.pipe(channel).pipe(upstream);
    });
  }

  /** ssh2's new connection: matched to its admitted socket, then authenticated. */
  readonly #onClient = (client: Connection, info: { ip: string; port: number }): void => {
    const conn = this.#pending.get(socketKey(info.ip, info.port));
    if (conn === undefined) {
      client.on('error', () => undefined);
      client.end();
      return;
    }
    this.#pending.delete(socketKey(info.ip, info.port));
    client.on('error', (err: Error) => {
      this.#counters.clientErrors++;
      this.#log.debug({ err, address: conn.address }, 'ssh: client error');
    });
    client.on('authentication', (ctx: AuthContext) => {
      this.#authenticate(client, conn, ctx).catch((err: unknown) => {
        this.#log.warn({ err }, 'ssh: authentication check failed');
        try {
          ctx.reject(AUTH_METHODS);
        } catch {
          // the connection is already gone
        }
      });
    });
    client.on('ready', () => { this.#onReady(client, conn); });
  };

  /** An authenticated connection: sessions run commands, `-L` may reach the management listener, everything else is refused. */
  #onReady(client: Connection, conn: ConnectionState): void {
    const identity = conn.identity;
    if (identity === undefined) {
      client.end();
      return;
    }
    conn.authenticated = true;
    this.#unauthenticated--;
    this.#counters.authenticated++;
    const closed = new AbortController();
    client.once('close', () => { closed.abort(); });
    const ctx = this.#sessionContext(identity, closed.signal);
    client.on('session', (accept: () => Session | undefined) => {
      const session = accept();
      if (session !== undefined) handleSession(session, ctx);
    });
    client.on('tcpip', (accept: () => ServerChannel | undefined, reject: () => void, req: TcpipRequestInfo) => {
      this.#onTcpip(ctx, accept, reject, req);
    });
    client.on('openssh.streamlocal', (_accept: unknown, reject: () => void, req: { socketPath: string }) => {
      reject();
      this.#audit(identityEvent(ctx, 'forward-refused', { request: 'streamlocal', reason: `UNIX socket forwarding is not offered (${req.socketPath})` }));
    });
    client.on('request', (_accept: unknown, reject: (() => void) | undefined, name: string, req: { bindAddr?: string; bindPort?: number }) => {
      reject?.();
      this.#audit(identityEvent(ctx, 'request-refused', {
        request: name,
        reason: 'remote forwarding (ssh -R) is not offered',
        ...(req.bindPort === undefined ? {} : { destination: { host: req.bindAddr ?? '', port: req.bindPort } }),
      }));
    });
  }

  async start(): Promise<SshServerInfo> {
    if (this.#netServer !== undefined) throw new Error('ssh server already started');
    const options = this.#options;
    const log = this.#log;
    const hostKey = await loadOrCreateHostKey(options.hostKeyPath);
    if (hostKey.created) log.info({ path: options.hostKeyPath, fingerprint: hostKey.fingerprint }, 'ssh: generated host key');
    const sshServer = (this.#sshServer = new ssh2.Server({ hostKeys: [hostKey.privateKey], ident: 'rackside' }));
    sshServer.on('connection', this.#onClient);
    sshServer.on('error', (err: Error) => { log.warn({ err }, 'ssh: server error'); });
    const server = net.createServer((socket) => { this.#onSocket(socket); });
    this.#netServer = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listen.port, options.listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => { log.warn({ err }, 'ssh: listener error'); });
    await this.#authorizedKeys.keys(); // report problems at start, not at the first login
    const bound = server.address() as AddressInfo;
    log.info({ address: bound.address, port: bound.port, fingerprint: hostKey.fingerprint }, 'ssh: listening');
    return {
      address: { host: bound.address, port: bound.port },
      hostKeyFingerprint: hostKey.fingerprint, hostPublicKey: hostKey.publicKey, hostKeyCreated: hostKey.created,
    };
  }

  async stop(): Promise<void> {
    const server = this.#netServer;
    this.#netServer = undefined;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
    for (const conn of this.#live) conn.socket.destroy();
    await closed;
  }

  counters(): SshServerCounters {
    return { ...this.#counters };
  }

  banned(): { address: string; untilMs: number }[] {
    return this.#limiter.banned(this.#limiterNow());
  }
}

/** Creates the SSH server; nothing happens until {@link SshServer.start}. */
export function createSshServer(options: SshServerOptions): SshServer {
  return new EmbeddedSshServer(options);
}
