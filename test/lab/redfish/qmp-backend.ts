/**
 * @module A {@link HostBackend} that drives a QEMU guest through QMP (QEMU Machine Protocol,
 * QEMU's QMP specification: a greeting, `qmp_capabilities`, then `{"execute", "arguments", "id"}`
 * commands answered by `{"return"}` or `{"error"}`, with asynchronous `{"event"}` lines).
 * QEMU is expected to run with `-qmp unix:SOCK,server=on,wait=off -no-shutdown` (and `-S` to
 * start "powered off"). Power: `query-status` (running = On), `system_reset` + `cont` (power on;
 * the reset makes the firmware re-read the boot order), `stop` + `system_reset` (hard off: the next `cont` boots
 * from firmware), `system_powerdown` (ACPI), `system_reset`. Boot device: `qom-set` of the
 * `bootindex` property of the devices (read by the firmware at the next reset). Virtual media:
 * the image URL is downloaded to a file, then `blockdev-change-medium` on the CD device;
 * eject is `eject` with force.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { HostBackend, HostBootTarget, HostPower } from './backend.js';

/** QOM ids of the guest's boot devices (`-device …,id=ID`). */
export interface QmpBootDevices {
  readonly Hdd?: string;
  readonly Cd?: string;
  readonly Pxe?: string;
}

/** Options of {@link QmpHostBackend}. */
export interface QmpBackendOptions {
  /** The `-qmp unix:` socket path. */
  readonly socketPath: string;
  /** QOM id of the CD drive device (`-device ide-cd,id=cd0,…`); default `cd0`. */
  readonly cdDeviceId?: string;
  /** Devices whose `bootindex` is set for the boot override; default `{ Cd: cdDeviceId }`. */
  readonly bootDevices?: QmpBootDevices;
  /** Where downloaded images go; default a directory under the OS temp dir. */
  readonly mediaDir?: string;
  /** Timeout of one QMP command; default 10 000 ms. */
  readonly commandTimeoutMs?: number;
  /**
   * Downloads `url` into `file` for InsertMedia; default `fetch` from this process. A BMC whose
   * host network is elsewhere (the virtual rack's namespace) passes its own.
   */
  readonly download?: (url: string, file: string) => Promise<void>;
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** A minimal QMP client over a UNIX socket. */
export class QmpClient {
  readonly #socket: Socket;
  readonly #pending = new Map<number, Pending>();
  readonly #timeoutMs: number;
  /** Asynchronous events seen (`SHUTDOWN`, `POWERDOWN`, `RESET` …), oldest first. */
  readonly events: string[] = [];
  #buffer = '';
  #nextId = 1;
  #greeted: Promise<void>;

  private constructor(socket: Socket, timeoutMs: number) {
    this.#socket = socket;
    this.#timeoutMs = timeoutMs;
    let greet: () => void = () => undefined;
    let refuse: (err: Error) => void = () => undefined;
    this.#greeted = new Promise((resolve, reject) => { greet = resolve; refuse = reject; });
    this.#greeted.catch(() => undefined); // seen by connect(); a late close must not be unhandled
    socket.setEncoding('utf8');
    // Errors end in 'close', which fails what waits (the greeting, pending commands).
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, nl).trim();
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line !== '') this.#onMessage(line, greet);
      }
    });
    socket.on('close', () => {
      // A connection QEMU never served (it serves one QMP client at a time; a second waits in
      // the backlog) and then closed — QEMU killed for a relaunch — must not wait forever.
      refuse(new Error('QMP socket closed before the greeting'));
      for (const p of this.#pending.values()) { clearTimeout(p.timer); p.reject(new Error('QMP socket closed')); }
      this.#pending.clear();
      for (const listener of this.#closeListeners) listener();
    });
  }

  readonly #closeListeners: (() => void)[] = [];

  /** Calls `listener` once the socket has closed (by either side). */
  onClose(listener: () => void): void {
    if (this.#socket.destroyed) listener();
    else this.#closeListeners.push(listener);
  }

  /** Connects, waits for the greeting and negotiates capabilities. */
  static async connect(socketPath: string, timeoutMs = 10_000): Promise<QmpClient> {
    const socket = connect(socketPath);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new QmpClient(socket, timeoutMs);
    // Bounded: a greeting that never comes fails the call instead of every later one.
    const timer = setTimeout(() => { socket.destroy(); }, timeoutMs);
    try {
      await client.#greeted;
      await client.execute('qmp_capabilities');
    } finally {
      clearTimeout(timer);
    }
    return client;
  }

  #onMessage(line: string, greet: () => void): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if ('QMP' in msg) { greet(); return; }
    if (typeof msg.event === 'string') { this.events.push(msg.event); return; }
    const id = typeof msg.id === 'number' ? msg.id : undefined;
    const pending = id === undefined ? undefined : this.#pending.get(id);
    if (id === undefined || pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    const error = msg.error as { class?: string; desc?: string } | undefined;
    if (error !== undefined) pending.reject(new Error(`QMP ${error.class ?? 'Error'}: ${error.desc ?? ''}`));
    else pending.resolve(msg.return);
  }

  /** Runs one command and resolves its `return` value. */
  execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`QMP ${command} timed out after ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#socket.write(`${JSON.stringify({ execute: command, ...(args === undefined ? {} : { arguments: args }), id })}\n`);
    });
  }

  /** Closes the socket. */
  close(): void {
    this.#socket.destroy();
  }
}

/** Power, boot order and CD of a QEMU guest, through QMP. */
export class QmpHostBackend implements HostBackend {
  readonly #options: QmpBackendOptions;
  #client: Promise<QmpClient> | undefined;
  /** The file currently in the CD drive. */
  mediaFile: string | undefined;

  constructor(options: QmpBackendOptions) {
    this.#options = options;
  }

  /** The connection, made when there is none; a failed or closed one is forgotten (only if still the current one). */
  #qmp(): Promise<QmpClient> {
    if (this.#client !== undefined) return this.#client;
    const connecting = QmpClient.connect(this.#options.socketPath, this.#options.commandTimeoutMs);
    this.#client = connecting;
    const forget = (): void => { if (this.#client === connecting) this.#client = undefined; };
    connecting.then((client) => { client.onClose(forget); }, forget);
    return connecting;
  }

  async #run(command: string, args?: Record<string, unknown>): Promise<unknown> {
    return (await this.#qmp()).execute(command, args);
  }

  async #status(): Promise<{ running: boolean; status: string }> {
    const r = await this.#run('query-status') as { running?: boolean; status?: string };
    return { running: r.running === true, status: r.status ?? 'unknown' };
  }

  async powerState(): Promise<HostPower> {
    return (await this.#status()).running ? 'On' : 'Off';
  }

  /** Sets `bootindex` so that `target` boots first (others follow in Hdd, Cd, Pxe order). */
  async setBootTarget(target: HostBootTarget): Promise<void> {
    const devices = this.#options.bootDevices ?? { Cd: this.#options.cdDeviceId ?? 'cd0' };
    const order = (['Hdd', 'Cd', 'Pxe'] as const).filter((d) => devices[d] !== undefined);
    const first = order.find((d) => d === target);
    const ranked = first === undefined ? order : [first, ...order.filter((d) => d !== first)];
    // bootindex values must stay unique: clear them all (-1 = none) before ranking again.
    for (const kind of ranked) {
      const id = devices[kind];
      if (id !== undefined) await this.#run('qom-set', { path: `/machine/peripheral/${id}`, property: 'bootindex', value: -1 });
    }
    for (const [index, kind] of ranked.entries()) {
      const id = devices[kind];
      if (id !== undefined) await this.#run('qom-set', { path: `/machine/peripheral/${id}`, property: 'bootindex', value: index });
    }
  }

  async powerOn(bootTarget: HostBootTarget): Promise<void> {
    const { running } = await this.#status();
    if (running) return;
    await this.setBootTarget(bootTarget);
    // QEMU builds the firmware's boot order (fw_cfg `bootorder`) from the bootindex values at
    // machine reset, so a reset after changing them makes this power-on boot `bootTarget` —
    // also from `prelaunch` (-S) and from the `paused` state powerOff leaves.
    await this.#run('system_reset');
    await this.#run('cont');
  }

  async powerOff(): Promise<void> {
    if (!(await this.#status()).running) return;
    await this.#run('stop');
    await this.#run('system_reset'); // the next cont boots from firmware, like a power-on
  }

  async shutdown(): Promise<void> {
    await this.#run('system_powerdown');
  }

  async reset(bootTarget: HostBootTarget): Promise<void> {
    await this.setBootTarget(bootTarget);
    if ((await this.#status()).running) await this.#run('system_reset');
    else await this.powerOn(bootTarget);
  }

  async insertMedia(url: string): Promise<void> {
    const dir = this.#options.mediaDir ?? join(tmpdir(), 'rackside-qmp-media');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${createHash('sha256').update(url).digest('hex').slice(0, 16)}.iso`);
    if (this.#options.download !== undefined) await this.#options.download(url, file);
    else {
      const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
      if (!res.ok || res.body === null) throw new Error(`virtual media download of ${url} failed: HTTP ${res.status}`);
      await pipeline(Readable.fromWeb(res.body), createWriteStream(file));
    }
    await this.#run('blockdev-change-medium', { id: this.#options.cdDeviceId ?? 'cd0', filename: file, format: 'raw', 'read-only-mode': 'read-only' });
    this.mediaFile = file;
  }

  async ejectMedia(): Promise<void> {
    await this.#run('eject', { id: this.#options.cdDeviceId ?? 'cd0', force: true });
    this.mediaFile = undefined;
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) (await client.catch(() => undefined))?.close();
  }

  /** Runs any QMP command (tests inspect `query-block`, `qom-get` …). */
  command(name: string, args?: Record<string, unknown>): Promise<unknown> {
    return this.#run(name, args);
  }
}
