/**
 * @module A simulated rackside ramdisk for integration tests without a guest: it reads its
 * host's iPXE script from boot HTTP (`/boot/<mac>.ipxe`) to learn the token of the current boot
 * (`rackside.token=`, as the real ramdisk reads its kernel command line), heartbeats to
 * `/ramdisk/v1/heartbeat`, and answers `clean` and `deploy` commands with successful results (a
 * deploy first downloads the image and the config drive from boot HTTP, as the real one does)
 * shaped like the in-ramdisk agent's (images/ramdisk-protocol.ts). Every script and token it saw
 * is kept, so a test can check where tokens went. In virtual-media mode it reads the token
 * from the ISO its BMC has inserted instead (`useVirtualMedia`).
 */
import { tokenFromHostIso } from './fake-ramdisk-iso.js';

/** The parsed KEY=VALUE lines of a heartbeat answer. */
export type RamdiskAnswer = Map<string, string>;

function parseAnswer(text: string): RamdiskAnswer {
  return new Map(text.trim().split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

const TOKEN = /rackside\.token=([A-Za-z0-9_-]+)/;

/** One simulated ramdisk for the host with boot MAC `mac`. */
export class SimRamdisk {
  /** Every token of a boot script it read, in order, without repeats. */
  readonly tokens: string[] = [];
  /** Every boot script text it read. */
  readonly scripts: string[] = [];
  /** Config drive URLs of the deploys it ran (their names are unguessable: they carry the user data). */
  readonly configDriveUrls: string[] = [];
  /** Commands answered, as `command command_id`. */
  readonly handled: string[] = [];
  /** Virtual-media ISO URLs it booted from, once each (virtual-media mode). */
  readonly isoUrls: string[] = [];
  #token: string | undefined;
  #mediaUrl: (() => string | undefined) | undefined;
  #last: string | null = null;
  /** The last result body sent, for a `report` command (rackside asks again when it never got it). */
  #lastResult: unknown;
  readonly #boot: string;
  readonly #mac: string;

  /** `boot` is the boot HTTP base URL (`http://127.0.0.1:PORT`). */
  constructor(boot: string, mac: string) {
    this.#boot = boot;
    this.#mac = mac.toLowerCase();
  }

  /**
   * Makes this a virtual-media ramdisk: instead of the iPXE script, each step reads the ISO the
   * BMC has inserted (`mediaUrl()`, undefined while none is), as the guest would boot it, and takes
   * the token from the host overlay in it (test/helpers/fake-ramdisk-iso.ts).
   */
  useVirtualMedia(mediaUrl: () => string | undefined): this {
    this.#mediaUrl = mediaUrl;
    return this;
  }

  /** Reads the current boot's token: from the inserted ISO in virtual-media mode, else from the boot script. */
  async readBoot(): Promise<void> {
    if (this.#mediaUrl === undefined) {
      await this.readScript();
      return;
    }
    const url = this.#mediaUrl();
    // A guest boots the inserted ISO once: a new boot inserts a new one (its name comes from the token).
    if (url === undefined || url === this.isoUrls.at(-1)) return;
    const res = await fetch(url);
    if (res.status !== 200) return; // not served (no ramdisk operation): the guest would not boot it
    const token = tokenFromHostIso(Buffer.from(await res.arrayBuffer()));
    this.isoUrls.push(url);
    this.#adopt(token);
  }

  #adopt(token: string | undefined): void {
    if (token === undefined) return;
    this.#token = token;
    if (!this.tokens.includes(token)) this.tokens.push(token);
  }

  /** Reads the host's boot script; a ramdisk script's token becomes the current one (a new boot). */
  async readScript(): Promise<string> {
    const res = await fetch(`${this.#boot}/boot/${this.#mac.replaceAll(':', '-')}.ipxe`);
    const text = await res.text();
    this.scripts.push(text);
    this.#adopt(TOKEN.exec(text)?.[1]);
    return text;
  }

  /** POSTs `body` to `/ramdisk/v1/<path>` with the current token (or `token`). */
  post(path: string, body: unknown, token = this.#token ?? ''): Promise<Response> {
    return fetch(`${this.#boot}/ramdisk/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  /**
   * One heartbeat after re-reading the script (a new boot brings a new token); answers a `clean`
   * or `deploy` command with a success. Returns the command name (`none` when there is no valid
   * token yet: before rackside boots the host into the ramdisk the real one keeps heartbeating too).
   */
  async step(): Promise<string> {
    await this.readBoot();
    if (this.#token === undefined) return 'none';
    const res = await this.post('heartbeat', { version: 'sim', boot_mac: this.#mac, ip: '192.0.2.200', uptime_seconds: 5, last_command_id: this.#last });
    if (res.status === 401) return 'none';
    if (res.status !== 200) throw new Error(`heartbeat answered ${res.status}: ${await res.text()}`);
    const answer = parseAnswer(await res.text());
    const command = answer.get('command') ?? 'none';
    const id = answer.get('command_id');
    // `report`: rackside never got the result of the command we last finished — send it again, as
    // the real ramdisk does (agent/provisioner/local/node.ts commandFor).
    if (command === 'report' && id !== undefined && id === this.#last && this.#lastResult !== undefined) {
      const again = await this.post('result', this.#lastResult);
      this.handled.push(`report ${id} (${String(again.status)})`);
      return command;
    }
    if (id === undefined || id === this.#last || (command !== 'clean' && command !== 'deploy')) return command;
    if (command === 'deploy') {
      // Like the real ramdisk: download the image and the config drive from boot HTTP.
      for (const key of ['image_url', 'configdrive_url']) {
        const url = answer.get(key);
        if (url === undefined) continue;
        const got = await fetch(url);
        await got.arrayBuffer();
        if (got.status !== 200) throw new Error(`GET ${key} ${url} answered ${got.status}`);
        if (key === 'configdrive_url') this.configDriveUrls.push(url);
      }
    }
    const result = command === 'clean' ? cleanResult(id, answer) : deployResult(id, answer);
    const done = await this.post('result', result);
    this.#last = id;
    this.#lastResult = result;
    // A 401: rackside moved on meanwhile (a failed attempt booted the ramdisk again with a new
    // token); the real ramdisk gives the report up too.
    if (done.status === 401) {
      this.handled.push(`${command} ${id} (report refused: stale token)`);
      return command;
    }
    if (done.status !== 200) throw new Error(`${command} result answered ${done.status}: ${await done.text()}`);
    this.handled.push(`${command} ${id}`);
    return command;
  }
}

const DISK = { name: '/dev/vda', serial: 'SIMDISK1', size: 8589934592 };
const MiB = 1048576;

/**
 * A clean as the real agent reports it (images/ramdisk/lib-clean.sh): mode `erase` zeroes the
 * whole disk (blkdiscard --zeroout) and reads back both end MiB and 16 random 4 KiB blocks; mode
 * `metadata` wipes and reads back both end MiB.
 */
function cleanResult(id: string, answer: RamdiskAnswer): unknown {
  const mode = answer.get('clean_mode') ?? 'metadata';
  const erase = mode === 'erase';
  const verification = erase ? { samples: 18, bytes_read: 2 * MiB + 16 * 4096, nonzero_samples: 0 } : { samples: 2, bytes_read: 2 * MiB, nonzero_samples: 0 };
  return {
    command_id: id, command: 'clean', status: 'ok', message: null,
    details: {
      mode,
      disks: [{
        ...DISK, wwn: '0x5000c50012345678', model: 'SIM HARDDISK', method: erase ? 'zeroout' : 'metadata', bytes_wiped: erase ? DISK.size : 2 * MiB,
        duration_seconds: 1, verification, status: 'ok', message: null,
      }],
    },
    log: ['clean: done'],
  };
}

function deployResult(id: string, answer: RamdiskAnswer): unknown {
  return {
    command_id: id, command: 'deploy', status: 'ok', message: null,
    details: {
      root_device: { name: DISK.name, size: DISK.size, rotational: false, serial: DISK.serial },
      image: { url: answer.get('image_url') ?? '', bytes: Number(answer.get('image_size_bytes') ?? 0), checksum_type: 'sha256', checksum: answer.get('image_checksum') ?? '', attempts: 1 },
      config_drive: answer.has('configdrive_url') ? { offset_bytes: DISK.size - 65536, size_bytes: 65536 } : null,
      duration_seconds: 1,
    },
    log: ['deploy: done'],
  };
}
