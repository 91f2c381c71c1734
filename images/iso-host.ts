/**
 * @module Per-host data for the shared rackside ISO without a rebuild. Kernel arguments cannot
 * be changed per host inside one ISO, so the ISO carries a zero-filled slot file
 * (`/boot/host.img`, loaded as a second initrd by both boot menus) whose byte range in the image
 * the builder records in the manifest. A host's ISO is the base ISO with that range replaced by
 * the host overlay cpio (url, token, network data), zero-padded: ISO 9660 keeps no checksum of
 * file data, and the kernel skips zero bytes between initramfs archives
 * (`Documentation/driver-api/early-userspace/buffer-format.rst`). The HTTP server that serves
 * virtual media can splice the overlay in while streaming the base ISO, so no per-host file is
 * ever written; {@link patchIsoChunk} does that for one chunk.
 * @pure
 */

/** Where the host overlay slot lies in the base ISO, in bytes. */
export interface HostOverlaySlot {
  offsetBytes: number;
  sizeBytes: number;
}

/** Thrown when an overlay does not fit the slot or the slot is malformed. */
export class HostIsoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostIsoError';
  }
}

/** Returns `slot` after checking it starts on a 2048-byte ISO sector, has a positive size and fits a safe integer range. */
export function validateHostOverlaySlot(slot: HostOverlaySlot): HostOverlaySlot {
  if (!Number.isSafeInteger(slot.offsetBytes) || slot.offsetBytes <= 0 || slot.offsetBytes % 2048 !== 0) {
    throw new HostIsoError(`host overlay slot offset ${slot.offsetBytes} must be a positive multiple of 2048`);
  }
  if (!Number.isSafeInteger(slot.sizeBytes) || slot.sizeBytes <= 0) throw new HostIsoError(`host overlay slot size ${slot.sizeBytes} must be positive`);
  return slot;
}

/** Throws {@link HostIsoError} when `overlay` is larger than the slot. */
export function assertOverlayFits(slot: HostOverlaySlot, overlay: Uint8Array): void {
  validateHostOverlaySlot(slot);
  if (overlay.length > slot.sizeBytes) {
    throw new HostIsoError(`host overlay is ${overlay.length} bytes but the ISO's slot holds ${slot.sizeBytes}; rebuild the ISO with a larger hostOverlaySlotBytes`);
  }
}

/**
 * Returns the bytes of the host ISO at `[chunkOffset, chunkOffset + chunk.length)`, given the base
 * ISO's bytes there: inside the slot the overlay (then zeros) replaces them, elsewhere the chunk
 * is returned unchanged (the same object when the ranges do not meet).
 */
export function patchIsoChunk(chunk: Uint8Array, chunkOffset: number, slot: HostOverlaySlot, overlay: Uint8Array): Uint8Array {
  assertOverlayFits(slot, overlay);
  const start = Math.max(chunkOffset, slot.offsetBytes);
  const end = Math.min(chunkOffset + chunk.length, slot.offsetBytes + slot.sizeBytes);
  if (start >= end) return chunk;
  const out = new Uint8Array(chunk);
  out.fill(0, start - chunkOffset, end - chunkOffset);
  const overlayStart = start - slot.offsetBytes;
  const overlayEnd = Math.min(end - slot.offsetBytes, overlay.length);
  if (overlayEnd > overlayStart) out.set(overlay.subarray(overlayStart, overlayEnd), start - chunkOffset);
  return out;
}
