/**
 * @module What a client should boot: the {@link BootTarget} the agent answers the boot services'
 * one seam with (`BootLookup` in boot-lookup.ts). The boot HTTP server and the TFTP hook render
 * `/boot/<mac>.ipxe` and `grub/<mac>.cfg` from it, and `decideBoot` (boot-files.ts) derives the
 * DHCP server's first-stage file from the same target, so the two can never disagree.
 * @pure
 */

/**
 * The rackside ramdisk (or the discovery ramdisk): a kernel and initrd(s) with a command line.
 * `kernel`/`initrds` are either absolute `http(s)://` URLs or paths on the boot servers
 * (`/ramdisk/vmlinuz`), which iPXE fetches over boot HTTP and GRUB over TFTP (the same names are
 * served by both). The renderers add `rackside.url=`, `rackside.token=`, the consoles and, for
 * iPXE under UEFI, `initrd=<name>` (the EFI stub finds the initrd by name).
 */
export interface RamdiskPlan {
  kind: 'ramdisk';
  /** `ramdisk` for a known host's inspect/deploy/clean, `discovery` for unknown MACs. */
  purpose: 'ramdisk' | 'discovery';
  kernel: string;
  /** One or more initrds, concatenated by the kernel in order (base ramdisk, then per-host overlay). */
  initrds: string[];
  /** Where the in-ramdisk agent reports (`rackside.url=`), e.g. `http://10.0.0.1:8081`. */
  agentUrl: string;
  /** The per-host callback token (`rackside.token=`); discovery ramdisks may have none. */
  token?: string;
  /** Extra kernel parameters, appended after the standard ones. */
  extraKernelParams?: string[];
  /** Kernel consoles; default `['tty0', 'ttyS0,115200']` (the last one is /dev/console). */
  consoles?: string[];
}

/** Boot the installed OS from the first local disk. */
export interface LocalDiskPlan {
  kind: 'local-disk';
}

/** Boot a live ISO over HTTP with iPXE's `sanboot` (BIOS and UEFI). */
export interface LiveIsoPlan {
  kind: 'live-iso';
  /** Absolute URL or boot-server path of the ISO. */
  iso: string;
}

/** Known (or unknown) client with nothing to boot now: print why, wait, ask again. */
export interface NothingPlan {
  kind: 'none';
  /** Shown on the client's console. */
  message?: string;
}

/** What the client should boot once its boot loader (iPXE or GRUB) asks. */
export type BootPlan = RamdiskPlan | LocalDiskPlan | LiveIsoPlan | NothingPlan;

/** The agent's answer for one MAC: the plan plus the host facts the boot-file matrix needs. */
export interface BootTarget {
  plan: BootPlan;
  /** `spec.bootMode: UEFISecureBoot`: chain signed shim → signed GRUB instead of iPXE. */
  secureBoot?: boolean;
  /** Host name, for messages and the flight recorder. */
  host?: string;
  /**
   * This host's unified kernel image (kernel, initrd and command line in one EFI binary), as a
   * path on the boot servers (`/uki/<mac>.efi`): a UEFI HTTP boot client of an x64 host without
   * Secure Boot gets it as an `https://` URL when boot HTTPS is on (`decideBoot`,
   * docs/https-boot.md), and fetches everything over TLS with no second-stage loader.
   */
  unifiedImage?: string;
}
