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

/** Accepts a `forwarded-tcpip` channel for one of `forwards` and pipes it to its local target; refuses other ports. */
function forwardChannel(forwards: readonly TunnelForward[], log: SshLogger) {
  return (details: TcpConnectionDetails, accept: () => ClientChannel | undefined, reject: () => void): void => {
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
}

/** The tunnel's connection loop: connect, forward, and after any drop reconnect with backoff until stopped. */
class ReverseTunnel implements Tunnel {
  readonly #options: TunnelOptions;
  readonly #pin: HostKeyPin;
  readonly #log: SshLogger;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #policy: BackoffPolicy;
  readonly #bastion: string;
  readonly #forwards: TunnelForward[];
  #state: TunnelState = 'disabled';
  #sinceMs: number;
  #lastError: string | undefined;
  #presented: string | undefined;
  #nextAttemptMs: number | undefined;
  #attempts = 0;
  #failuresInRow = 0;
  #running = false;
  /** Bumped by every start() and stop(): an attempt from an earlier run must not continue. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  #client: ssh2.Client | undefined;
  #closed: Promise<void> = Promise.resolve();

  constructor(options: TunnelOptions, pin: HostKeyPin) {
    this.#options = options;
    this.#pin = pin;
    this.#log = options.log ?? silentLogger;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#policy = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#bastion = `${options.host}:${options.port}`;
    this.#forwards = [{ remotePort: options.remotePort, target: options.target }, ...(options.extraForwards ?? [])];
    this.#sinceMs = this.#now();
  }

  /** Read through a call: `#running` changes while {@link connect} awaits. */
  #active(): boolean {
    return this.#running;
  }

  #enter(next: TunnelState): void {
    if (next !== this.#state) this.#sinceMs = this.#now();
    this.#state = next;
    if (next !== 'backoff') this.#nextAttemptMs = undefined;
  }

  #scheduleRetry(): void {
    if (!this.#running) return;
    const delay = computeBackoffMs(this.#failuresInRow, this.#policy, this.#random());
    this.#failuresInRow++;
    this.#enter('backoff');
    this.#nextAttemptMs = this.#now() + delay;
    this.#log.info({ bastion: this.#bastion, delayMs: delay, error: this.#lastError }, 'ssh tunnel: reconnecting later');
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#connect();
    }, delay);
  }

  /** One attempt: read the identity (every attempt: it may have been replaced), then open a client. */
  async #connect(): Promise<void> {
    if (!this.#running) return;
    const run = this.#generation;
    if (this.#attempts > 0) this.#enter('connecting');
    this.#attempts++;
    let privateKey: Buffer;
    try {
      privateKey = await readFile(this.#options.identity);
    } catch (err) {
      this.#lastError = `cannot read ssh.tunnel.identity ${this.#options.identity}: ${describeError(err)}`;
      this.#scheduleRetry();
      return;
    }
    if (!this.#active() || run !== this.#generation) return;
    this.#open(privateKey);
  }

  /** Opens a client: its end (error or close) schedules the next attempt; once ready it asks for every forward. */
  #open(privateKey: Buffer): void {
    const c = new ssh2.Client();
    this.#client = c;
    let settled = false;
    let mismatch: string | undefined;
    let resolveClosed: () => void = () => undefined;
    this.#closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (this.#client === c) this.#client = undefined;
      resolveClosed();
      if (!this.#running) return;
      this.#lastError ??= `${this.#bastion}: connection closed`;
      if (this.#state === 'connected') this.#log.warn({ bastion: this.#bastion, error: this.#lastError }, 'ssh tunnel: dropped');
      this.#scheduleRetry();
    };
    c.on('error', (err: Error) => {
      if (settled) return; // ssh2 follows e.g. a handshake timeout with "Connection lost": keep the cause
      this.#lastError = mismatch ?? `${this.#bastion}: ${err.message}`;
      c.destroy();
      settle();
    });
    c.on('close', settle);
    c.on('tcp connection', forwardChannel(this.#forwards, this.#log));
    c.on('ready', () => { this.#onReady(c, () => settled); });
    c.connect(this.#connectConfig(privateKey, (why) => { mismatch = why; }));
  }

  /** Asks the bastion to listen on every forward's port; connected when all are granted, closed at the first refusal. */
  #onReady(c: ssh2.Client, settled: () => boolean): void {
    if (!this.#active()) {
      c.end(); // stopped while the handshake was in flight
      return;
    }
    let pending = this.#forwards.length;
    for (const forward of this.#forwards) {
      c.forwardIn(this.#options.remoteBindAddress ?? 'localhost', forward.remotePort, (err?: Error) => {
        if (settled()) return;
        if (err !== undefined) {
          this.#lastError = `${this.#bastion} refused to listen on port ${forward.remotePort}: ${err.message}`;
          c.end();
          return;
        }
        if (--pending > 0) return;
        this.#failuresInRow = 0;
        this.#lastError = undefined;
        this.#enter('connected');
        this.#log.info({ bastion: this.#bastion, remotePort: this.#options.remotePort }, 'ssh tunnel: connected');
      });
    }
  }

  /** The client's connect config, with the host key checked against the pin (`onMismatch` gets the error to report). */
  #connectConfig(privateKey: Buffer, onMismatch: (why: string) => void): ssh2.ConnectConfig {
    const options = this.#options;
    const pin = this.#pin;
    const algorithms = hostKeyAlgorithms(pin);
    return {
      host: options.host,
      port: options.port,
      username: options.user,
      privateKey,
      keepaliveInterval: options.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: options.keepaliveCountMax ?? 3,
      readyTimeout: options.readyTimeoutMs ?? 20_000,
      ...(algorithms === undefined ? {} : { algorithms: { serverHostKey: algorithms } }),
      hostVerifier: (key: Buffer): boolean => {
        const presented = (this.#presented = fingerprintSha256(key));
        if (matchesHostKeyPin(pin, key)) return true;
        onMismatch(`host key mismatch: ${this.#bastion} presented ${keyTypeOfBlob(key) ?? 'a'} key ${presented}, ` +
          `but ssh.tunnel.hostKey pins ${pin.fingerprint}; refusing to connect (check the bastion, then update the pin)`);
        this.#log.warn({ bastion: this.#bastion, presented, pinned: pin.fingerprint }, 'ssh tunnel: host key mismatch');
        return false;
      },
    };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#generation++;
    this.#attempts = 0;
    this.#failuresInRow = 0;
    this.#enter('connecting');
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#generation++;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const c = this.#client;
    if (c !== undefined) {
      c.end();
      // ssh2's end() and destroy() do nothing while the TCP connect is still in flight;
      // do not wait for a close that may come late (the ready handler ends such a client).
      let force: NodeJS.Timeout | undefined;
      await Promise.race([this.#closed, new Promise<void>((resolve) => {
        force = setTimeout(() => { c.destroy(); resolve(); }, 2000);
      })]);
      clearTimeout(force);
    }
    this.#enter('disabled');
  }

  status(): TunnelStatus {
    const presented = this.#presented;
    const next = this.#nextAttemptMs;
    return {
      state: this.#state,
      since: new Date(this.#sinceMs).toISOString(),
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
      remotePort: this.#options.remotePort,
      reconnects: Math.max(0, this.#attempts - 1),
      bastion: this.#bastion,
      ...(presented === undefined ? {} : { bastionFingerprint: presented }),
      ...(next === undefined ? {} : { nextAttemptAt: new Date(next).toISOString() }),
    };
  }
}

/**
 * Creates the reverse tunnel.
 * @throws Error when `hostKey` is not a key line or fingerprint (a config mistake, not a runtime state).
 */
export function createTunnel(options: TunnelOptions): Tunnel {
  const parsedPin = parseHostKeyPin(options.hostKey);
  if ('error' in parsedPin) throw new Error(`ssh.tunnel.hostKey: ${parsedPin.error}`);
  return new ReverseTunnel(options, parsedPin);
}
