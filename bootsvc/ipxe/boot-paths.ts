/**
 * @module The boot servers' name space, shared by boot HTTP and the TFTP hook: a requested
 * path is normalized (or refused) and routed to a generated file (per-MAC iPXE script, GRUB
 * entry or per-MAC GRUB config), a boot asset (`shimx64.efi` …), a file under a served root, or
 * a fast "not found" for the probes shim and GRUB send before their real work.
 *
 * Normalization: percent-decoding (HTTP only; an encoded `/`, `\` or NUL is refused), then
 * backslashes, NUL and other control characters are refused (400), `..` segments are refused
 * (403) and hidden (`.name`) segments are not found. Empty and `.` segments are dropped — which
 * is what maps shim's `//grubx64.efi` (it joins its own directory and the next file name with a
 * double slash) to `grubx64.efi`, and a TFTP client's absolute `/pxelinux.0` to `pxelinux.0`.
 *
 * Probes answered "not found" at once (docs/test-peers.md, "Secure Boot"): shim 16 asks for
 * `revocations_sku.efi`, `revocations_sbat.efi` and `shim_certificate_0.efi` next to itself;
 * GRUB asks for `grub/<platform>/*.lst` and `grub/<platform>/grub.cfg` before `grub/grub.cfg`.
 * @pure
 */
import { canonicalMac } from './render-text.js';

/** Where a requested path goes. */
export type BootRoute =
  | { kind: 'refused'; status: 400 | 403 | 404; reason: string }
  | { kind: 'probe'; name: string }
  | { kind: 'ipxe-script'; mac: string }
  | { kind: 'ipxe-entry' }
  | { kind: 'grub-entry' }
  | { kind: 'grub-config'; mac: string }
  | { kind: 'asset'; name: string }
  | { kind: 'file'; path: string };

/** Options of {@link routeBootPath}. */
export interface RouteBootPathOptions {
  /** Names of the virtual boot assets (`ipxe.efi`, `shimx64.efi` …), served at `/<name>` and `/boot/<name>`. */
  assetNames: ReadonlySet<string>;
  /** True for HTTP request paths (percent-encoded); false for TFTP file names (taken literally). */
  percentEncoded: boolean;
}

/** Result of {@link normalizeBootPath}: the path's segments, or why it was refused. */
export type NormalizedBootPath = { ok: true; segments: string[] } | { ok: false; status: 400 | 403 | 404; reason: string };

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAC = /^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$/i;
const SHIM_PROBE = /^(?:revocations[^/]*|shim_certificate[^/]*)\.efi$/i;
const GRUB_PLATFORM = /^[a-z0-9_]+-(?:efi|pc|ieee1275|uboot|coreboot)$/;

/** Splits and checks a requested path (see the module comment for the rules). */
export function normalizeBootPath(raw: string, percentEncoded: boolean): NormalizedBootPath {
  let path = raw;
  if (percentEncoded) {
    if (/%(?:2f|5c|00)/i.test(path)) return { ok: false, status: 400, reason: 'encoded slash, backslash or NUL' };
    try {
      path = decodeURIComponent(path);
    } catch {
      return { ok: false, status: 400, reason: 'malformed percent-encoding' };
    }
  }
  if (path.includes('\\')) return { ok: false, status: 400, reason: 'backslash in path' };
  if (CONTROL.test(path)) return { ok: false, status: 400, reason: 'control character in path' };
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return { ok: false, status: 403, reason: 'path traversal (..)' };
    if (segment.startsWith('.')) return { ok: false, status: 404, reason: 'hidden file' };
    segments.push(segment);
  }
  return { ok: true, segments };
}

function macOf(stem: string): string | undefined {
  return MAC.test(stem) ? canonicalMac(stem) : undefined;
}

/** True for the shim and GRUB probes that must get a fast "not found" (by normalized segments). */
export function isBootProbe(segments: readonly string[]): boolean {
  const last = segments.at(-1);
  if (last === undefined) return false;
  if (SHIM_PROBE.test(last)) return true;
  return segments.length === 3 && segments[0] === 'grub' && GRUB_PLATFORM.test(segments[1] ?? '');
}

/** Routes a requested path: generated files first, then probes, assets, and finally a file path under the roots. */
export function routeBootPath(raw: string, options: RouteBootPathOptions): BootRoute {
  const normalized = normalizeBootPath(raw, options.percentEncoded);
  if (!normalized.ok) return { kind: 'refused', status: normalized.status, reason: normalized.reason };
  const { segments } = normalized;
  if (segments.length === 0) return { kind: 'refused', status: 404, reason: 'no directory listings' };
  if (isBootProbe(segments)) return { kind: 'probe', name: segments.join('/') };
  const [first, second] = segments;
  if (segments.length === 2 && first === 'boot' && second !== undefined) {
    if (second === 'boot.ipxe') return { kind: 'ipxe-entry' };
    const mac = second.endsWith('.ipxe') ? macOf(second.slice(0, -'.ipxe'.length)) : undefined;
    if (mac !== undefined) return { kind: 'ipxe-script', mac };
    if (options.assetNames.has(second)) return { kind: 'asset', name: second };
  }
  if (segments.length === 2 && first === 'grub' && second !== undefined) {
    if (second === 'grub.cfg') return { kind: 'grub-entry' };
    const mac = second.endsWith('.cfg') ? macOf(second.slice(0, -'.cfg'.length)) : undefined;
    if (mac !== undefined) return { kind: 'grub-config', mac };
  }
  if (segments.length === 1 && first !== undefined && options.assetNames.has(first)) return { kind: 'asset', name: first };
  return { kind: 'file', path: segments.join('/') };
}

/** The MAC a route names, for the flight recorder (`undefined` when the path names none). */
export function routeMac(route: BootRoute): string | undefined {
  return route.kind === 'ipxe-script' || route.kind === 'grub-config' ? route.mac : undefined;
}
