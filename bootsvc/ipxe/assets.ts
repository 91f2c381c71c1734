/**
 * @module Finds the boot assets of asset-catalog.ts on this machine at start-up and reports what
 * is missing with the exact fix. For each asset it looks, in order, at: an explicit override;
 * `<assetsDir>/<name>` (a file copied in under its served name); `<assetsDir><package path>`
 * (a package unpacked there with `dpkg-deb -x`, the recommended way for shim and GRUB); and the
 * package path under `systemRoot` (`/`, i.e. an installed package).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BOOT_ASSETS,
  summarizeMissing,
  type BootAssetGroup,
  type BootAssetReport,
  type BootAssetSpec,
  type FoundBootAsset,
} from './asset-catalog.js';

/** Where to look for boot assets. */
export interface DiscoverBootAssetsOptions {
  /** rackside's assets directory (`http`/`tftp` assets unpacked or copied there). */
  assetsDir?: string;
  /** Root of the installed system; default `/` (tests point it at a fake tree). */
  systemRoot?: string;
  /** Served name → explicit path; wins over discovery. A missing override file counts as missing. */
  overrides?: Readonly<Record<string, string>>;
  /** Groups the configuration needs; default `['ipxe']`. Others are reported as optional. */
  required?: readonly BootAssetGroup[];
}

async function isNonEmptyFile(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    return s.isFile() && s.size > 0;
  } catch {
    return false;
  }
}

/** The candidate locations of `spec`, in search order. */
export function candidatePaths(spec: BootAssetSpec, options: DiscoverBootAssetsOptions): string[] {
  const override = options.overrides?.[spec.name];
  if (override !== undefined) return [override];
  const out: string[] = [];
  if (options.assetsDir !== undefined) {
    out.push(join(options.assetsDir, spec.name));
    for (const p of spec.paths) out.push(join(options.assetsDir, p));
  }
  for (const p of spec.paths) out.push(join(options.systemRoot ?? '/', p));
  return out;
}

/**
 * Looks for every known boot asset and returns the served-name → path map plus a report of what
 * is missing (grouped, with consequences and fix commands). Never throws for missing files.
 */
export async function checkBootAssets(options: DiscoverBootAssetsOptions = {}): Promise<BootAssetReport> {
  const found: FoundBootAsset[] = [];
  const missing: BootAssetSpec[] = [];
  for (const spec of BOOT_ASSETS) {
    let path: string | undefined;
    for (const candidate of candidatePaths(spec, options)) {
      if (await isNonEmptyFile(candidate)) {
        path = candidate;
        break;
      }
    }
    if (path === undefined) missing.push(spec);
    else found.push({ name: spec.name, group: spec.group, path });
  }
  const required = new Set<BootAssetGroup>(options.required ?? ['ipxe']);
  const groups = summarizeMissing(missing, required, options.assetsDir);
  return {
    ok: groups.every((g) => !g.required),
    found,
    missing: groups,
    assets: new Map(found.map((f) => [f.name, f.path])),
  };
}
