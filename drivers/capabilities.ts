/**
 * @module The capability interfaces a BMC driver implements, one small interface per concern
 * (bmclib's `bmc/power.go` style): power, boot device, virtual media, secure boot and BMC info
 * here; BIOS settings, firmware, tasks, RAID, event subscriptions and out-of-band inventory in
 * capabilities-config.ts. `BmcCapabilitySet` gathers them all. Drivers own this vocabulary;
 * agent/ maps it to metal3's types. Types only — no behaviour lives here.
 *
 * Every method is re-entrant in BMO's sense: it may be called again and again, and is cheap and
 * safe when the BMC is already in the requested state (setting power on when on, ejecting an
 * empty drive, deleting a missing subscription are no-ops). Failures are thrown as `BmcError`s
 * (errors.ts) with stable codes; a capability the driver lacks throws `UnsupportedCapabilityError`.
 * @pure
 */
import type {
  BiosSettingsControl, EventSubscriptionControl, FirmwareControl, InventoryControl, RaidControl, TaskControl,
} from './capabilities-config.js';

export type * from './capabilities-config.js';

/** Power state as the BMC reports it; `powering-*` are Redfish's transitional states. */
export type PowerState = 'on' | 'off' | 'powering-on' | 'powering-off' | 'unknown';

/**
 * A power request. `on`/`off` (hard), `soft-off` (ACPI shutdown; Redfish GracefulShutdown),
 * `reset` (hard; ForceRestart), `soft-reset` (GracefulRestart), `cycle` (off then on).
 */
export type PowerAction = 'on' | 'off' | 'soft-off' | 'reset' | 'soft-reset' | 'cycle';

/** Turns the host on and off through its BMC. */
export interface PowerControl {
  /** Reads the current power state; never changes it. */
  getPowerState(): Promise<PowerState>;
  /**
   * Requests `action`; resolves once the BMC accepted it, not when the state changed (real BMCs
   * report the new PowerState seconds later — poll `getPowerState`). `on` when on and `off`/
   * `soft-off` when off are no-ops.
   */
  setPower(action: PowerAction): Promise<void>;
}

/** A boot target: network (i)PXE, local disk, virtual/physical CD, firmware setup, UEFI HTTP. */
export type BootDevice = 'pxe' | 'disk' | 'cdrom' | 'bios' | 'uefi-http';

/** Firmware boot mode of the override (Redfish BootSourceOverrideMode, IPMI boot flags EFI bit). */
export type BootMode = 'uefi' | 'legacy';

/** Options of {@link BootDeviceControl.setBootDevice}. */
export interface BootDeviceOptions {
  /** Keep the device for every boot; default false = next boot only (Redfish `Once`). */
  readonly persistent?: boolean;
  /** Boot mode to request with the device; undefined leaves the BMC's current mode. */
  readonly mode?: BootMode;
  /**
   * With `uefi-http`: the URI the firmware boots (Redfish `Boot.HttpBootUri`, ComputerSystem
   * v1_9), so no DHCP boot-file option is needed. A BMC without `HttpBootUri` (iDRAC keeps it in
   * BIOS attributes instead) gets the override without it: its firmware takes the boot URI from
   * DHCP, as UEFI HTTP boot does by default. Ignored with other devices.
   */
  readonly httpBootUri?: string;
}

/** The boot override the BMC currently holds. */
export interface BootOverride {
  /** `none` when no override is set (the host follows its firmware boot order). */
  readonly device: BootDevice | 'none';
  readonly persistent: boolean;
  readonly mode: BootMode | undefined;
  /** `Boot.HttpBootUri` when the BMC has one set (Redfish), else undefined. */
  readonly httpBootUri?: string;
}

/** Chooses what the host boots from next. */
export interface BootDeviceControl {
  /** Sets the boot override; setting the same override again is a no-op. */
  setBootDevice(device: BootDevice, options?: BootDeviceOptions): Promise<void>;
  /** Reads the current override. */
  getBootDevice(): Promise<BootOverride>;
}

/** A virtual media slot type (Redfish MediaTypes CD/DVD → `cd`, USBStick → `usb`, Floppy). */
export type VirtualMediaDevice = 'cd' | 'usb' | 'floppy';

/** Request of {@link VirtualMediaControl.insertMedia}. */
export interface InsertMediaRequest {
  /** HTTP(S) URL the BMC fetches the image from (the BMC, not rackside, downloads it). */
  readonly imageUrl: string;
  /** Default `cd`. */
  readonly device?: VirtualMediaDevice;
  /** Default true. */
  readonly writeProtected?: boolean;
}

/** One virtual media slot as the BMC reports it. */
export interface VirtualMediaSlot {
  readonly device: VirtualMediaDevice;
  readonly inserted: boolean;
  readonly imageUrl: string | undefined;
}

/** Attaches ISO/IMG images over the network (Redfish VirtualMedia). */
export interface VirtualMediaControl {
  /** Inserts an image; the same URL already inserted is a no-op, another URL replaces it. */
  insertMedia(request: InsertMediaRequest): Promise<void>;
  /** Ejects the slot (default `cd`); an empty slot is a no-op. */
  ejectMedia(device?: VirtualMediaDevice): Promise<void>;
  /** Lists the slots and what they hold. */
  getMediaStatus(): Promise<readonly VirtualMediaSlot[]>;
}

/** Secure Boot state (Redfish SecureBoot resource). */
export interface SecureBootState {
  readonly enabled: boolean;
  /** Whether the current boot used Secure Boot, when the BMC says. */
  readonly currentBoot: 'enabled' | 'disabled' | undefined;
}

/** Turns UEFI Secure Boot on and off. */
export interface SecureBootControl {
  /** Reads the Secure Boot state. */
  getSecureBoot(): Promise<SecureBootState>;
  /** Enables or disables Secure Boot from the next boot; no-op when already so. */
  setSecureBoot(enabled: boolean): Promise<void>;
}

/** What a BMC says about itself. */
export interface BmcInfo {
  readonly vendor: string | undefined;
  readonly model: string | undefined;
  readonly firmwareVersion: string | undefined;
  /** Protocol details, e.g. `Redfish 1.11.0`, `IPMI 2.0`. */
  readonly protocolVersion: string | undefined;
  /** Capabilities this BMC actually offers, as probed (may be narrower than the driver's). */
  readonly probed: readonly CapabilityName[];
}

/** Identifies the BMC. */
export interface BmcInfoControl {
  /** Probes the BMC (service root, Get Device ID …) and reports what it is. */
  getBmcInfo(): Promise<BmcInfo>;
}

/** Every capability, by the name drivers and the registry use. */
export interface BmcCapabilitySet {
  readonly power: PowerControl;
  readonly bootDevice: BootDeviceControl;
  readonly virtualMedia: VirtualMediaControl;
  readonly biosSettings: BiosSettingsControl;
  readonly firmware: FirmwareControl;
  readonly tasks: TaskControl;
  readonly raid: RaidControl;
  readonly eventSubscriptions: EventSubscriptionControl;
  readonly secureBoot: SecureBootControl;
  readonly inventory: InventoryControl;
  readonly info: BmcInfoControl;
}

/** Name of one capability. */
export type CapabilityName = keyof BmcCapabilitySet;

/** All capability names in a fixed order (for listings and `supported`). */
export const CAPABILITY_NAMES = [
  'power', 'bootDevice', 'virtualMedia', 'biosSettings', 'firmware', 'tasks', 'raid',
  'eventSubscriptions', 'secureBoot', 'inventory', 'info',
] as const satisfies readonly CapabilityName[];

type MissingCapabilityName = Exclude<CapabilityName, (typeof CAPABILITY_NAMES)[number]>;
// Compile-time check: adding a capability to BmcCapabilitySet without listing it fails here.
const _everyCapabilityListed: [MissingCapabilityName] extends [never] ? true : MissingCapabilityName = true;
