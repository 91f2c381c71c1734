/**
 * @module Positioned reads of a raw descriptor on libuv's pool, shared by the boot HTTP server
 * (send-file.ts) and the TFTP block source (tftp/file-source.ts): both serve descriptors held
 * by the open-file cache (http/open-file-cache.ts), which several requests read at once — so
 * every read names its position (pread) and none moves the descriptor's offset.
 */
import { read } from 'node:fs';

/** One positioned read: resolves with the bytes read (0 at end of file); rejects with the errno error. */
export function readAt(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (err, bytesRead) => {
      if (err === null) resolve(bytesRead);
      else reject(err);
    });
  });
}
