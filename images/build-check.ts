/**
 * @module Whether a ramdisk build on disk is still the one its inputs would give now: the
 * manifest (manifest.ts) names every input with its version or sha256, and
 * {@link staleReasons} compares that with what a build now would use (build-inputs.ts). An
 * input that cannot be known now (no apt lists on an offline head node) is not a reason: the
 * build on disk is kept rather than replaced by one that would fail.
 * @pure
 */
import type { ManifestFile, ManifestOrigin, RamdiskManifest } from './manifest.js';

/** An input as a build now would take it; `unknown` when it cannot be told without fetching. */
export type ExpectedOrigin =
  | { kind: 'debian'; package: string; version: string }
  | { kind: 'file'; path: string; sha256: string }
  | { kind: 'unknown'; why: string };

/** What a build started now would be made of. */
export interface ExpectedBuildInputs {
  format: 'initrd' | 'iso';
  /** The Debian architecture wanted (absent: not checked); a manifest without one is amd64. */
  arch?: string;
  agentVersion: string;
  kernel: ExpectedOrigin;
  busybox: ExpectedOrigin;
  /** The in-ramdisk agent's files as the initramfs holds them (path in the archive, sha256). */
  agentFiles: readonly ManifestFile[];
  /** ISO only: the kernel command line of its boot entries. */
  isoKernelCommandLine?: string;
}

function describeOrigin(origin: ManifestOrigin): string {
  return origin.kind === 'debian' ? `${origin.package} ${origin.version}` : origin.path;
}

function originStale(name: string, built: ManifestOrigin, builtSha256: string, expected: ExpectedOrigin): string | undefined {
  switch (expected.kind) {
    case 'unknown':
      return undefined;
    case 'debian':
      if (built.kind === 'debian' && built.package === expected.package && built.version === expected.version) return undefined;
      return `${name}: built from ${describeOrigin(built)}, now ${expected.package} ${expected.version}`;
    case 'file':
      if (built.kind === 'file' && built.path === expected.path && builtSha256 === expected.sha256) return undefined;
      return built.kind === 'file' && built.path === expected.path ? `${name}: ${expected.path} changed` : `${name}: built from ${describeOrigin(built)}, now ${expected.path}`;
  }
}

function filesKey(files: readonly ManifestFile[]): string {
  return JSON.stringify([...files].map((f) => [f.path, f.sha256]).sort());
}

/**
 * The reasons the build described by `manifest` is not what `expected` would build (empty: it
 * is current). An `iso` build serves an `initrd` need too (it holds the same kernel and initrd).
 */
export function staleReasons(manifest: RamdiskManifest, expected: ExpectedBuildInputs): string[] {
  const reasons: string[] = [];
  if (expected.format === 'iso' && manifest.format !== 'iso') reasons.push('a virtual-media host needs the ISO, and the build has none');
  if (expected.arch !== undefined && (manifest.architecture ?? 'amd64') !== expected.arch) reasons.push(`architecture: built for ${manifest.architecture ?? 'amd64'}, wanted ${expected.arch}`);
  if (manifest.agentVersion !== expected.agentVersion) reasons.push(`agent version: built for ${manifest.agentVersion}, this agent is ${expected.agentVersion}`);
  const kernel = originStale('kernel', manifest.inputs.kernel.origin, manifest.inputs.kernel.vmlinuzSha256, expected.kernel);
  if (kernel !== undefined) reasons.push(kernel);
  const busybox = originStale('busybox', manifest.inputs.busybox.origin, manifest.inputs.busybox.sha256, expected.busybox);
  if (busybox !== undefined) reasons.push(busybox);
  if (filesKey(manifest.inputs.agentFiles) !== filesKey(expected.agentFiles)) reasons.push('the in-ramdisk agent scripts changed');
  if (expected.format === 'iso' && manifest.iso !== undefined && expected.isoKernelCommandLine !== undefined && manifest.iso.kernelCommandLine !== expected.isoKernelCommandLine) {
    reasons.push(`ISO kernel command line: built with "${manifest.iso.kernelCommandLine}", now "${expected.isoKernelCommandLine}"`);
  }
  return reasons;
}
