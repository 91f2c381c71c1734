/**
 * @module The boot menus of the rackside ISO and its file layout: an ISOLINUX configuration for
 * BIOS El Torito boot and a GRUB configuration for UEFI (Debian's signed CD GRUB, `gcdx64.efi`,
 * finds the ISO by searching for `/.disk/info` and then sources `/boot/grub/grub.cfg`). Both
 * entries load the shared initrd followed by the per-host overlay slot `/boot/host.img`, and
 * pass `console=tty0 console=ttyS0,115200` so serial-over-LAN and QEMU serial logs show the
 * ramdisk (the last `console=` becomes `/dev/console`).
 * @pure
 */

/** Paths inside the ISO (absolute, as the boot loaders see them). */
export const IsoPath = {
  kernel: '/boot/vmlinuz',
  initrd: '/boot/initrd',
  /** Zero-filled slot patched per host with the overlay cpio (the kernel skips zero bytes between archives). */
  hostOverlay: '/boot/host.img',
  grubConfig: '/boot/grub/grub.cfg',
  /** El Torito EFI image: a FAT filesystem with `/EFI/BOOT/BOOTX64.EFI` (arm64: `BOOTAA64.EFI`). */
  efiImage: '/boot/efi.img',
  diskInfo: '/.disk/info',
  isolinuxDir: '/isolinux',
  isolinuxBin: '/isolinux/isolinux.bin',
  isolinuxConfig: '/isolinux/isolinux.cfg',
  ldlinux: '/isolinux/ldlinux.c32',
  bootCatalog: '/isolinux/boot.cat',
  /** The boot catalog of a UEFI-only (arm64) ISO, which has no ISOLINUX directory. */
  efiBootCatalog: '/boot/boot.cat',
} as const;

/** Arguments every rackside boot entry passes: VGA/BMC console and the first serial port at 115200 baud. */
export const CONSOLE_KERNEL_ARGS = ['console=tty0', 'console=ttyS0,115200'] as const;

/**
 * The console arguments of `arch`'s ISO: the first 16550 (`ttyS0`) on x86_64; on arm64 the first
 * PL011 (`ttyAMA0`), the serial port of Arm servers' SBSA UART and of QEMU's `virt` machine.
 */
export function consoleKernelArgs(arch: 'amd64' | 'arm64' = 'amd64'): readonly string[] {
  return arch === 'arm64' ? ['console=tty0', 'console=ttyAMA0,115200'] : CONSOLE_KERNEL_ARGS;
}

/** Thrown for a kernel argument that cannot be written into a boot menu safely. */
export class BootMenuError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BootMenuError';
  }
}

/**
 * Returns the kernel command line of the ISO entries: the console arguments, then `extra`.
 * Throws {@link BootMenuError} for an argument with whitespace, quotes, `$`, `;`, `\` or a
 * control character, which GRUB's script parser or ISOLINUX would split or interpret.
 */
export function isoKernelCommandLine(extra: readonly string[] = [], arch: 'amd64' | 'arm64' = 'amd64'): string {
  for (const arg of extra) {
    if (arg === '' || !/^[\x21-\x7e]+$/.test(arg) || /["'`$;\\{}#]/.test(arg)) {
      throw new BootMenuError(`kernel argument ${JSON.stringify(arg)} must be printable ASCII without spaces, quotes, $, ;, \\, {, } or #`);
    }
  }
  return [...consoleKernelArgs(arch), ...extra].join(' ');
}

/**
 * Renders `isolinux.cfg`: serial console at 115200, no prompt, one entry loading the kernel
 * with the initrd and the host overlay (comma-separated initrds, syslinux ≥ 4).
 */
export function renderIsolinuxConfig(options: { label: string; extraKernelArgs?: readonly string[] }): string {
  const cmdline = isoKernelCommandLine(options.extraKernelArgs);
  return [
    'SERIAL 0 115200',
    'DEFAULT rackside',
    'PROMPT 0',
    'TIMEOUT 1',
    'LABEL rackside',
    `  MENU LABEL ${options.label.replace(/[^\x20-\x7e]/g, '')}`,
    `  KERNEL ${IsoPath.kernel}`,
    `  APPEND initrd=${IsoPath.initrd},${IsoPath.hostOverlay} ${cmdline}`,
    '',
  ].join('\n');
}

/**
 * Renders `grub.cfg` for the UEFI entry: GRUB's own menu on the serial port and the screen,
 * no timeout, one entry. GRUB aligns each initrd to 4 bytes, as the newc format requires.
 */
export function renderGrubConfig(options: { label: string; extraKernelArgs?: readonly string[]; arch?: 'amd64' | 'arm64' }): string {
  const arch = options.arch ?? 'amd64';
  const cmdline = isoKernelCommandLine(options.extraKernelArgs, arch);
  const label = options.label.replace(/[^\x20-\x7e]|["\\$]/g, '');
  // arm64 firmware's console already is the serial port, and Debian's arm64 CD GRUB has no `serial`.
  const serial = arch === 'arm64' ? [] : ['serial --unit=0 --speed=115200', 'terminal_input console serial', 'terminal_output console serial'];
  return [
    ...serial,
    'set timeout=0',
    'set default=0',
    `menuentry "${label}" {`,
    `  linux ${IsoPath.kernel} ${cmdline}`,
    `  initrd ${IsoPath.initrd} ${IsoPath.hostOverlay}`,
    '}',
    '',
  ].join('\n');
}
