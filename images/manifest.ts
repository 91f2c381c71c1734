/**
 * @module The ramdisk build manifest (`manifest.json`): every input with its version and
 * sha256, every output with its sha256 and size, and what optional modules and tools were
 * missing. It holds no wall-clock time (only `SOURCE_DATE_EPOCH`), so the same inputs give the
 * same manifest byte for byte. The builder writes it last: its presence marks a complete build.
 * @pure
 */

/** Provenance of an input: a Debian package (name, version, .deb sha256) or a configured file. */
export type ManifestOrigin =
  | { kind: 'debian'; package: string; version: string; debSha256: string }
  | { kind: 'file'; path: string };

/** A file inside the ramdisk with its checksum. */
export interface ManifestFile {
  path: string;
  sha256: string;
}

/** A host tool copied into the ramdisk, with the Debian package it came from when known. */
export interface ManifestTool extends ManifestFile {
  name: string;
  package?: { name: string; version: string };
  libraries: ManifestFile[];
}

/** An artifact written to the output directory. */
export interface ManifestOutput {
  name: string;
  sha256: string;
  sizeBytes: number;
}

/** What the ISO build added (`format: 'iso'`). */
export interface ManifestIso {
  /** Boot loader files with their role (isolinux-bin, ldlinux-c32, isohybrid-mbr, grub-efi, shim-efi). */
  bootLoaders: { role: string; sha256: string; origin: ManifestOrigin }[];
  /** Byte range of `/boot/host.img` in `rackside.iso`, where a host's overlay is written. */
  hostOverlaySlot: { path: string; offsetBytes: number; sizeBytes: number };
  kernelCommandLine: string;
  volumeId: string;
}

/** The content of manifest.json. */
export interface RamdiskManifest {
  schema: 'rackside.ramdisk/v1';
  /** 'initrd': vmlinuz + initrd; 'iso': the same plus `rackside.iso`. */
  format: 'initrd' | 'iso';
  /** The Debian architecture built for (`amd64`, `arm64`); absent in manifests written before it was recorded, which are amd64. */
  architecture?: string;
  agentVersion: string;
  sourceDateEpoch: number;
  compression: 'gzip' | 'zstd' | 'none';
  inputs: {
    kernel: { release: string; vmlinuzSha256: string; origin: ManifestOrigin };
    busybox: { sha256: string; applets: number; origin: ManifestOrigin };
    agentFiles: ManifestFile[];
    /** In load order. */
    modules: (ManifestFile & { name: string })[];
    tools: ManifestTool[];
  };
  builtinModules: string[];
  missing: { modules: string[]; tools: { name: string; reason: string }[] };
  outputs: ManifestOutput[];
  iso?: ManifestIso;
}

/** Thrown by {@link decodeManifest} for text that is not a rackside ramdisk manifest. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/** Renders the manifest as pretty JSON with a trailing newline; equal manifests render to equal bytes. */
export function encodeManifest(manifest: RamdiskManifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

const sha256Pattern = /^[0-9a-f]{64}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses manifest.json, checking the schema tag and the outputs list (names, sha256 and
 * sizes); throws {@link ManifestError} naming the first wrong field.
 */
export function decodeManifest(text: string): RamdiskManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`manifest is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(parsed) || parsed.schema !== 'rackside.ramdisk/v1') throw new ManifestError('manifest schema must be "rackside.ramdisk/v1"');
  if (!isRecord(parsed.inputs) || !isRecord(parsed.missing)) throw new ManifestError('manifest needs inputs and missing');
  const outputs = parsed.outputs;
  if (!Array.isArray(outputs) || outputs.length === 0) throw new ManifestError('manifest outputs must be a non-empty list');
  for (const [i, o] of outputs.entries()) {
    if (!isRecord(o) || typeof o.name !== 'string' || typeof o.sha256 !== 'string' || !sha256Pattern.test(o.sha256)) {
      throw new ManifestError(`outputs[${i}] needs a name and a lowercase hex sha256`);
    }
    if (typeof o.sizeBytes !== 'number' || !Number.isSafeInteger(o.sizeBytes) || o.sizeBytes < 0) {
      throw new ManifestError(`outputs[${i}].sizeBytes must be a non-negative integer`);
    }
  }
  if (parsed.format !== 'initrd' && parsed.format !== 'iso') throw new ManifestError('manifest format must be "initrd" or "iso"');
  if (parsed.format === 'iso') {
    const slot = isRecord(parsed.iso) ? parsed.iso.hostOverlaySlot : undefined;
    if (!isRecord(slot) || !Number.isSafeInteger(slot.offsetBytes) || !Number.isSafeInteger(slot.sizeBytes)) {
      throw new ManifestError('an iso manifest needs iso.hostOverlaySlot with integer offsetBytes and sizeBytes');
    }
  }
  return parsed as unknown as RamdiskManifest;
}
