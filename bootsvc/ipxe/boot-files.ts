/**
 * @module The architecture and firmware matrix: which first-stage file a client gets, from its
 * option 93 / vendor class (already classified into a {@link BootQuery}) and its host's
 * {@link BootTarget}.
 *
 * | client                                   | gets                                                  |
 * |------------------------------------------|-------------------------------------------------------|
 * | iPXE (user class `iPXE` or option 175)    | the script URL `http://<agent>/boot/<mac>.ipxe`        |
 * | BIOS (93 = 0), or PXE without option 93   | `undionly.kpxe` (chains the ROM's UNDI driver)         |
 * | UEFI x64 (93 = 7/9)                       | `ipxe.efi` (own drivers) or `snponly.efi` (firmware SNP) |
 * | UEFI x64, host `UEFISecureBoot`           | `shimx64.efi` → `grubx64.efi` → `grub/<mac>.cfg`        |
 * | UEFI arm64 (93 = 11)                      | `shimaa64.efi` → `grubaa64.efi` → `grub/<mac>.cfg`      |
 * | UEFI HTTP boot (93 = 15/16/19)            | the same file as an `http://<agent>/boot/<file>` URL    |
 * | UEFI HTTP boot x64, host with a unified image, boot HTTPS on | `https://<agent>:<tls port>/uki/<mac>.efi` (docs/https-boot.md) |
 * | anything else (ia32 UEFI, RISC-V …)       | nothing (`none`): Debian ships no loader for it         |
 *
 * Secure Boot chains through TFTP in practice: over UEFI HTTP boot Debian's signed GRUB stops at
 * its prompt (docs/test-peers.md, "UEFI HTTP boot"); the URL is still the only thing an `HTTPClient` can take.
 * A live ISO needs iPXE's `sanboot`, so on the shim chain it reads as `none`.
 * @pure
 */
import type { BootDecision, BootQuery } from '../boot-lookup.js';
import type { BootTarget } from './boot-plan.js';
import { scriptUrlFor } from './render-text.js';

/** The file names clients are given (and the boot servers serve them under). */
export const BootFileName = {
  biosIpxe: 'undionly.kpxe',
  uefiIpxe: 'ipxe.efi',
  uefiSnpOnly: 'snponly.efi',
  shimX64: 'shimx64.efi',
  grubX64: 'grubx64.efi',
  shimAa64: 'shimaa64.efi',
  grubAa64: 'grubaa64.efi',
} as const;

/** The UEFI x64 iPXE flavour: `ipxe.efi` carries its own NIC drivers, `snponly.efi` uses the firmware's SNP driver. */
export type UefiIpxeLoader = typeof BootFileName.uefiIpxe | typeof BootFileName.uefiSnpOnly;

/** Inputs of {@link decideBoot} besides the query. */
export interface BootFileOptions {
  /** Boot HTTP base URL (`http://10.0.0.1:8081`), for script and HTTP-boot URLs. */
  httpBaseUrl: string;
  /** Default `ipxe.efi`. */
  uefiLoader?: UefiIpxeLoader;
  /** Boot HTTPS base URL (`https://10.0.0.1:8443`) when boot HTTPS is on: unified images are handed out under it. */
  httpsBaseUrl?: string;
}

/** Which chain a client runs. */
export type BootChain = 'ipxe-bios' | 'ipxe-uefi' | 'shim-x64' | 'shim-aa64' | 'unsupported';

/** Picks the chain for a client (not yet running iPXE) from its arch, firmware and the host's Secure Boot setting. */
export function chooseBootChain(q: Pick<BootQuery, 'arch' | 'firmware'>, secureBoot: boolean): BootChain {
  if (q.arch === 'arm64') return 'shim-aa64';
  if (q.firmware === 'bios') return q.arch === 'x86' || q.arch === 'unknown' ? 'ipxe-bios' : 'unsupported';
  if (q.firmware === 'uefi') {
    if (q.arch !== 'x86_64') return 'unsupported';
    return secureBoot ? 'shim-x64' : 'ipxe-uefi';
  }
  // No usable option 93: RFC 4578 made it mandatory for UEFI clients, so a PXE client without
  // it is a legacy BIOS ROM (what dnsmasq and ISC configurations have always assumed).
  return q.arch === 'unknown' || q.arch === 'x86' ? 'ipxe-bios' : 'unsupported';
}

/** The first-stage file of a chain, or undefined for `unsupported`. */
export function firstStageFile(chain: BootChain, uefiLoader: UefiIpxeLoader = BootFileName.uefiIpxe): string | undefined {
  switch (chain) {
    case 'ipxe-bios':
      return BootFileName.biosIpxe;
    case 'ipxe-uefi':
      return uefiLoader;
    case 'shim-x64':
      return BootFileName.shimX64;
    case 'shim-aa64':
      return BootFileName.shimAa64;
    case 'unsupported':
      return undefined;
  }
}

/** A boot-server file as the client must be given it: a TFTP name, or an HTTP URL for UEFI HTTP boot. */
function fileFor(name: string, q: Pick<BootQuery, 'transport'>, baseUrl: string): string {
  return q.transport === 'http' ? `${baseUrl.replace(/\/+$/, '')}/boot/${name}` : name;
}

/**
 * The HTTPS URL of the host's unified image when this client takes it: a UEFI HTTP boot client
 * (the firmware, not iPXE) on the iPXE-less x64 chain, a ramdisk plan, a unified image and boot
 * HTTPS on. Everything else keeps its usual chain.
 */
function unifiedImageUrl(target: BootTarget, q: BootQuery, chain: BootChain, httpsBaseUrl: string | undefined): string | undefined {
  if (httpsBaseUrl === undefined || target.unifiedImage === undefined || target.plan.kind !== 'ramdisk') return undefined;
  if (q.transport !== 'http' || q.isIpxe || chain !== 'ipxe-uefi') return undefined;
  return `${httpsBaseUrl.replace(/\/+$/, '')}/${target.unifiedImage.replace(/^\/+/, '')}`;
}

/**
 * Decides what `q`'s client boots now from its host's target: `undefined` for an unknown MAC
 * (the caller applies `unknownHosts`), `local-disk`/`none` straight from the plan, otherwise the
 * iPXE chain (`ipxe-script`, whose `loader` the firmware gets and whose `scriptUrl` iPXE gets)
 * or the shim chain (`boot-file`). Clients already running iPXE always get the script.
 */
export function decideBoot(target: BootTarget | undefined, q: BootQuery, options: BootFileOptions): BootDecision | undefined {
  if (target === undefined) return undefined;
  const { plan } = target;
  if (plan.kind === 'local-disk') return { kind: 'local-disk' };
  if (plan.kind === 'none') return { kind: 'none' };
  const scriptUrl = scriptUrlFor(options.httpBaseUrl, q.mac);
  const chain = chooseBootChain(q, target.secureBoot === true);
  const file = firstStageFile(chain, options.uefiLoader);
  if (q.isIpxe) return { kind: 'ipxe-script', loader: fileFor(file ?? BootFileName.uefiIpxe, q, options.httpBaseUrl), scriptUrl };
  if (file === undefined) return { kind: 'none' };
  const uki = unifiedImageUrl(target, q, chain, options.httpsBaseUrl);
  if (uki !== undefined) return { kind: 'boot-file', bootFile: uki };
  if (chain === 'shim-x64' || chain === 'shim-aa64') {
    return plan.kind === 'live-iso' ? { kind: 'none' } : { kind: 'boot-file', bootFile: fileFor(file, q, options.httpBaseUrl) };
  }
  return { kind: 'ipxe-script', loader: fileFor(file, q, options.httpBaseUrl), scriptUrl };
}
