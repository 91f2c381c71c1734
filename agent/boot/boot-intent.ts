/**
 * @module The boot-intent seam between the provisioner and the boot services: the provisioner
 * says what a host should boot now and with which ramdisk token ({@link BootIntentSource}, the
 * local provisioner implements it over its node table); agent/boot turns that, with the host's
 * BareMetalHost, into bootsvc's `BootTarget` (host-boot-plan.ts, boot-lookup.ts). agent/boot
 * never reads the provisioner's records itself.
 * @pure
 */
import type { ClientArch } from '../../bootsvc/index.js';

/**
 * What the provisioner wants host `uid` to boot. Every field is optional; absent fields fall
 * back to the agent's defaults (and an absent `boot` to the host's provisioning state).
 * `token` is the host's ramdisk callback token (`rackside.token=`), see ramdisk-token.ts.
 */
export interface RamdiskIntent {
  boot?: 'ramdisk' | 'local-disk' | 'live-iso' | 'none';
  /** Kernel and initrd(s): absolute http(s) URLs or boot-server paths (`/ramdisk/vmlinuz`). */
  kernelUrl?: string;
  initrdUrl?: string | string[];
  /** For `live-iso`. */
  isoUrl?: string;
  token?: string;
  extraKernelParams?: string[];
  /** Shown on the console for `none`. */
  message?: string;
}

/** Who is booting: the host found by its boot MAC, and the client's architecture. */
export interface BootIntentQuery {
  /** The host's `metadata.uid`. */
  uid: string;
  /** Lower-case colon MAC the client booted with. */
  mac: string;
  /** The client's architecture when the question came from DHCP or a boot loader that told it. */
  arch?: ClientArch;
}

/**
 * "What should this MAC, with this client architecture, boot now, and with which token?",
 * answered by the provisioner. Called per DHCP request and boot-file fetch: cheap, never
 * blocking on BMCs, the same answer while nothing changed.
 */
export interface BootIntentSource {
  /** The provisioner's intent for the host (empty when it has none). */
  intent(query: BootIntentQuery): Promise<RamdiskIntent>;
  /**
   * Host `uid`'s ramdisk callback token, created and stored when it has none (a ramdisk boot is
   * about to be served); concurrent calls get one token.
   */
  ensureToken(uid: string): Promise<string>;
}
