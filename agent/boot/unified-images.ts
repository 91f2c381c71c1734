/**
 * @module Per-host unified kernel images for boot HTTPS (`http.tlsBoot: on`, docs/https-boot.md):
 * a UEFI HTTP boot client of an x64 host (no Secure Boot: Debian's stub is unsigned) that is to
 * run the ramdisk is given one EFI binary with the ramdisk kernel, its initrds and the host's
 * command line (`rackside.url=`, `rackside.token=`, `BOOTIF=`, the consoles, the extra
 * parameters — what the iPXE script would pass) over HTTPS, so no second-stage loader has to
 * speak TLS.
 *
 * Images are built by images/uki.ts into `<dir>/store/<inputs hash>.efi` (the same inputs give
 * the same file) and hard-linked as `<dir>/<mac>.efi`, which boot HTTP serves under `/uki/`. A
 * host's image is checked on each of its UEFI HTTP DHCP requests: the command line and the
 * size and mtime of the kernel and initrds are compared with what it was built from, and a
 * change builds it again (a second or two; the client's DHCP retransmission covers it). Only
 * ramdisks on the boot servers (`/ramdisk/…`) can go into an image; a plan naming other URLs
 * keeps the iPXE chain.
 *
 * With {@link UnifiedImagesOptions.tls} (always, in the agent: `http.tlsBoot` needs `http.tls`)
 * the image's `rackside.url=` is the boot HTTPS base URL instead of the script's http:// one, and
 * one more initrd carries the CA the ramdisk's curl verifies it with (images' `buildCaOverlay`,
 * kept as `<dir>/ca-<sha256 prefix>.cpio`): the ramdisk then calls rackside over TLS only.
 */
import { createHash } from 'node:crypto';
import { link, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BootLookup, BootTarget, BootTargetQuery, RamdiskPlan } from '../../bootsvc/index.js';
import { hostBootFileName, ramdiskCommandLine } from '../../bootsvc/index.js';
import { buildCaOverlay, buildUnifiedKernelImage } from '../../images/index.js';

/** The URL prefix boot HTTP serves the images under (a mount of `dir`). */
export const UKI_MOUNT = 'uki';

/** Options of {@link UnifiedImages}. */
export interface UnifiedImagesOptions {
  /** Where images are kept (`<images.cacheDir>/uki`). */
  dir: string;
  /** The directory `/ramdisk/` on the boot servers is (`<images.cacheDir>/ramdisk`). */
  ramdiskDir: string;
  /** The EFI stub; default Debian's (images/uki.ts). */
  stub?: string;
  /** Reports a build that failed (the host then keeps the iPXE chain). */
  onError?: (mac: string, err: unknown) => void;
  /**
   * The ramdisk calls rackside over boot HTTPS: `agentUrl` (`https://<address>:<http.tlsPort>`)
   * replaces the plan's in the command line, and `caPem` (certificates the ramdisk trusts) goes
   * into the image as one more initrd.
   */
  tls?: { agentUrl: string; caPem: string };
}

interface Built {
  /** Command line and input file identities the image was built from. */
  key: string;
  path: string;
}

/** The host images (see the module comment). */
export class UnifiedImages {
  private readonly options: UnifiedImagesOptions;
  private readonly built = new Map<string, Built>();
  private readonly building = new Map<string, Promise<string | undefined>>();
  private caInitrd: Promise<string> | undefined;

  constructor(options: UnifiedImagesOptions) {
    this.options = options;
  }

  /** The file of a boot-server path under `/ramdisk/`, or undefined for anything else. */
  private localFile(pathOrUrl: string): string | undefined {
    const m = /^\/ramdisk\/([A-Za-z0-9._/-]+)$/.exec(pathOrUrl);
    if (m === null || (m[1] ?? '').split('/').includes('..')) return undefined;
    return join(this.options.ramdiskDir, m[1] ?? '');
  }

  /** The CA initrd's file, written once (its name names its content). */
  private caFile(caPem: string): Promise<string> {
    this.caInitrd ??= (async () => {
      const archive = buildCaOverlay(caPem);
      const path = join(this.options.dir, `ca-${createHash('sha256').update(archive).digest('hex').slice(0, 16)}.cpio`);
      await mkdir(this.options.dir, { recursive: true });
      await writeFile(path, archive, { mode: 0o644 });
      return path;
    })();
    const pending = this.caInitrd;
    pending.catch(() => { if (this.caInitrd === pending) this.caInitrd = undefined; });
    return pending;
  }

  /**
   * The boot-server path (`/uki/<mac>.efi`) of `mac`'s image for `plan`, built when missing or
   * stale; undefined when the plan's files are not on the boot servers, are missing, or the
   * build failed.
   */
  async imageFor(mac: string, plan: RamdiskPlan): Promise<string | undefined> {
    const files = [plan.kernel, ...plan.initrds].map((p) => this.localFile(p));
    if (files.some((f) => f === undefined)) return undefined;
    const tls = this.options.tls;
    if (tls !== undefined) {
      try {
        files.push(await this.caFile(tls.caPem));
      } catch (err) {
        this.options.onError?.(mac, err);
        return undefined;
      }
    }
    const stats = await Promise.all((files as string[]).map((f) => stat(f).catch(() => undefined)));
    if (stats.some((s) => s === undefined || !s.isFile())) return undefined;
    const cmdline = ramdiskCommandLine(tls === undefined ? plan : { ...plan, agentUrl: tls.agentUrl }, mac);
    const key = JSON.stringify([cmdline, files, stats.map((s) => [s?.size, s?.mtimeMs])]);
    const name = hostBootFileName(mac, 'efi');
    if (this.built.get(mac)?.key === key) return `/${UKI_MOUNT}/${name}`;
    let pending = this.building.get(mac);
    if (pending === undefined) {
      pending = this.build(mac, name, key, files as string[], cmdline).finally(() => { this.building.delete(mac); });
      this.building.set(mac, pending);
    }
    return pending;
  }

  private async build(mac: string, name: string, key: string, files: string[], cmdline: string): Promise<string | undefined> {
    try {
      const [kernel = '', ...initrds] = files;
      const image = await buildUnifiedKernelImage({ kernel, initrds, cmdline, ...(this.options.stub === undefined ? {} : { stub: this.options.stub }) }, join(this.options.dir, 'store'));
      await mkdir(this.options.dir, { recursive: true });
      const staged = join(this.options.dir, `.${name}.${process.pid}`);
      await rm(staged, { force: true });
      await link(image.path, staged);
      await rename(staged, join(this.options.dir, name));
      const previous = this.built.get(mac);
      this.built.set(mac, { key, path: image.path });
      if (previous !== undefined && previous.path !== image.path && ![...this.built.values()].some((b) => b.path === previous.path)) await rm(previous.path, { force: true });
      return `/${UKI_MOUNT}/${name}`;
    } catch (err) {
      this.options.onError?.(mac, err);
      return undefined;
    }
  }
}

/** True when `q` is the firmware's own UEFI HTTP boot request of an x64 client (not iPXE, not a script fetch). */
function wantsImage(q: BootTargetQuery): boolean {
  return q.transport === 'http' && q.isIpxe !== true && q.arch === 'x86_64' && q.firmware === 'uefi';
}

/** `lookup` whose ramdisk targets carry the host's unified image for UEFI HTTP boot clients of x64 hosts without Secure Boot. */
export function withUnifiedImages(lookup: BootLookup, images: UnifiedImages): BootLookup {
  return {
    target: async (q: BootTargetQuery): Promise<BootTarget | undefined> => {
      const target = await lookup.target(q);
      if (target === undefined || target.plan.kind !== 'ramdisk' || target.secureBoot === true || !wantsImage(q)) return target;
      const image = await images.imageFor(q.mac, target.plan);
      return image === undefined ? target : { ...target, unifiedImage: image };
    },
  };
}
