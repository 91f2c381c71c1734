/**
 * @module GRUB configuration renderers for the shim → GRUB chain (Secure Boot x86_64 and all
 * arm64 hosts; Debian ships signed GRUB for arm64 but no arm64 iPXE).
 *
 * Debian's signed `grubnetx64.efi` / `grubnetaa64.efi` have the built-in prefix `/grub` on the
 * server they were loaded from and read `$prefix/grub.cfg` (docs/test-peers.md, "Secure Boot"). That file is
 * {@link renderGrubEntryConfig}: the same for every client, it loads `$prefix/<mac>.cfg` using
 * GRUB's `$net_default_mac` (lower-case, colon-separated — the spelling GRUB's
 * `grub_net_hwaddr_to_str` produces), so neither the TFTP nor the HTTP server has to map a client
 * address to a MAC. The per-MAC file is {@link renderGrubConfig}.
 *
 * Kernel and initrd paths are fetched over TFTP from `$root` (the server GRUB came from, the chain
 * verified under Secure Boot) unless a plan gives absolute URLs, which become GRUB's
 * `(http,server[,port])/path` devices (the port form needs a GRUB with port support; port 80
 * needs none). Under Secure Boot, GRUB's shim_lock verifier checks the kernel's signature, so the
 * plan must name a signed kernel.
 * @pure
 */
import type { BootPlan, RamdiskPlan } from './boot-plan.js';
import { canonicalMac, grubArg, grubText, kernelCommandLine } from './render-text.js';
import { ramdiskKernelParams } from './scripts.js';

/** Facts every GRUB config needs. */
export interface GrubConfigContext {
  mac: string;
  host?: string;
  /** Pause before retrying a failed load or leaving; default 10 s. */
  retrySeconds?: number;
}

/** Returns the GRUB file spelling of a kernel/initrd location: a `$root`-relative path, or an `(http,…)` device path for an http URL. */
export function grubFilePath(pathOrUrl: string): string {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl)) return grubArg(`/${pathOrUrl.split('/').filter((s) => s !== '').join('/')}`);
  const url = new URL(pathOrUrl);
  if (url.protocol !== 'http:') throw new TypeError(`GRUB can fetch only http:// URLs (no TLS), got ${JSON.stringify(pathOrUrl)}`);
  const device = url.port === '' ? `(http,${url.hostname})` : `(http,${url.hostname},${url.port})`;
  return grubArg(`${device}${decodeURIComponent(url.pathname)}`);
}

function who(ctx: GrubConfigContext): string {
  const mac = canonicalMac(ctx.mac);
  return ctx.host === undefined ? mac : `${ctx.host} (${mac})`;
}

function header(title: string, ctx: GrubConfigContext): string[] {
  return [`# rackside: ${title} for ${who(ctx).replace(/[^\x20-\x7e]/g, '?')}.`, '# Rendered per request from what the agent wants now.', 'set timeout=0'];
}

/** The entry `grub/grub.cfg`: loads `$prefix/$net_default_mac.cfg`; without a network MAC it explains and leaves. */
export function renderGrubEntryConfig(): string {
  return [
    '# rackside: GRUB network-boot entry point, the same for every client.',
    '# Debian\'s signed grubnet*.efi has the prefix /grub on the server it came from; this file',
    '# loads the configuration rendered for the booting interface\'s MAC.',
    'set timeout=0',
    'if [ -n "$net_default_mac" ]; then',
    '  configfile "$prefix/$net_default_mac.cfg"',
    'fi',
    'echo \'rackside: GRUB reports no network interface MAC; cannot choose a configuration\'',
    'sleep 10',
    'exit 1',
    '',
  ].join('\n');
}

/** The `linux` / `initrd` / `boot` lines for one command line, indented by `indent`. */
function loadLines(kernel: string, initrds: string, cmdline: string, indent: string): string[] {
  return [`if linux ${kernel} ${cmdline}; then`, `  if initrd ${initrds}; then`, '    boot', '  fi', 'fi'].map((l) => `${indent}${l}`);
}

/**
 * Renders the ramdisk config: `linux` with the same command line iPXE uses (minus `initrd=`,
 * GRUB passes initrds itself), `initrd`, `boot`. When the plan names no consoles, the command
 * line depends on GRUB's `$grub_cpu`: x86 gets the defaults (`console=tty0
 * console=ttyS0,115200`), arm64 gets no `console=` at all, so the kernel takes the console the
 * firmware describes (ACPI SPCR or the device tree's `stdout-path`: `ttyAMA0` on QEMU `virt` and
 * most arm64 servers). A `console=ttyS0` there names no device, and the last `console=` wins
 * /dev/console, so the ramdisk's own output would vanish into `tty0` on a headless host.
 */
export function renderGrubRamdiskConfig(plan: RamdiskPlan, ctx: GrubConfigContext): string {
  if (plan.initrds.length === 0) throw new TypeError('a ramdisk plan needs at least one initrd');
  const label = plan.purpose === 'discovery' ? 'discovery ramdisk' : 'rackside ramdisk';
  const seconds = ctx.retrySeconds ?? 10;
  const cmdline = (p: RamdiskPlan): string => kernelCommandLine(ramdiskKernelParams(p, false, ctx.mac)).split(' ').map(grubArg).join(' ');
  const kernel = grubFilePath(plan.kernel);
  const initrds = plan.initrds.map(grubFilePath).join(' ');
  const load = plan.consoles !== undefined
    ? loadLines(kernel, initrds, cmdline(plan), '')
    : [
      'if [ "$grub_cpu" = "arm64" ]; then',
      '  # arm64: no console=, the kernel takes the console the firmware describes (SPCR, stdout-path)',
      ...loadLines(kernel, initrds, cmdline({ ...plan, consoles: [] }), '  '),
      'else',
      ...loadLines(kernel, initrds, cmdline(plan), '  '),
      'fi',
    ];
  return [
    ...header(label, ctx),
    `echo ${grubText(`rackside: ${who(ctx)}: loading the ${label}`)}`,
    ...load,
    `echo ${grubText(`rackside: loading the ${label} failed; retrying in ${seconds} seconds`)}`,
    `sleep ${seconds}`,
    'configfile "$prefix/grub.cfg"',
    '',
  ].join('\n');
}

/**
 * Renders "boot from local disk": GRUB cannot pass control to "the next boot device" itself, so
 * it leaves with a non-zero status, and the firmware boot manager tries the next BootOrder entry
 * (status 0 stops EDK2-based firmware at its menu; GRUB builds whose `exit` ignores the argument
 * return success, which still leaves GRUB).
 */
export function renderGrubLocalDiskConfig(ctx: GrubConfigContext): string {
  return [...header('boot from local disk', ctx), `echo ${grubText(`rackside: ${who(ctx)}: booting from the local disk`)}`, 'exit 1', ''].join('\n');
}

/** Renders "nothing to do": print why, pause, and leave to the firmware's next boot device. */
export function renderGrubNothingConfig(ctx: GrubConfigContext & { message?: string }): string {
  const seconds = ctx.retrySeconds ?? 10;
  return [
    ...header('nothing to do', ctx),
    `echo ${grubText(`rackside: ${who(ctx)}: ${ctx.message ?? 'nothing to boot now'}`)}`,
    `sleep ${seconds}`,
    'exit 1',
    '',
  ].join('\n');
}

/** Renders the per-MAC config for `plan`. A live ISO cannot be booted from GRUB here; it reads as "nothing to do" with that reason. */
export function renderGrubConfig(plan: BootPlan, ctx: GrubConfigContext): string {
  switch (plan.kind) {
    case 'ramdisk':
      return renderGrubRamdiskConfig(plan, ctx);
    case 'local-disk':
      return renderGrubLocalDiskConfig(ctx);
    case 'live-iso':
      return renderGrubNothingConfig({ ...ctx, message: 'live ISOs boot through iPXE, not GRUB (use virtual media, or turn Secure Boot off)' });
    case 'none':
      return renderGrubNothingConfig(plan.message === undefined ? ctx : { ...ctx, message: plan.message });
  }
}
