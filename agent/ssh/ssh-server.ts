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
 */
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { AuthContext, Connection, Server, ServerChannel, Session, TcpipRequestInfo } from 'ssh2';
import { steadyNowMs } from '../clock.js';
import { normalizeAddress } from './address-match.js';
import { AuthorizedKeysFile, type AuthorizedKeysReport } from './authorized-keys-file.js';
import { checkKeyUse } from './authorized-keys.js';
import { loadOrCreateHostKey } from './host-key.js';
import { fingerprintSha256 } from './key-blob.js';
import { FailureLimiter, type RateLimitPolicy } from './rate-limit.js';
import { handleSession, identityEvent, type SessionContext, type SessionIdentity } from './ssh-session.js';
import { silentLogger, type AuditSink, type RunCommand, type SshAuditEvent, type SshLogger } from './types.js';

/** A host and port to listen on or connect to. */
export interface HostPort {
  host: string;
  port: number;
}

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
const USER_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

function socketKey(address: string | undefined, port: number | undefined): string {
  return `${address ?? '?'}|${port ?? 0}`;
}

/** True when `ssh -L` asked for the management listener (`localhost` counts for a loopback or wildcard listener). */
function isForwardTarget(target: HostPort, info: TcpipRequestInfo): boolean {
  if (info.destPort !== target.port) return false;
  const dest = info.destIP.toLowerCase();
  if (dest === target.host.toLowerCase()) return true;
  const loopbackOrAny = LOOPBACK_NAMES.has(target.host) || target.host === '0.0.0.0' || target.host === '::';
  return loopbackOrAny && LOOPBACK_NAMES.has(dest);
}

function permitOpenAllows(entries: readonly string[] | undefined, info: TcpipRequestInfo): boolean {
  if (entries === undefined) return true;
  return entries.some((e) => {
    const m = /^(?:\[([^\]]+)\]|([^:]+)):([0-9]+|\*)$/.exec(e);
    if (m === null) return false;
    const host = (m[1] ?? m[2] ?? '').toLowerCase();
    return (host === '*' || host === info.destIP.toLowerCase()) && (m[3] === '*' || Number(m[3]) === info.destPort);
  });
}

/** Creates the SSH server; nothing happens until {@link SshServer.start}. */
export function createSshServer(options: SshServerOptions): SshServer {
  const log = options.log ?? silentLogger;
  const now = options.now ?? Date.now;
  const limiterNow = options.steadyNow ?? options.now ?? steadyNowMs;
  const audit: AuditSink = (event) => {
    try {
      options.audit?.(event);
    } catch (err) {
      log.warn({ err }, 'ssh: audit sink threw');
    }
  };
  const limiter = new FailureLimiter(options.rateLimit);
  const loginGraceMs = options.loginGraceMs ?? 60_000;
  const maxAuthTries = options.maxAuthTries ?? 6;
  const maxUnauthenticated = options.maxUnauthenticated ?? 32;
  const report: AuthorizedKeysReport = ({ path, keys, problems, error }) => {
    if (error !== undefined) log.warn({ path }, `ssh: ${error}`);
    for (const p of problems) log.warn({ path, line: p.line }, `ssh: ${path}:${p.line}: ${p.message} (line skipped)`);
    if (error === undefined) log.info({ path, keys, skipped: problems.length }, 'ssh: authorized_keys loaded');
  };
  const authorizedKeys = new AuthorizedKeysFile(options.authorizedKeysPath, report);
  const counters: SshServerCounters = { connections: 0, authenticated: 0, authFailures: 0, failedConnections: 0, dropped: 0, clientErrors: 0 };
  const pending = new Map<string, ConnectionState>();
  const live = new Set<ConnectionState>();
  let unauthenticated = 0;
  let sshServer: Server | undefined;
  let netServer: net.Server | undefined;

  const baseEvent = (conn: ConnectionState, type: SshAuditEvent['type'], extra: Partial<SshAuditEvent> = {}): SshAuditEvent =>
    ({ type, atMs: now(), address: conn.address, port: conn.port, ...extra });

  function onSocket(socket: Socket): void {
    socket.on('error', () => undefined); // ssh2 reports socket errors through the connection
    const address = normalizeAddress(socket.remoteAddress ?? '');
    const port = socket.remotePort ?? 0;
    const verdict = limiter.admit(address, limiterNow());
    if (!verdict.admitted || unauthenticated >= maxUnauthenticated) {
      counters.dropped++;
      if (!verdict.admitted && verdict.firstDrop) {
        audit({ type: 'connection-dropped', atMs: now(), address, port, reason: 'rate limited after repeated failures', bannedUntilMs: verdict.bannedUntilMs });
      } else if (verdict.admitted) {
        log.warn({ address }, 'ssh: too many unauthenticated connections; dropping');
      }
      socket.destroy();
      return;
    }
    counters.connections++;
    unauthenticated++;
    const conn: ConnectionState = { address, port, authenticated: false, refused: 0, socket };
    const key = socketKey(socket.remoteAddress, socket.remotePort);
    pending.set(key, conn);
    live.add(conn);
    const grace = setTimeout(() => {
      if (!conn.authenticated) socket.destroy();
    }, loginGraceMs);
    grace.unref();
    socket.once('close', () => {
      clearTimeout(grace);
      pending.delete(key);
      live.delete(conn);
      if (conn.authenticated) return;
      unauthenticated--;
      if (conn.refused === 0) return;
      counters.failedConnections++;
      if (limiter.recordFailure(address, limiterNow())) {
        const until = limiter.banned(limiterNow()).find((b) => b.address === address)?.untilMs;
        audit({ type: 'rate-limited', atMs: now(), address, port, reason: 'too many failed logins', ...(until === undefined ? {} : { bannedUntilMs: until }) });
        log.warn({ address }, 'ssh: source banned after repeated failed logins');
      }
    });
    sshServer?.injectSocket(socket);
  }

  async function authenticate(client: Connection, conn: ConnectionState, ctx: AuthContext): Promise<void> {
    const refuse = (reason: string, extra: Partial<SshAuditEvent> = {}): void => {
      ctx.reject(AUTH_METHODS);
      conn.refused++;
      counters.authFailures++;
      audit(baseEvent(conn, 'auth-failure', { user: ctx.username, method: ctx.method, reason, ...extra }));
      if (conn.refused >= maxAuthTries) client.end();
    };
    if (ctx.method === 'none') {
      ctx.reject(AUTH_METHODS); // RFC 4252 §5.2: answers with the methods that can continue
      return;
    }
    if (ctx.method !== 'publickey') {
      refuse(`${ctx.method} authentication is not accepted; use a public key`);
      return;
    }
    const fingerprint = fingerprintSha256(ctx.key.data);
    if (!USER_PATTERN.test(ctx.username) || (options.users !== undefined && !options.users.includes(ctx.username))) {
      refuse('user name not allowed', { fingerprint });
      return;
    }
    const keys = await authorizedKeys.keys();
    const offered = ctx.key.data;
    const match = keys.find((k) => k.entry.keyBlob.equals(offered)); // first match wins, like sshd
    if (match === undefined) {
      refuse('key not in authorized_keys', { fingerprint });
      return;
    }
    const entry = match.entry;
    const keyInfo = { fingerprint, keyComment: entry.comment, keyLine: entry.line };
    const refusal = checkKeyUse(entry, conn.address, now());
    if (refusal !== undefined) {
      refuse(refusal === 'from' ? 'source address not allowed by from=' : 'key expired (expiry-time=)', keyInfo);
      return;
    }
    if (ctx.signature === undefined || ctx.blob === undefined) {
      ctx.accept(); // RFC 4252 §7: SSH_MSG_USERAUTH_PK_OK, the client then signs
      return;
    }
    // ssh2's verify returns an Error object (truthy) for a malformed signature: only `true` passes.
    const verified: unknown = match.publicKey.verify(ctx.blob, ctx.signature, ctx.hashAlgo);
    if (verified !== true) {
      refuse('bad signature', keyInfo);
      return;
    }
    conn.identity = { user: ctx.username, address: conn.address, port: conn.port, ...keyInfo, options: entry.options };
    ctx.accept();
    audit(baseEvent(conn, 'auth-success', { user: ctx.username, method: 'publickey', ...keyInfo }));
    log.info({ user: ctx.username, address: conn.address, fingerprint }, 'ssh: login');
  }

  function sessionContext(identity: SessionIdentity, connectionClosed: AbortSignal): SessionContext {
    return {
      identity, runCommand: options.runCommand, audit, now, log, connectionClosed,
      banner: options.banner ?? 'rackside — type "help" for commands, "exit" to leave.',
      prompt: options.prompt ?? 'rackside> ',
    };
  }

  function onTcpip(ctx: SessionContext, accept: () => ServerChannel | undefined, reject: () => void, info: TcpipRequestInfo): void {
    const destination = { host: info.destIP, port: info.destPort };
    const target = options.forwardTarget;
    let reason: string | undefined;
    if (target === undefined) reason = 'port forwarding is not offered';
    else if (!ctx.identity.options.portForwarding) reason = 'the key is restricted (no-port-forwarding)';
    else if (!isForwardTarget(target, info)) reason = `only ${target.host}:${target.port} (the management listener) may be reached`;
    else if (!permitOpenAllows(ctx.identity.options.permitOpen, info)) reason = 'not allowed by permitopen=';
    if (reason !== undefined || target === undefined) {
      reject();
      audit(identityEvent(ctx, 'forward-refused', { destination, reason: reason ?? 'refused' }));
      return;
    }
    const host = target.host === '0.0.0.0' ? '127.0.0.1' : target.host === '::' ? '::1' : target.host;
    const upstream = net.connect({ host, port: target.port });
    upstream.once('error', (err) => {
      log.debug({ err }, 'ssh: -L upstream failed');
      reject();
    });
    upstream.once('connect', () => {
      const channel = accept();
      if (channel === undefined) {
        upstream.destroy();
        return;
      }
      audit(identityEvent(ctx, 'forward-allowed', { destination }));
      channel.on('error', () => { upstream.destroy(); });
      upstream.on('error', () => { channel.destroy(); });
      upstream.pipe(channel).pipe(upstream);
    });
  }

  function onClient(client: Connection, info: { ip: string; port: number }): void {
    const conn = pending.get(socketKey(info.ip, info.port));
    if (conn === undefined) {
      client.on('error', () => undefined);
      client.end();
      return;
    }
    pending.delete(socketKey(info.ip, info.port));
    client.on('error', (err: Error) => {
      counters.clientErrors++;
      log.debug({ err, address: conn.address }, 'ssh: client error');
    });
    client.on('authentication', (ctx: AuthContext) => {
      authenticate(client, conn, ctx).catch((err: unknown) => {
        log.warn({ err }, 'ssh: authentication check failed');
        try {
          ctx.reject(AUTH_METHODS);
        } catch {
          // the connection is already gone
        }
      });
    });
    client.on('ready', () => {
      const identity = conn.identity;
      if (identity === undefined) {
        client.end();
        return;
      }
      conn.authenticated = true;
      unauthenticated--;
      counters.authenticated++;
      const closed = new AbortController();
      client.once('close', () => { closed.abort(); });
      const ctx = sessionContext(identity, closed.signal);
      client.on('session', (accept: () => Session | undefined) => {
        const session = accept();
        if (session !== undefined) handleSession(session, ctx);
      });
      client.on('tcpip', (accept: () => ServerChannel | undefined, reject: () => void, req: TcpipRequestInfo) => {
        onTcpip(ctx, accept, reject, req);
      });
      client.on('openssh.streamlocal', (_accept: unknown, reject: () => void, req: { socketPath: string }) => {
        reject();
        audit(identityEvent(ctx, 'forward-refused', { request: 'streamlocal', reason: `UNIX socket forwarding is not offered (${req.socketPath})` }));
      });
      client.on('request', (_accept: unknown, reject: (() => void) | undefined, name: string, req: { bindAddr?: string; bindPort?: number }) => {
        reject?.();
        audit(identityEvent(ctx, 'request-refused', {
          request: name,
          reason: 'remote forwarding (ssh -R) is not offered',
          ...(req.bindPort === undefined ? {} : { destination: { host: req.bindAddr ?? '', port: req.bindPort } }),
        }));
      });
    });
  }

  return {
    async start(): Promise<SshServerInfo> {
      if (netServer !== undefined) throw new Error('ssh server already started');
      const hostKey = await loadOrCreateHostKey(options.hostKeyPath);
      if (hostKey.created) log.info({ path: options.hostKeyPath, fingerprint: hostKey.fingerprint }, 'ssh: generated host key');
      sshServer = new ssh2.Server({ hostKeys: [hostKey.privateKey], ident: 'rackside' });
      sshServer.on('connection', onClient);
      sshServer.on('error', (err: Error) => { log.warn({ err }, 'ssh: server error'); });
      const server = net.createServer(onSocket);
      netServer = server;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.listen.port, options.listen.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => { log.warn({ err }, 'ssh: listener error'); });
      await authorizedKeys.keys(); // report problems at start, not at the first login
      const bound = server.address() as AddressInfo;
      log.info({ address: bound.address, port: bound.port, fingerprint: hostKey.fingerprint }, 'ssh: listening');
      return {
        address: { host: bound.address, port: bound.port },
        hostKeyFingerprint: hostKey.fingerprint, hostPublicKey: hostKey.publicKey, hostKeyCreated: hostKey.created,
      };
    },
    async stop(): Promise<void> {
      const server = netServer;
      netServer = undefined;
      if (server === undefined) return;
      const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
      for (const conn of live) conn.socket.destroy();
      await closed;
    },
    counters: () => ({ ...counters }),
    banned: () => limiter.banned(limiterNow()),
  };
}
