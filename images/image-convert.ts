/**
 * @module Image format detection and conversion to raw for the cache: the ramdisk streams raw
 * bytes onto the disk, so qcow2 (and vmdk, vdi) images are converted once on the head node with
 * `qemu-img convert` (Debian `qemu-utils`) in a child process, never on the event loop. Formats
 * are detected from the magic bytes (qcow2 `QFI\xfb`, VMDK `KDMV`, VDI's signature at 0x40), so
 * a wrong or missing `format` in the spec does not decide it.
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';

/**
 * Nice levels below normal priority at which `qemu-img convert` runs (and the hashing worker,
 * hash-worker.ts): the image cache's conversions and checksums are background work, so on a busy
 * head node they yield to the event loop and to the boot services' bulk threads
 * (native/thread_priority.h: SCHED_BATCH at normal priority) instead of competing with
 * a PXE storm's downloads as equals. On an idle head node they still get every cycle.
 */
export const CONVERT_NICE_STEPS = 10;

/**
 * Runs `pid` {@link CONVERT_NICE_STEPS} nice levels below normal priority, or below the calling
 * thread's nice value where that is lower still (an operator's Nice=10); an event loop raised
 * above normal (the unit's Nice=-5) does not raise its background work with it. `pid` 0: the
 * calling thread itself (Linux keeps the nice value per thread and `who` 0 is the caller,
 * setpriority(2) "BUGS"; so a worker lowers itself alone, never the event loop). Best effort: not
 * permitted or already gone, it runs at the agent's priority.
 */
export function runAsBackground(pid: number): void {
  try {
    setPriority(pid, backgroundNice(getPriority(0)));
  } catch {
    // keeps the agent's priority
  }
}

/** The nice value for background work started by a thread at `callerNice` (see {@link runAsBackground}). */
export function backgroundNice(callerNice: number): number {
  return Math.min(19, Math.max(0, callerNice) + CONVERT_NICE_STEPS);
}

/** On-disk formats the cache recognizes. */
export type DiskImageFormat = 'raw' | 'qcow2' | 'vmdk' | 'vdi' | 'iso';

/** Thrown when conversion fails or qemu-img is missing. */
export class ImageConvertError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ImageConvertError';
  }
}

/** Returns the format of a file from its first 36 KiB (ISO 9660 `CD001` at 0x8001). */
export async function detectImageFormat(path: string): Promise<DiskImageFormat> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(0x8006);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const b = head.subarray(0, bytesRead);
    if (b.subarray(0, 4).equals(Buffer.from([0x51, 0x46, 0x49, 0xfb]))) return 'qcow2';
    if (b.subarray(0, 4).toString('latin1') === 'KDMV') return 'vmdk';
    if (b.length >= 0x44 && b.readUInt32LE(0x40) === 0xbeda107f) return 'vdi';
    if (b.subarray(0x8001, 0x8006).toString('latin1') === 'CD001') return 'iso';
    return 'raw';
  } finally {
    await fh.close();
  }
}

/**
 * Converts `src` (of `format`) to a raw image at `dest` with `qemu-img convert -O raw`, at
 * {@link CONVERT_NICE_STEPS} nice levels below the agent; resolves when done. Throws {@link ImageConvertError} with qemu-img's message, or naming the package when
 * qemu-img is not installed.
 */
export function convertToRaw(src: string, format: Exclude<DiskImageFormat, 'raw' | 'iso'>, dest: string, qemuImg = 'qemu-img'): Promise<void> {
  return new Promise((resolve, reject) => {
    // -W: out-of-order writes; -m 8: coroutines; writes go to a new sparse file.
    const child = spawn(qemuImg, ['convert', '-q', '-W', '-m', '8', '-f', format, '-O', 'raw', src, dest], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (child.pid !== undefined) runAsBackground(child.pid);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      reject(new ImageConvertError(/ENOENT/.test(err.message) ? `${qemuImg} not found: apt-get install qemu-utils` : `${qemuImg} failed to start: ${err.message}`, { cause: err }));
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new ImageConvertError(`qemu-img convert of ${src} (${format}) failed (exit ${code ?? 'signal'}): ${stderr.trim()}`));
    });
  });
}
