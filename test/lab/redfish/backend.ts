/**
 * @module The host behind a virtual Redfish BMC: what the BMC asks of the "hardware" (power,
 * boot device for the next boot, the CD drive). `MemoryHostBackend` keeps it in memory and
 * records every boot; qmp-backend.ts drives a real QEMU guest through QMP.
 */

/** Redfish PowerState of the host as the hardware sees it. */
export type HostPower = 'On' | 'Off';

/** Boot source for the next boot (Redfish BootSourceOverrideTarget words). */
export type HostBootTarget = 'Pxe' | 'Hdd' | 'Cd' | 'BiosSetup' | 'UefiHttp' | 'None';

/** What the next boot carries besides its target. */
export interface HostBootOptions {
  /** Redfish `Boot.HttpBootUri` of a `UefiHttp` boot: the firmware boots this URI, not DHCP's boot file. */
  readonly httpBootUri?: string;
}

/** UEFI Secure Boot of a host whose firmware the backend can change (Redfish SecureBoot v1_1). */
export interface HostSecureBoot {
  /** `enable`: what the firmware will use at its next start; `currentBoot`: what it booted with last. */
  state(): Promise<{ enable: boolean; currentBoot: boolean }>;
  /** Switches Secure Boot on or off from the next start (as a BMC does: a running OS is not affected). */
  setEnable(on: boolean): Promise<void>;
}

/** What a virtual BMC controls. All methods may be called in any state. */
export interface HostBackend {
  powerState(): Promise<HostPower>;
  /** Powers on (no-op when on); the host boots from `bootTarget`. */
  powerOn(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void>;
  /** Cuts the power at once. */
  powerOff(): Promise<void>;
  /** ACPI power button: a cooperative OS shuts down (a stuck one ignores it). */
  shutdown(): Promise<void>;
  /** Hard reset of a running host (boots again from `bootTarget`). */
  reset(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void>;
  /** Puts an image into the CD drive (`url` as the BMC was given it). */
  insertMedia(url: string): Promise<void>;
  ejectMedia(): Promise<void>;
  /** Releases resources (QMP socket …). */
  close(): Promise<void>;
  /** Present when the host's firmware Secure Boot is real (the lab's OVMF guests); else the BMC keeps a flag. */
  readonly secureBoot?: HostSecureBoot;
}

/** One boot of a {@link MemoryHostBackend}. */
export interface RecordedBoot {
  readonly target: HostBootTarget;
  readonly media: string | undefined;
  /** The `HttpBootUri` of a `UefiHttp` boot. */
  readonly httpBootUri?: string;
}

/** In-memory host: instant power changes, a recorded boot list, an OS that may ignore ACPI. */
export class MemoryHostBackend implements HostBackend {
  power: HostPower = 'Off';
  media: string | undefined;
  readonly boots: RecordedBoot[] = [];
  /** When true, `shutdown()` is ignored (a hung OS): soft-off must fall back to a hard off. */
  ignoreShutdown = false;

  powerState(): Promise<HostPower> {
    return Promise.resolve(this.power);
  }

  powerOn(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void> {
    if (this.power === 'Off') this.#boot(bootTarget, options);
    return Promise.resolve();
  }

  powerOff(): Promise<void> {
    this.power = 'Off';
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    if (!this.ignoreShutdown) this.power = 'Off';
    return Promise.resolve();
  }

  reset(bootTarget: HostBootTarget, options?: HostBootOptions): Promise<void> {
    this.#boot(bootTarget, options);
    return Promise.resolve();
  }

  #boot(target: HostBootTarget, options: HostBootOptions | undefined): void {
    this.power = 'On';
    const uri = options?.httpBootUri;
    this.boots.push({ target, media: target === 'Cd' ? this.media : undefined, ...(uri === undefined ? {} : { httpBootUri: uri }) });
  }

  insertMedia(url: string): Promise<void> {
    this.media = url;
    return Promise.resolve();
  }

  ejectMedia(): Promise<void> {
    this.media = undefined;
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
