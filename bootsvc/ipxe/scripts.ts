/**
 * @module iPXE script renderers, one per {@link BootPlan} kind: the rackside (or discovery)
 * ramdisk, boot from local disk, a live ISO through `sanboot`, "nothing to do" (print why, ask
 * again a few times, then leave to the firmware's next boot device), and the generic entry
 * script `/boot/boot.ipxe` that chains to the per-MAC one. Every value that reaches a script goes
 * through render-text.ts (iPXE has no quoting), so a bad value throws instead of producing a
 * script that does something else.
 * @pure
 */
import type { BootPlan, LiveIsoPlan, RamdiskPlan } from './boot-plan.js';
import { canonicalMac, hyphenMac, ipxeArg, ipxeText, kernelCommandLine, resolveBootUrl, scriptUrlFor } from './render-text.js';

/** Facts every script needs: whom it is for and where the boot server is. */
export interface IpxeScriptContext {
  /** The client's MAC (any spelling; rendered lower-case colon). */
  mac: string;
  /** Host name, when the MAC belongs to a host. */
  host?: string;
  /** Boot HTTP base URL, e.g. `http://10.0.0.1:8081`. */
  baseUrl: string;
  /** Pause before retrying a failed download or asking again; default 10 s (30 s for "nothing"). */
  retrySeconds?: number;
}

/** Extra inputs of the "nothing to do" script. */
export interface NothingScriptContext extends IpxeScriptContext {
  /** Why there is nothing to boot (shown on the console). */
  message?: string;
  /** Which ask this is, from 1 (the script URL carries `?attempt=N`). */
  attempt?: number;
  /** Asks before exiting to the firmware; default 10. */
  maxAttempts?: number;
}

/** The standard kernel consoles: VGA, then serial (the last `console=` becomes /dev/console). */
export const DEFAULT_CONSOLES: readonly string[] = ['tty0', 'ttyS0,115200'];

/** The iPXE image name of the `index`-th initrd: `initrd`, `initrd1`, `initrd2` … */
export function initrdName(index: number): string {
  return index === 0 ? 'initrd' : `initrd${index}`;
}

/**
 * The kernel parameters of a ramdisk plan, in order: `initrd=<name>` for each initrd when
 * `efiInitrdNames` (the EFI stub loads initrds by the names iPXE gave them; BIOS kernels ignore
 * the parameter), `rackside.url=`, `rackside.token=`, the consoles, then the extra parameters.
 */
export function ramdiskKernelParams(plan: RamdiskPlan, efiInitrdNames: boolean, mac?: string): string[] {
  const params: string[] = [];
  if (efiInitrdNames) plan.initrds.forEach((_, i) => params.push(`initrd=${initrdName(i)}`));
  // PXELINUX's BOOTIF=01-<mac> names the interface that booted, as Ironic's ramdisk expects it:
  // the in-ramdisk agent marks that NIC `pxe_enabled` and reports it as the PXE interface.
  if (mac !== undefined) params.push(`BOOTIF=01-${hyphenMac(mac)}`);
  params.push(`rackside.url=${plan.agentUrl.replace(/\/+$/, '')}`);
  if (plan.token !== undefined) params.push(`rackside.token=${plan.token}`);
  for (const c of plan.consoles ?? DEFAULT_CONSOLES) params.push(`console=${c}`);
  params.push(...(plan.extraKernelParams ?? []));
  return params;
}

/**
 * The kernel command line a unified kernel image of `plan` carries for the host with `mac`: the
 * parameters the iPXE script passes (without `initrd=` names: the image holds its initrds),
 * joined as the kernel reads them.
 */
export function ramdiskCommandLine(plan: RamdiskPlan, mac: string): string {
  return kernelCommandLine(ramdiskKernelParams(plan, false, mac));
}

/** The file name of `mac`'s per-host boot file with `extension` (`52-54-00-12-34-56.efi`). */
export function hostBootFileName(mac: string, extension: string): string {
  return `${hyphenMac(mac)}.${extension}`;
}

function who(ctx: IpxeScriptContext): string {
  const mac = canonicalMac(ctx.mac);
  return ctx.host === undefined ? mac : `${ctx.host} (${mac})`;
}

function header(title: string, ctx: IpxeScriptContext): string[] {
  return ['#!ipxe', `# rackside: ${ipxeText(title)} for ${ipxeText(who(ctx))}.`, '# Rendered per request from what the agent wants now; never cache it.'];
}

function retryTail(ctx: IpxeScriptContext, what: string): string[] {
  const seconds = ctx.retrySeconds ?? 10;
  return [
    ':failed',
    `echo rackside: ${ipxeText(what)} failed; retrying in ${seconds} seconds`,
    `sleep ${seconds}`,
    'imgfree',
    'goto retry',
  ];
}

/** Renders the ramdisk script: `kernel` (named `vmlinuz`) with the command line, the initrds, `boot`; retries on failure. */
export function renderRamdiskScript(plan: RamdiskPlan, ctx: IpxeScriptContext): string {
  if (plan.initrds.length === 0) throw new TypeError('a ramdisk plan needs at least one initrd');
  const label = plan.purpose === 'discovery' ? 'discovery ramdisk' : 'rackside ramdisk';
  const kernelUrl = ipxeArg(resolveBootUrl(ctx.baseUrl, plan.kernel), 'kernel URL');
  const cmdline = kernelCommandLine(ramdiskKernelParams(plan, true, ctx.mac));
  const lines = [
    ...header(label, ctx),
    `echo rackside: ${ipxeText(who(ctx))}: loading the ${label}`,
    ':retry',
    `kernel --name vmlinuz ${kernelUrl} ${cmdline} || goto failed`,
    ...plan.initrds.map((initrd, i) => `initrd --name ${initrdName(i)} ${ipxeArg(resolveBootUrl(ctx.baseUrl, initrd), 'initrd URL')} || goto failed`),
    'boot || goto failed',
    ...retryTail(ctx, `loading the ${label}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Renders "boot from the first local disk", correct under both BIOS and UEFI (it branches on `${platform}`). */
export function renderLocalDiskScript(ctx: IpxeScriptContext): string {
  const lines = [
    ...header('boot from local disk', ctx),
    `echo rackside: ${ipxeText(who(ctx))}: booting from the local disk`,
    'iseq ${platform} efi && goto uefi ||',
    '# BIOS: `exit` would return through INT 18h, which many BIOSes treat as "halt" or "enter',
    '# setup" rather than "next device"; booting drive 0x80 (the first hard disk) directly through',
    '# INT 13h works everywhere. --no-describe: publish no iBFT/ACPI SAN table for that disk.',
    'sanboot --no-describe --drive 0x80 || goto failed',
    ':uefi',
    '# UEFI has no INT 13h. Returning to the boot manager with a non-zero status makes it try the',
    '# next BootOrder entry (the disk); with status 0 EDK2-based firmware stops at its boot menu.',
    'exit 1',
    ':failed',
    'echo rackside: booting the local disk failed; leaving to the firmware',
    'exit 1',
  ];
  return `${lines.join('\n')}\n`;
}

/** Renders a live-ISO boot: iPXE `sanboot` of the ISO over HTTP (El Torito under BIOS, the ISO's EFI loader under UEFI). */
export function renderLiveIsoScript(plan: LiveIsoPlan, ctx: IpxeScriptContext): string {
  const isoUrl = ipxeArg(resolveBootUrl(ctx.baseUrl, plan.iso), 'ISO URL');
  const lines = [
    ...header('live ISO', ctx),
    `echo rackside: ${ipxeText(who(ctx))}: booting a live ISO`,
    ':retry',
    '# --no-describe: the ISO is a boot medium, not a SAN disk the OS should attach (no iBFT/ACPI table).',
    `sanboot --no-describe ${isoUrl} || goto failed`,
    ...retryTail(ctx, 'booting the ISO'),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Renders "nothing to do": print the reason, wait, and fetch the script again (`?attempt=N+1`),
 * so a host becomes bootable without a power cycle once the operator acts; after `maxAttempts`
 * asks, `exit 1` so the firmware tries its next boot device.
 */
export function renderNothingScript(ctx: NothingScriptContext): string {
  const attempt = Math.max(1, Math.floor(ctx.attempt ?? 1));
  const maxAttempts = Math.max(1, Math.floor(ctx.maxAttempts ?? 10));
  const seconds = ctx.retrySeconds ?? 30;
  const message = ctx.message ?? 'nothing to boot now';
  const lines = [...header('nothing to do', ctx), `echo rackside: ${ipxeText(who(ctx))}: ${ipxeText(message)}`];
  if (attempt >= maxAttempts) {
    lines.push(`echo rackside: asked ${maxAttempts} times; leaving to the firmware's next boot device`, 'exit 1');
  } else {
    const next = ipxeArg(`${scriptUrlFor(ctx.baseUrl, ctx.mac)}?attempt=${attempt + 1}`, 'script URL');
    lines.push(
      `echo rackside: asking again in ${seconds} seconds (attempt ${attempt} of ${maxAttempts})`,
      `sleep ${seconds}`,
      `chain --replace --autofree ${next} || exit 1`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Renders the generic entry script (`/boot/boot.ipxe`) for iPXE builds with a fixed or embedded
 * URL: it chains to the per-MAC script of the interface iPXE booted from (`netX` is the last
 * opened device; `:hexhyp` spells its MAC with hyphens).
 */
export function renderEntryScript(baseUrl: string): string {
  const base = ipxeArg(baseUrl.replace(/\/+$/, ''), 'base URL');
  return ['#!ipxe', '# rackside: generic entry point; chains to the per-MAC script of the boot interface.', `chain --replace --autofree ${base}/boot/\${netX/mac:hexhyp}.ipxe || exit 1`, ''].join('\n');
}

/** Renders the script for `plan` (dispatch over the plan kinds). */
export function renderIpxeScript(plan: BootPlan, ctx: NothingScriptContext): string {
  switch (plan.kind) {
    case 'ramdisk':
      return renderRamdiskScript(plan, ctx);
    case 'local-disk':
      return renderLocalDiskScript(ctx);
    case 'live-iso':
      return renderLiveIsoScript(plan, ctx);
    case 'none':
      return renderNothingScript(plan.message === undefined ? ctx : { ...ctx, message: plan.message });
  }
}
