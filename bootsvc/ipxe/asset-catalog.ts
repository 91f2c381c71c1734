/**
 * @module The boot assets rackside serves and where Debian ships them: iPXE (`ipxe`), the
 * Microsoft-signed shim (`shim-signed`) and Debian-signed network GRUB
 * (`grub-efi-amd64-signed`, `grub-efi-arm64-signed`), each under the name clients ask for
 * (`grubnetx64.efi.signed` is served as `grubx64.efi`, the name shim loads next to itself).
 * Also the report of a start-up check: what is missing, what it breaks, and the exact commands
 * that fix it.
 *
 * Installing shim-signed or grub-efi-*-signed runs postinst scripts that reconfigure the head
 * node's own boot loader (docs/test-peers.md, "Secure Boot"), so the fix for them is `apt-get download` +
 * `dpkg-deb -x` into rackside's assets directory; arm64 packages come from a private apt
 * configuration (its own lists, cache and status) so the head node's apt state is untouched.
 * @pure
 */

/** Asset groups, by the hosts that need them. */
export type BootAssetGroup = 'ipxe' | 'secure-boot-x64' | 'arm64';

/** One served boot asset. */
export interface BootAssetSpec {
  /** The name clients request (TFTP file name, `/boot/<name>` over HTTP). */
  name: string;
  group: BootAssetGroup;
  /** Debian package that ships it. */
  package: string;
  /** Absolute paths inside the package, in order of preference. */
  paths: readonly string[];
}

/** Every asset rackside knows. */
export const BOOT_ASSETS: readonly BootAssetSpec[] = [
  { name: 'undionly.kpxe', group: 'ipxe', package: 'ipxe', paths: ['/usr/lib/ipxe/undionly.kpxe'] },
  // Debian 12 puts ipxe.efi in /boot (for its GRUB menu entry); other releases in /usr/lib/ipxe.
  { name: 'ipxe.efi', group: 'ipxe', package: 'ipxe', paths: ['/usr/lib/ipxe/ipxe.efi', '/boot/ipxe.efi'] },
  { name: 'snponly.efi', group: 'ipxe', package: 'ipxe', paths: ['/usr/lib/ipxe/snponly.efi'] },
  { name: 'shimx64.efi', group: 'secure-boot-x64', package: 'shim-signed', paths: ['/usr/lib/shim/shimx64.efi.signed'] },
  { name: 'grubx64.efi', group: 'secure-boot-x64', package: 'grub-efi-amd64-signed', paths: ['/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed'] },
  { name: 'shimaa64.efi', group: 'arm64', package: 'shim-signed', paths: ['/usr/lib/shim/shimaa64.efi.signed'] },
  { name: 'grubaa64.efi', group: 'arm64', package: 'grub-efi-arm64-signed', paths: ['/usr/lib/grub/arm64-efi-signed/grubnetaa64.efi.signed'] },
];

/** Who cannot boot without a group. */
export const GROUP_CONSEQUENCE: Readonly<Record<BootAssetGroup, string>> = {
  'ipxe': 'BIOS and UEFI x86_64 hosts cannot network-boot (no iPXE)',
  'secure-boot-x64': 'hosts with bootMode UEFISecureBoot cannot network-boot (no signed shim and GRUB)',
  'arm64': 'arm64 hosts cannot network-boot (no signed shimaa64 and GRUB)',
};

/** The default assets directory, for recipes when none is configured. */
export const DEFAULT_ASSETS_DIR = '/var/lib/rackside/boot-assets';

function quote(path: string): string {
  return /^[A-Za-z0-9_./:=+-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/** The exact shell commands that provide `group` (into `assetsDir` where the packages must not be installed). */
export function fixForGroup(group: BootAssetGroup, assetsDir: string = DEFAULT_ASSETS_DIR): string {
  const dir = quote(assetsDir);
  switch (group) {
    case 'ipxe':
      return 'apt-get install ipxe';
    case 'secure-boot-x64':
      return [
        '# not apt-get install: their postinst scripts reconfigure this machine\'s own boot loader',
        `mkdir -p ${dir} && cd "$(mktemp -d)" && apt-get download shim-signed grub-efi-amd64-signed \\`,
        `  && for deb in *.deb; do dpkg-deb -x "$deb" ${dir}; done`,
      ].join('\n');
    case 'arm64':
      return [
        '# arm64 packages through a private apt configuration (own lists, cache and status), unpacked, never installed',
        'A="$(mktemp -d)" && mkdir -p "$A/lists/partial" "$A/cache/archives/partial" && touch "$A/status" \\',
        '  && O="-o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Dir::State::Lists=$A/lists -o Dir::State::Status=$A/status -o Dir::Cache=$A/cache" \\',
        '  && apt-get $O update && (cd "$A" && apt-get $O download shim-signed grub-efi-arm64-signed) \\',
        `  && mkdir -p ${dir} && for deb in "$A"/*.deb; do dpkg-deb -x "$deb" ${dir}; done`,
      ].join('\n');
  }
}

/** An asset that was found. */
export interface FoundBootAsset {
  name: string;
  group: BootAssetGroup;
  /** Absolute path served for it. */
  path: string;
}

/** A group with missing assets. */
export interface MissingBootAssets {
  group: BootAssetGroup;
  names: string[];
  packages: string[];
  /** True when the configuration needs this group (start-up should fail or warn loudly). */
  required: boolean;
  consequence: string;
  fix: string;
}

/** Result of the start-up asset check. */
export interface BootAssetReport {
  /** No required group is missing anything. */
  ok: boolean;
  found: FoundBootAsset[];
  missing: MissingBootAssets[];
  /** Served name → absolute path, for the boot servers. */
  assets: Map<string, string>;
}

/** Groups the missing specs by asset group, with what each breaks and its fix. */
export function summarizeMissing(missing: readonly BootAssetSpec[], required: ReadonlySet<BootAssetGroup>, assetsDir?: string): MissingBootAssets[] {
  const groups = new Map<BootAssetGroup, BootAssetSpec[]>();
  for (const spec of missing) groups.set(spec.group, [...(groups.get(spec.group) ?? []), spec]);
  return [...groups].map(([group, specs]) => ({
    group,
    names: specs.map((s) => s.name),
    packages: [...new Set(specs.map((s) => s.package))],
    required: required.has(group),
    consequence: GROUP_CONSEQUENCE[group],
    fix: fixForGroup(group, assetsDir),
  }));
}

/** Renders a report for the log and `rackside agent` start-up: one block per missing group, with its fix. */
export function formatBootAssetReport(report: BootAssetReport): string {
  if (report.missing.length === 0) return `boot assets: all ${report.found.length} found`;
  const lines = [`boot assets: ${report.found.length} found, ${report.missing.reduce((n, m) => n + m.names.length, 0)} missing`];
  for (const m of report.missing) {
    lines.push(`${m.required ? 'MISSING (required)' : 'missing (optional)'}: ${m.names.join(', ')} from ${m.packages.join(', ')} — ${m.consequence}. Fix:`);
    lines.push(...m.fix.split('\n').map((l) => `    ${l}`));
  }
  return lines.join('\n');
}
