/**
 * @module Which boot HTTP mounts are served over TFTP too. rackside's GRUB configs (Secure Boot
 * and arm64 hosts, which chain shim → GRUB over TFTP) load `/ramdisk/vmlinuz` and
 * `/ramdisk/initrd` from the same TFTP server, so the `ramdisk` mount is handed to the TFTP
 * server's prefix mounts (bootsvc/tftp: streamed from disk block by block through the same
 * realpath jail as its roots). Only the mounts named here — never OS images or config drives,
 * which carry a host's secrets and are fetched by the ramdisk over HTTP.
 * @pure
 */

/** Mount prefixes that GRUB may fetch over TFTP. */
export const TFTP_MOUNT_PREFIXES: readonly string[] = ['ramdisk'];

/**
 * Returns the subset of boot HTTP's `mounts` (prefix → directory) that the TFTP server serves:
 * the prefixes in {@link TFTP_MOUNT_PREFIXES} present in `httpMounts`, nothing else.
 */
export function tftpMountsOf(httpMounts: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const prefix of TFTP_MOUNT_PREFIXES) {
    const dir = httpMounts[prefix];
    if (dir !== undefined) out[prefix] = dir;
  }
  return out;
}
