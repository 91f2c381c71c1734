/**
 * @module A stand-in for the built rackside ISO (`<images.cacheDir>/ramdisk/rackside.iso` and its
 * `manifest.json`), so virtual-media hosts can be driven without building the ramdisk: 64 KiB of
 * a byte pattern with the host-overlay slot zero-filled as the builder leaves it. Boot HTTP
 * serves it with each host's overlay (url, token) spliced into the slot, which
 * {@link tokenFromHostIso} reads back as the real ramdisk reads `/etc/rackside/token`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeCpio } from '../../images/cpio.js';

/** Where the host overlay goes in the stand-in ISO. */
export const FAKE_ISO_SLOT = { offsetBytes: 32 * 1024, sizeBytes: 4096 } as const;

/** The stand-in ISO's bytes. */
export const FAKE_BASE_ISO: Buffer = (() => {
  const iso = Buffer.alloc(64 * 1024);
  for (let i = 0; i < iso.length; i += 1) iso[i] = (i * 7) & 0xff;
  iso.fill(0, FAKE_ISO_SLOT.offsetBytes, FAKE_ISO_SLOT.offsetBytes + FAKE_ISO_SLOT.sizeBytes);
  return iso;
})();

/** Its manifest (images/builder.ts shape), naming the slot. */
export const FAKE_ISO_MANIFEST = {
  schema: 'rackside.ramdisk/v1', format: 'iso', inputs: {}, missing: {},
  outputs: [{ name: 'rackside.iso', sha256: 'a'.repeat(64), sizeBytes: FAKE_BASE_ISO.length }],
  iso: { hostOverlaySlot: { path: '/boot/host.img', ...FAKE_ISO_SLOT } },
};

/** Writes the stand-in ISO and manifest into `ramdiskDir` (created when missing). */
export async function writeFakeRamdiskIso(ramdiskDir: string): Promise<void> {
  await mkdir(ramdiskDir, { recursive: true });
  await writeFile(join(ramdiskDir, 'rackside.iso'), FAKE_BASE_ISO);
  await writeFile(join(ramdiskDir, 'manifest.json'), JSON.stringify(FAKE_ISO_MANIFEST));
}

/** The files of the host overlay in a served stand-in ISO, by path (`etc/rackside/token` …). */
export function hostIsoFiles(iso: Uint8Array): Map<string, string> {
  const slot = iso.subarray(FAKE_ISO_SLOT.offsetBytes, FAKE_ISO_SLOT.offsetBytes + FAKE_ISO_SLOT.sizeBytes);
  const files = new Map<string, string>();
  for (const entry of decodeCpio(slot)) if (entry.type === 'file') files.set(entry.path, Buffer.from(entry.data).toString('utf8'));
  return files;
}

/** The ramdisk token in a served stand-in ISO, if its overlay has one. */
export function tokenFromHostIso(iso: Uint8Array): string | undefined {
  return hostIsoFiles(iso).get('etc/rackside/token')?.trim() || undefined;
}
