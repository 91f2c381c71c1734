/**
 * @module What the virtual rack needs on a Debian 12 machine, checked before anything starts so
 * a newcomer reads one list of `apt-get install` words instead of a stack trace: root (network
 * namespaces, DHCP on port 67), iproute2, QEMU with Debian's iPXE option ROMs, OpenIPMI's
 * `ipmi_sim` for IPMI hosts, OVMF for UEFI hosts, and apt/dpkg/kmod for the ramdisk build
 * (which downloads — never installs — the kernel and busybox-static packages with
 * `apt-get download`, so apt's package lists must be present), and curl for virtual-media hosts
 * (their BMC downloads the ISO inside the rack namespace).
 */
import { existsSync } from 'node:fs';
import { findTool } from '../../helpers/netns.js';
import { OVMF_CODE, VIRTIO_NET_ROM } from './qemu-guest.js';

/** One missing prerequisite and the Debian package that provides it. */
export interface MissingPrerequisite {
  what: string;
  debianPackage: string;
}

/** The outcome of {@link checkRackPrerequisites}. */
export interface RackPrerequisites {
  root: boolean;
  missing: MissingPrerequisite[];
  /** True when nothing is missing. */
  ok: boolean;
}

type Need = 'ipmi' | 'uefi' | 'virtualMedia';

const TOOLS: readonly { tool: string; debianPackage: string; when?: Need }[] = [
  { tool: 'ip', debianPackage: 'iproute2' },
  { tool: 'ss', debianPackage: 'iproute2' },
  { tool: 'qemu-system-x86_64', debianPackage: 'qemu-system-x86' },
  { tool: 'ipmi_sim', debianPackage: 'openipmi', when: 'ipmi' },
  { tool: 'apt-get', debianPackage: 'apt' },
  { tool: 'apt-cache', debianPackage: 'apt' },
  { tool: 'dpkg-deb', debianPackage: 'dpkg' },
  { tool: 'depmod', debianPackage: 'kmod' },
  { tool: 'curl', debianPackage: 'curl', when: 'virtualMedia' },
];

const FILES: readonly { path: string; debianPackage: string; when?: Need }[] = [
  { path: VIRTIO_NET_ROM, debianPackage: 'ipxe-qemu' },
  { path: OVMF_CODE, debianPackage: 'ovmf', when: 'uefi' },
];

/** Checks root and every tool and file the rack needs for hosts with these BMCs, firmware and boot paths. */
export function checkRackPrerequisites(needs: { ipmi: boolean; uefi: boolean; virtualMedia?: boolean }): RackPrerequisites {
  const wanted = (when: Need | undefined): boolean => when === undefined || needs[when] === true;
  const missing: MissingPrerequisite[] = [
    ...TOOLS.filter((t) => wanted(t.when) && findTool(t.tool) === undefined).map((t) => ({ what: t.tool, debianPackage: t.debianPackage })),
    ...FILES.filter((f) => wanted(f.when) && !existsSync(f.path)).map((f) => ({ what: f.path, debianPackage: f.debianPackage })),
  ];
  const root = process.getuid?.() === 0;
  return { root, missing, ok: root && missing.length === 0 };
}

/** One paragraph saying what is missing and the exact command that installs it. */
export function formatRackPrerequisites(result: RackPrerequisites): string {
  const lines: string[] = [];
  if (!result.root) lines.push('- root: the virtual rack creates a network namespace and serves DHCP on port 67 (run it with sudo)');
  for (const m of result.missing) lines.push(`- ${m.what} (Debian package ${m.debianPackage})`);
  const packages = [...new Set(result.missing.map((m) => m.debianPackage))].sort();
  if (packages.length > 0) lines.push(`install with: sudo apt-get install ${packages.join(' ')}`);
  return lines.join('\n');
}
