/**
 * @module Image checksum rules for the OS image cache, as metal3's `Image.GetChecksum` and
 * Ironic apply them: an `oci://` image must have no checksum (checked first, so also for
 * live-iso); a `live-iso` needs none; any other image needs one; `checksumType` md5, sha256 or
 * sha512 is used as given, empty or `auto` is detected from the value's length (Ironic's
 * behaviour); the checksum may be a URL to a checksum file (`sha256sum` or BSD `SHA256 (f) = h`
 * style), from which the entry for the image's file name is picked.
 * @pure
 */

/** Hash algorithms the cache verifies. */
export type ChecksumAlgorithm = 'md5' | 'sha256' | 'sha512';

/** metal3 `Image` fields the cache needs. */
export interface ImageSpec {
  url: string;
  checksum?: string;
  checksumType?: string;
  /** metal3 format: raw, qcow2, vdi, vmdk, live-iso; absent: detected from the content. */
  format?: string;
}

/** How to verify an image. */
export type ChecksumPlan =
  | { kind: 'none'; reason: 'live-iso' }
  | { kind: 'value'; algorithm: ChecksumAlgorithm; value: string }
  | { kind: 'url'; algorithm: ChecksumAlgorithm | 'auto'; url: string };

/** Thrown for a checksum that breaks the rules, or a checksum file without the image's entry. */
export class ChecksumError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChecksumError';
  }
}

const hexLength: Record<ChecksumAlgorithm, number> = { md5: 32, sha256: 64, sha512: 128 };

/** Returns the algorithm whose hex digest has the length of `value`, or throws {@link ChecksumError}. */
export function detectChecksumAlgorithm(value: string): ChecksumAlgorithm {
  const v = value.trim();
  if (!/^[0-9a-fA-F]+$/.test(v)) throw new ChecksumError(`checksum ${JSON.stringify(value)} is not a hex digest`);
  const found = (Object.keys(hexLength) as ChecksumAlgorithm[]).find((a) => hexLength[a] === v.length);
  if (found === undefined) throw new ChecksumError(`cannot tell the algorithm of a ${v.length}-digit checksum (md5: 32, sha256: 64, sha512: 128)`);
  return found;
}

/** Returns true for metal3's OCI image references (`oci://…`, case-insensitive). */
export function isOciImage(url: string): boolean {
  return url.toLowerCase().startsWith('oci://');
}

/**
 * Returns how to verify `image` under the upstream rules; throws {@link ChecksumError} for an OCI
 * image with a checksum, a normal image without one, an unsupported type, or a value that does
 * not fit its type.
 */
export function planChecksum(image: ImageSpec): ChecksumPlan {
  const checksum = (image.checksum ?? '').trim();
  if (isOciImage(image.url)) {
    if (checksum !== '') throw new ChecksumError('checksum is not supported for OCI images (the digest is part of the reference)');
    throw new ChecksumError('oci:// images are not supported by the image cache');
  }
  if (image.format === 'live-iso') return { kind: 'none', reason: 'live-iso' };
  if (checksum === '') throw new ChecksumError('checksum is required for normal images');
  const type = (image.checksumType ?? '').trim();
  if (!['', 'auto', 'md5', 'sha256', 'sha512'].includes(type)) {
    throw new ChecksumError(`checksumType ${JSON.stringify(type)} is not supported; use md5, sha256, sha512 or auto`);
  }
  if (/^(https?|file):\/\//i.test(checksum)) return { kind: 'url', algorithm: type === '' || type === 'auto' ? 'auto' : (type as ChecksumAlgorithm), url: checksum };
  const algorithm = type === '' || type === 'auto' ? detectChecksumAlgorithm(checksum) : (type as ChecksumAlgorithm);
  if (!new RegExp(`^[0-9a-fA-F]{${hexLength[algorithm]}}$`).test(checksum)) {
    throw new ChecksumError(`checksum must be ${hexLength[algorithm]} hex digits for ${algorithm}, got ${checksum.length} characters`);
  }
  return { kind: 'value', algorithm, value: checksum.toLowerCase() };
}

/** Returns the last path segment of a URL (without query or fragment), URL-decoded. */
export function imageFileName(url: string): string {
  const path = url.replace(/[?#].*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * Picks the digest of `fileName` from a checksum file: GNU lines `HASH  name` / `HASH *name`
 * (a leading `./` or directory is ignored), BSD lines `ALGO (name) = HASH`; a file holding a
 * single bare digest applies to any image. Throws {@link ChecksumError} when no entry matches.
 */
export function parseChecksumFile(text: string, fileName: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const bare = lines.filter((l) => /^[0-9a-fA-F]{32,128}$/.test(l));
  if (lines.length === 1 && bare.length === 1 && bare[0] !== undefined) return bare[0].toLowerCase();
  const base = (n: string): string => n.slice(n.lastIndexOf('/') + 1);
  for (const l of lines) {
    const gnu = /^([0-9a-fA-F]{32,128})\s+\*?(.+)$/.exec(l);
    if (gnu?.[1] !== undefined && gnu[2] !== undefined && base(gnu[2].trim()) === fileName) return gnu[1].toLowerCase();
    const bsd = /^[A-Za-z0-9-]+\s*\((.+)\)\s*=\s*([0-9a-fA-F]{32,128})$/.exec(l);
    if (bsd?.[1] !== undefined && bsd[2] !== undefined && base(bsd[1]) === fileName) return bsd[2].toLowerCase();
  }
  throw new ChecksumError(`the checksum file has no entry for ${fileName}`);
}
