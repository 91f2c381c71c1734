/**
 * @module A codec for EDK2's non-volatile variable store as OVMF ships it (`OVMF_VARS*.fd`): the
 * flash image the firmware's variable driver reads at every start, so the lab's BMC can change
 * what the firmware finds at the next power-on (a boot option, `BootNext`, `SecureBootEnable`).
 *
 * Layout (edk2 MdePkg PiFirmwareVolume.h and MdeModulePkg Guid/VariableFormat.h):
 * - EFI_FIRMWARE_VOLUME_HEADER (PI spec vol. 3 §3.2.1): ZeroVector[16], FileSystemGuid,
 *   FvLength u64 @32, Signature `_FVH` @40, Attributes u32, HeaderLength u16 @48, Checksum u16
 *   @50 (the 16-bit words of the header sum to 0), ExtHeaderOffset, Reserved, Revision, then the
 *   block map ({NumBlocks u32, Length u32}… ending in {0, 0}).
 * - VARIABLE_STORE_HEADER at HeaderLength: Signature GUID (gEfiAuthenticatedVariableGuid for
 *   the authenticated format OVMF uses), Size u32 (from the store header's start), Format u8
 *   (0x5A = formatted), State u8 (0xFE = healthy), 6 reserved bytes: 28 bytes.
 * - AUTHENTICATED_VARIABLE_HEADER (60 bytes, packed): StartId u16 0x55AA, State u8, Reserved,
 *   Attributes u32, MonotonicCount u64, TimeStamp EFI_TIME (16), PubKeyIndex u32, NameSize u32,
 *   DataSize u32, VendorGuid; then the UTF-16LE name (NUL included) and the data, no padding
 *   between them on x86 (ALIGNMENT 1); the next header starts 4-byte aligned (HEADER_ALIGNMENT).
 *   The store ends at the first header whose StartId is not 0x55AA (erased flash is 0xFF).
 * - State is flash-style: bits are only cleared. VAR_ADDED 0x3F is live, clearing
 *   VAR_IN_DELETED_TRANSITION (0x01) marks a copy being replaced, clearing VAR_DELETED (0x02)
 *   a dead copy. Changing a variable appends a new copy and marks the old one deleted, as the
 *   variable driver does.
 *
 * Only non-authenticated variables are written (MonotonicCount, TimeStamp and PubKeyIndex zero):
 * `Boot####`, `BootNext` and `SecureBootEnable` are of that kind. Nothing outside the variable
 * store (the fault-tolerant-write areas after it) is touched.
 * @pure
 */
import { encodeEfiGuid } from '../../../agent/boot/efi-signature-list.js';

/** A variable's vendor GUID in its registry form (`8be4df61-93ca-11d2-aa0d-00e098032b8c`). */
export type EfiGuid = string;

/** EFI_GLOBAL_VARIABLE (UEFI 2.10 §3.3): Boot####, BootNext, BootOrder, SecureBoot … */
export const EFI_GLOBAL_VARIABLE: EfiGuid = '8be4df61-93ca-11d2-aa0d-00e098032b8c';
/** gEfiSecureBootEnableDisableGuid (edk2 AuthenticatedVariableFormat.h): `SecureBootEnable`. */
export const SECURE_BOOT_ENABLE_GUID: EfiGuid = 'f0a30bc7-af08-4556-99c4-001009c93a44';
/** gEfiAuthenticatedVariableGuid: the signature of an authenticated variable store. */
export const AUTHENTICATED_VARIABLE_STORE_GUID: EfiGuid = 'aaf32c78-947b-439a-a180-2e144ec37792';

/** Variable attributes (UEFI 2.10 §8.2). */
export const EFI_VARIABLE = { NON_VOLATILE: 0x1, BOOTSERVICE_ACCESS: 0x2, RUNTIME_ACCESS: 0x4, AUTHENTICATED_WRITE: 0x10, TIME_BASED_AUTHENTICATED_WRITE: 0x20 } as const;

const FVH_SIGNATURE = 0x4856465f; // '_FVH' little-endian
const STORE_HEADER_BYTES = 28;
const VAR_HEADER_BYTES = 60;
const START_ID = 0x55aa;
const VAR_ADDED = 0x3f;
const VAR_IN_DELETED_TRANSITION = 0x01;
const VAR_DELETED = 0x02;

/** Thrown for a file that is not an EDK2 authenticated variable store, or one that is full. */
export class VarStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VarStoreError';
  }
}

/** One variable record in the store (live or not). */
export interface EfiVariable {
  readonly name: string;
  readonly guid: EfiGuid;
  readonly attributes: number;
  readonly data: Uint8Array;
  /** The raw State byte. */
  readonly state: number;
  /** Whether this copy is the variable's current value. */
  readonly live: boolean;
  /** Offset of the record's header in the file. */
  readonly offset: number;
}

/** A parsed store: where the records are and where free space starts. */
export interface VarStore {
  /** Offset of the VARIABLE_STORE_HEADER. */
  readonly storeOffset: number;
  /** Offset just past the store (header offset + its Size). */
  readonly storeEnd: number;
  /** Every record, oldest first. */
  readonly records: readonly EfiVariable[];
  /** Offset of the first free (erased) byte, 4-byte aligned. */
  readonly freeOffset: number;
}

/** Decodes a GUID from its 16 on-disk bytes (first three fields little-endian). */
export function decodeGuid(bytes: Uint8Array, at = 0): EfiGuid {
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, 16);
  const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
  const tail = [...bytes.subarray(at + 8, at + 16)].map((b) => hex(b, 2)).join('');
  return `${hex(v.getUint32(0, true), 8)}-${hex(v.getUint16(4, true), 4)}-${hex(v.getUint16(6, true), 4)}-${tail.slice(0, 4)}-${tail.slice(4)}`;
}

/** Encodes a GUID into its 16 on-disk bytes (agent/boot/efi-signature-list.ts's encoder, the one rackside ships). */
export function encodeGuid(guid: EfiGuid): Uint8Array {
  try {
    return encodeEfiGuid(guid);
  } catch (err) {
    throw new VarStoreError(err instanceof Error ? err.message : String(err));
  }
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const align4 = (n: number): number => (n + 3) & ~3;

/** Checks the firmware volume header (signature, length, checksum); returns its HeaderLength. */
function checkVolumeHeader(fd: Uint8Array): number {
  if (fd.length < 72) throw new VarStoreError(`${fd.length} bytes is too small for a firmware volume`);
  const v = view(fd);
  if (v.getUint32(40, true) !== FVH_SIGNATURE) throw new VarStoreError('no _FVH signature at offset 40: not an EDK2 firmware volume');
  const fvLength = Number(v.getBigUint64(32, true));
  if (fvLength > fd.length) throw new VarStoreError(`FvLength ${fvLength} exceeds the file's ${fd.length} bytes`);
  const headerLength = v.getUint16(48, true);
  if (headerLength < 56 || headerLength % 2 !== 0 || headerLength + STORE_HEADER_BYTES > fd.length) throw new VarStoreError(`bad HeaderLength ${headerLength}`);
  let sum = 0;
  for (let i = 0; i < headerLength; i += 2) sum = (sum + v.getUint16(i, true)) & 0xffff;
  if (sum !== 0) throw new VarStoreError(`firmware volume header checksum does not sum to 0 (0x${sum.toString(16)})`);
  return headerLength;
}

function decodeName(fd: Uint8Array, at: number, size: number): string {
  const units: number[] = [];
  const v = view(fd);
  for (let i = 0; i + 1 < size; i += 2) {
    const u = v.getUint16(at + i, true);
    if (u === 0) break;
    units.push(u);
  }
  return String.fromCharCode(...units);
}

/** Parses the store of an OVMF variable file; throws {@link VarStoreError} for anything else. */
export function parseVarStore(fd: Uint8Array): VarStore {
  const storeOffset = checkVolumeHeader(fd);
  const v = view(fd);
  const signature = decodeGuid(fd, storeOffset);
  if (signature !== AUTHENTICATED_VARIABLE_STORE_GUID) throw new VarStoreError(`variable store signature ${signature} is not gEfiAuthenticatedVariableGuid`);
  const size = v.getUint32(storeOffset + 16, true);
  const storeEnd = storeOffset + size;
  if (storeEnd > fd.length) throw new VarStoreError(`variable store Size ${size} runs past the file`);
  if (fd[storeOffset + 20] !== 0x5a || fd[storeOffset + 21] !== 0xfe) throw new VarStoreError('variable store is not formatted and healthy (Format 0x5A, State 0xFE)');
  const raw: Omit<EfiVariable, 'live'>[] = [];
  let at = align4(storeOffset + STORE_HEADER_BYTES);
  while (at + VAR_HEADER_BYTES <= storeEnd && v.getUint16(at, true) === START_ID) {
    const nameSize = v.getUint32(at + 36, true);
    const dataSize = v.getUint32(at + 40, true);
    const nameAt = at + VAR_HEADER_BYTES;
    const end = nameAt + nameSize + dataSize;
    if (end > storeEnd) throw new VarStoreError(`variable at 0x${at.toString(16)} runs past the store`);
    raw.push({
      name: decodeName(fd, nameAt, nameSize), guid: decodeGuid(fd, at + 44), attributes: v.getUint32(at + 4, true),
      data: fd.slice(nameAt + nameSize, end), state: fd[at + 2] ?? 0, offset: at,
    });
    at = align4(end);
  }
  const records = raw.map((r): EfiVariable => {
    // VAR_ADDED is live; a copy in deleted transition still is while no newer live copy exists.
    const added = r.state === VAR_ADDED;
    const transition = r.state === (VAR_ADDED & ~VAR_IN_DELETED_TRANSITION);
    const newer = raw.some((o) => o.offset > r.offset && o.state === VAR_ADDED && o.name === r.name && o.guid === r.guid);
    return { ...r, live: added || (transition && !newer) };
  });
  return { storeOffset, storeEnd, records, freeOffset: at };
}

/** The live variables of a store. */
export function liveVariables(fd: Uint8Array): EfiVariable[] {
  return parseVarStore(fd).records.filter((r) => r.live);
}

/** The live copy of `name` in `guid`, if any. */
export function findVariable(fd: Uint8Array, name: string, guid: EfiGuid): EfiVariable | undefined {
  return liveVariables(fd).find((r) => r.name === name && r.guid === guid);
}

/** What {@link setVariable} writes. */
export interface NewVariable {
  readonly name: string;
  readonly guid: EfiGuid;
  readonly attributes: number;
  readonly data: Uint8Array;
}

/** `text` as UTF-16LE code units with a terminating NUL (UEFI's CHAR16 strings). */
export function encodeUtf16z(text: string): Uint8Array {
  const out = new Uint8Array((text.length + 1) * 2);
  const v = view(out);
  for (let i = 0; i < text.length; i += 1) v.setUint16(i * 2, text.charCodeAt(i), true);
  return out;
}

function encodeRecord(variable: NewVariable): Uint8Array {
  const name = encodeUtf16z(variable.name);
  const nameSize = name.length;
  const out = new Uint8Array(VAR_HEADER_BYTES + nameSize + variable.data.length);
  const v = view(out);
  v.setUint16(0, START_ID, true);
  out[2] = VAR_ADDED;
  v.setUint32(4, variable.attributes, true);
  // MonotonicCount, TimeStamp and PubKeyIndex stay zero: not an authenticated variable.
  v.setUint32(36, nameSize, true);
  v.setUint32(40, variable.data.length, true);
  out.set(encodeGuid(variable.guid), 44);
  out.set(name, VAR_HEADER_BYTES);
  out.set(variable.data, VAR_HEADER_BYTES + nameSize);
  return out;
}

/**
 * A copy of `fd` where `variable` has the given value: the new record is appended at the free
 * offset, then the previous live copy (if any) is marked deleted. Empty `data` deletes the
 * variable (UEFI SetVariable semantics) without appending. Authenticated variables (attributes
 * with an AUTHENTICATED bit) are refused; a store without room throws {@link VarStoreError}.
 */
export function setVariable(fd: Uint8Array, variable: NewVariable): Uint8Array {
  if ((variable.attributes & (EFI_VARIABLE.AUTHENTICATED_WRITE | EFI_VARIABLE.TIME_BASED_AUTHENTICATED_WRITE)) !== 0) {
    throw new VarStoreError(`${variable.name}: authenticated variables cannot be written without their signer`);
  }
  const store = parseVarStore(fd);
  const out = fd.slice();
  if (variable.data.length > 0) {
    const record = encodeRecord(variable);
    if (store.freeOffset + record.length > store.storeEnd) {
      throw new VarStoreError(`the variable store is full: ${variable.name} needs ${record.length} bytes, ${Math.max(0, store.storeEnd - store.freeOffset)} are free`);
    }
    out.set(record, store.freeOffset);
  }
  for (const old of store.records) {
    if (old.live && old.name === variable.name && old.guid === variable.guid) out[old.offset + 2] = old.state & ~VAR_DELETED;
  }
  return out;
}
