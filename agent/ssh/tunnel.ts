/**
 * @module The reverse tunnel (`ssh.tunnel`): an ssh2 `Client` to a central bastion that asks it
 * to listen on `remotePort` (`tcpip-forward`, RFC 4254 §7.1 — what `ssh -R` does) and pipes
 * every `forwarded-tcpip` connection to the local SSH server (and, optionally, more ports such
 * as the management listener). The bastion's host key is pinned: a key that does not match
 * is refused with an error naming both fingerprints. SSH keepalives (`keepaliveInterval`,
 * `keepaliveCountMax`) notice a dead path; after any drop the tunnel reconnects with
 * exponential backoff and jitter ({@link computeBackoffMs}). {@link Tunnel.status} says where it
 * is, for the API and `rackside` CLI.
 */
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import ssh2 from 'ssh2';
import type { ClientChannel, TcpConnectionDetails } from 'ssh2';
import { computeBackoffMs, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { fingerprintSha256, keyTypeOfBlob, matchesHostKeyPin, parseHostKeyPin, type HostKeyPin } from './key-blob.js';
import { silentLogger, type SshLogger } from './types.js';

/** A host and port. */
interface Endpoint {
  host: string;
  port: number;
}

/** One port opened on the bastion and where its connections go on this side. */
export interface TunnelForward {
  remotePort: number;
  target: Endpoint;
}

/** Options of {@link createTunnel}; the first six are `ssh.tunnel` in the config. */
export interface TunnelOptions {
  host: string;
  port: number;
  user: string;
  /** The bastion's public key line or `SHA256:` fingerprint. Required: the tunnel never trusts blindly. */
  hostKey: string;
  /** Path of the private key (OpenSSH format, no passphrase) the rack logs in with; read at every attempt. */
  identity: string;
  /** The port opened on the bastion for the local SSH server. */
  remotePort: number;
  /** The local SSH server (usually `127.0.0.1:<ssh.listen port>`). */
  target: Endpoint;
  /** More ports, e.g. the management listener. */
  extraForwards?: readonly TunnelForward[];
  /** Address the bastion binds (`forwardIn`); default `localhost` (sshd binds loopback unless `GatewayPorts`). */
  remoteBindAddress?: string;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** Handshake and login timeout; default 20 s. */
  readyTimeoutMs?: number;
  backoff?: Partial<BackoffPolicy>;
  now?: () => number;
  /** Random numbers in [0, 1) for jitter. */
  random?: () => number;
  log?: SshLogger;
}

/** Where the tunnel is. `disabled`: not configured, not started or stopped. */
export type TunnelState = 'disabled' | 'connecting' | 'connected' | 'backoff';

/** {@link Tunnel.status}: what the API and CLI show. */
export interface TunnelStatus {
  state: TunnelState;
  /** When the tunnel entered `state` (ISO 8601). */
  since: string;
  lastError?: string;
  remotePort: number | null;
  /** Connection attempts after the first one since {@link Tunnel.start}. */
  reconnects: number;
  /** `host:port` of the bastion. */
  bastion?: string;
  /** The fingerprint the bastion presented last. */
  bastionFingerprint?: string;
  /** During `backoff`: when the next attempt starts (ISO 8601). */
  nextAttemptAt?: string;
}

/** The reverse tunnel. */
export interface Tunnel {
  /** Starts connecting (returns at once; progress shows in {@link status}). */
  start(): void;
  /** Closes the connection and stops reconnecting; resolves when closed. */
  stop(): Promise<void>;
  status(): TunnelStatus;
}

/** The status to report when `ssh.tunnel` is not configured. */
export function disabledTunnelStatus(nowMs: number): TunnelStatus {
  return { state: 'disabled', since: new Date(nowMs).toISOString(), remotePort: null, reconnects: 0 };
}

/** Host key algorithms to ask for so the pinned key's type is the one negotiated. */
function hostKeyAlgorithms(pin: HostKeyPin): ssh2.ServerHostKeyAlgorithm[] | undefined {
  if (pin.kind !== 'key') return undefined;
  if (pin.keyType === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
  return [pin.keyType as ssh2.ServerHostKeyAlgorithm];
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Creates the reverse tunnel.
 * @throws Error when `hostKey` is not a key line or fingerprint (a config mistake, not a runtime state).
 */
export function createTunnel(options: TunnelOptions): Tunnel {
  const parsedPin = parseHostKeyPin(options.hostKey);
  if ('error' in parsedPin) throw new Error(`ssh.tunnel.hostKey: ${parsedPin.error}`);
  const pin: HostKeyPin = parsedPin;
  const log = options.log ?? silentLogger;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const policy: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const bastion = `${options.host}:${options.port}`;
  const bindAddress = options.remoteBindAddress ?? 'localhost';
  const forwards: TunnelForward[] = [{ remotePort: options.remotePort, target: options.target }, ...(options.extraForwards ?? [])];

  let state: TunnelState = 'disabled';
  let sinceMs = now();
  let lastError: string | undefined;
  let presented: string | undefined;
  let nextAttemptMs: number | undefined;
  let attempts = 0;
  let failuresInRow = 0;
  let running = false;
  /** Bumped by every start() and stop(): an attempt from an earlier run must not continue. */
  let generation = 0;
  /** Read through a call: `running` changes while connect() awaits. */
  const active = (): boolean => running;
  let timer: NodeJS.Timeout | undefined;
  let client: ssh2.Client | undefined;
  let closed: Promise<void> = Promise.resolve();

  const enter = (next: TunnelState): void => {
    if (next !== state) sinceMs = now();
    state = next;
    if (next !== 'backoff') nextAttemptMs = undefined;
  };

  const scheduleRetry = (): void => {
    if (!running) return;
    const delay = computeBackoffMs(failuresInRow, policy, random());
    failuresInRow++;
    enter('backoff');
    nextAttemptMs = now() + delay;
    log.info({ bastion, delayMs: delay, error: lastError }, 'ssh tunnel: reconnecting later');
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
  };

  const onTcpConnection = (details: TcpConnectionDetails, accept: () => ClientChannel | undefined, reject: () => void): void => {
    const forward = forwards.find((f) => f.remotePort === details.destPort);
    if (forward === undefined) {
      reject();
      return;
    }
    const local = net.connect({ host: forward.target.host, port: forward.target.port });
    local.once('error', (err) => {
      log.warn({ err, target: forward.target }, 'ssh tunnel: local target unreachable');
      reject();
    });
    local.once('connect', () => {
      const channel = accept();
      if (channel === undefined) {
        local.destroy();
        return;
      }
      channel.on('error', () => { local.destroy(); });
      local.on('error', () => { channel.destroy(); });
      local.pipe(channel).pipe(local);
    });
  };

  async function connect(): Promise<void> {
    if (!running) return;
    const run = generation;
    if (attempts > 0) enter('connecting');
    attempts++;
    let privateKey: Buffer;
    try {
      privateKey = await readFile(options.identity);
    } catch (err) {
      lastError = `cannot read ssh.tunnel.identity ${options.identity}: ${describeError(err)}`;
      scheduleRetry();
      return;
    }
    if (!active() || run !== generation) return;
    const c = new ssh2.Client();
    client = c;
    let settled = false;
    let mismatch: string | undefined;
    let resolveClosed: () => void = () => undefined;
    closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (client === c) client = undefined;
      resolveClosed();
      if (!running) return;
      lastError ??= `${bastion}: connection closed`;
      if (state === 'connected') log.warn({ bastion, error: lastError }, 'ssh tunnel: dropped');
      scheduleRetry();
    };
    c.on('error', (err: Error) => {
      if (settled) return; // ssh2 follows e.g. a handshake timeout with "Connection lost": keep the cause
      lastError = mismatch ?? `${bastion}: ${err.message}`;
      c.destroy();
      settle();
    });
    c.on('close', settle);
    c.on('tcp connection', onTcpConnection);
    c.on('ready', () => {
      if (!active()) {
        c.end(); // stopped while the handshake was in flight
        return;
      }
      let pending = forwards.length;
      for (const forward of forwards) {
        c.forwardIn(bindAddress, forward.remotePort, (err?: Error) => {
          if (settled) return;
          if (err !== undefined) {
            lastError = `${bastion} refused to listen on port ${forward.remotePort}: ${err.message}`;
            c.end();
            return;
          }
          if (--pending > 0) return;
          failuresInRow = 0;
          lastError = undefined;
          enter('connected');
          log.info({ bastion, remotePort: options.remotePort }, 'ssh tunnel: connected');
        });
      }
    });
    c.connect({
      host: options.host,
      port: options.port,
      username: options.user,
      privateKey,
      keepaliveInterval: options.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: options.keepaliveCountMax ?? 3,
      readyTimeout: options.readyTimeoutMs ?? 20_000,
      ...(hostKeyAlgorithms(pin) === undefined ? {} : { algorithms: { serverHostKey: hostKeyAlgorithms(pin) } }),
      hostVerifier: (key: Buffer): boolean => {
        presented = fingerprintSha256(key);
        if (matchesHostKeyPin(pin, key)) return true;
        mismatch = `host key mismatch: ${bastion} presented ${keyTypeOfBlob(key) ?? 'a'} key ${presented}, ` +
          `but ssh.tunnel.hostKey pins ${pin.fingerprint}; refusing to connect (check the bastion, then update the pin)`;
        log.warn({ bastion, presented, pinned: pin.fingerprint }, 'ssh tunnel: host key mismatch');
        return false;
      },
    });
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      generation++;
      attempts = 0;
      failuresInRow = 0;
      enter('connecting');
      void connect();
    },
    async stop(): Promise<void> {
      running = false;
      generation++;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const c = client;
      if (c !== undefined) {
        c.end();
        // ssh2's end() and destroy() do nothing while the TCP connect is still in flight;
        // do not wait for a close that may come late (the ready handler ends such a client).
        let force: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise<void>((resolve) => {
          force = setTimeout(() => { c.destroy(); resolve(); }, 2000);
        })]);
        clearTimeout(force);
      }
      enter('disabled');
    },
    status(): TunnelStatus {
      return {
        state,
        since: new Date(sinceMs).toISOString(),
        ...(lastError === undefined ? {} : { lastError }),
        remotePort: options.remotePort,
        reconnects: Math.max(0, attempts - 1),
        bastion,
        ...(presented === undefined ? {} : { bastionFingerprint: presented }),
        ...(nextAttemptMs === undefined ? {} : { nextAttemptAt: new Date(nextAttemptMs).toISOString() }),
      };
    },
  };
}
