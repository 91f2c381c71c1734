/**
 * @module The {@link HostBackend} of a firmware-matrix guest: power and boot order through QMP
 * (qmp-backend.ts), plus what a real BMC changes in its host's firmware — a one-time HTTP boot
 * of a URI (Redfish `UefiHttp` + `HttpBootUri`) and Secure Boot on or off (Redfish
 * `SecureBoot.SecureBootEnable`) — written into the guest's OVMF variable store
 * (ovmf-settings.ts) while the guest is off.
 *
 * QEMU reads the pflash variable store once, when it starts, so a power-on that changes the
 * store restarts the paused QEMU (`relaunch`: the lab stops the process by PID, the store is
 * rewritten, a new QEMU with the same command line starts paused; the serial log is appended
 * to). A power-on that changes nothing is the plain QMP one. A `UefiHttp` boot without a URI
 * removes the BMC's boot option, so the firmware's own HTTP boot asks DHCP for the boot file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { HostBackend, HostBootOptions, HostBootTarget, HostPower, HostSecureBoot } from '../redfish/backend.js';
import type { NicLocation } from './efi-load-option.js';
import { secureBootAtNextStart, withHttpBootNext, withoutHttpBootNext, withSecureBootEnable } from './ovmf-settings.js';

/** Options of {@link FirmwareHostBackend}. */
export interface FirmwareBackendOptions {
  /** Power and boot order (a QmpHostBackend); closed before a relaunch, so it reconnects. */
  readonly qmp: HostBackend;
  /** The guest's variable store file (its pflash unit 1). */
  readonly varsPath: string;
  /** Where the guest's NIC is (firmware-guest.ts pins its PCI address). */
  readonly nic: NicLocation;
  /** Stops QEMU, runs `between` (the store is rewritten there), starts it again paused, its QMP socket up. */
  readonly relaunch: (between: () => Promise<void>) => Promise<void>;
  /** Called with each firmware change made at a power-on (`BootNext Uri(…)`, `SecureBootEnable 1`). */
  readonly note?: (change: string) => void;
}

/** A firmware-matrix guest as its BMC sees it (see the module comment). */
export class FirmwareHostBackend implements HostBackend {
  readonly #o: FirmwareBackendOptions;
  /** Secure Boot to write at the next power-on; undefined: no change asked. */
  #pendingSecureBoot: boolean | undefined;
  /** What the firmware started with at the last power-on (read from the store then). */
  #bootedSecureBoot: boolean | undefined;
  readonly secureBoot: HostSecureBoot;

  constructor(options: FirmwareBackendOptions) {
    this.#o = options;
    this.secureBoot = {
      state: async () => {
        const stored = secureBootAtNextStart(await this.#read());
        const enable = this.#pendingSecureBoot ?? stored;
        return { enable, currentBoot: this.#bootedSecureBoot ?? stored };
      },
      setEnable: (on: boolean) => {
        this.#pendingSecureBoot = on;
        return Promise.resolve();
      },
    };
  }

  async #read(): Promise<Uint8Array> {
    return new Uint8Array(await readFile(this.#o.varsPath));
  }

  powerState(): Promise<HostPower> {
    return this.#o.qmp.powerState();
  }

  /** Rewrites the store for this boot when anything changes, restarting QEMU around it. */
  async #prepare(target: HostBootTarget, options: HostBootOptions | undefined): Promise<void> {
    const before = await this.#read();
    let after = before;
    const changes: string[] = [];
    const uri = target === 'UefiHttp' ? options?.httpBootUri : undefined;
    if (uri !== undefined) {
      after = withHttpBootNext(after, this.#o.nic, uri);
      changes.push(`BootNext Uri(${uri})`);
    } else {
      after = withoutHttpBootNext(after);
    }
    const secure = this.#pendingSecureBoot;
    if (secure !== undefined && secure !== secureBootAtNextStart(after)) {
      after = withSecureBootEnable(after, secure);
      changes.push(`SecureBootEnable ${secure ? 1 : 0}`);
    }
    this.#pendingSecureBoot = undefined;
    this.#bootedSecureBoot = secureBootAtNextStart(after);
    if (after === before) return;
    await this.#o.qmp.close();
    await this.#o.relaunch(() => writeFile(this.#o.varsPath, after));
    for (const change of changes) this.#o.note?.(change);
  }

  async powerOn(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void> {
    if ((await this.powerState()) === 'On') return;
    await this.#prepare(bootTarget, options);
    await this.#o.qmp.powerOn(bootTarget);
  }

  async reset(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void> {
    // The firmware reads its store only at start: a reset is a power cycle here.
    await this.#o.qmp.powerOff();
    await this.powerOn(bootTarget, options);
  }

  powerOff(): Promise<void> {
    return this.#o.qmp.powerOff();
  }

  shutdown(): Promise<void> {
    return this.#o.qmp.shutdown();
  }

  insertMedia(url: string): Promise<void> {
    return this.#o.qmp.insertMedia(url);
  }

  ejectMedia(): Promise<void> {
    return this.#o.qmp.ejectMedia();
  }

  close(): Promise<void> {
    return this.#o.qmp.close();
  }
}
