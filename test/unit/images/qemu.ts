/**
 * @module QEMU helpers of the images tests (TCG only: KVM does not work on the test machines):
 * run a guest until it powers off, a line appears in its serial log, or a timeout — then kill it
 * by PID; OVMF firmware arguments with a private copy of the variable store.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How a guest run ended. */
export interface QemuRun {
  /** True when QEMU exited by itself (the guest powered off, with -no-reboot also on reboot). */
  exited: boolean;
  /** True when `until` matched the serial log. */
  matched: boolean;
  serial: string;
}

/**
 * Runs `qemu-system-x86_64 -nodefaults -display none -no-reboot -serial file:LOG ARGS` until it
 * exits, `until` matches the serial log (polled every 500 ms), or `timeoutMs`; then kills it by PID.
 */
export async function runQemu(args: string[], serialLog: string, options: { timeoutMs: number; until?: RegExp }): Promise<QemuRun> {
  const child = spawn('qemu-system-x86_64', ['-nodefaults', '-display', 'none', '-no-reboot', '-serial', `file:${serialLog}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const read = (): string => (existsSync(serialLog) ? readFileSync(serialLog, 'latin1') : '');
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  try {
    const outcome = await new Promise<'exited' | 'matched' | 'timeout'>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => {
        resolve('exited');
      });
      timer = setTimeout(() => {
        resolve('timeout');
      }, options.timeoutMs);
      if (options.until !== undefined) {
        const until = options.until;
        poll = setInterval(() => {
          if (until.test(read())) resolve('matched');
        }, 500);
      }
    });
    const serial = `${read()}${stderr === '' ? '' : `\n[qemu stderr] ${stderr}`}`;
    return { exited: outcome === 'exited', matched: outcome === 'matched' || (options.until?.test(serial) ?? false), serial };
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGKILL');
      await new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
    }
  }
}

/** OVMF code images shipped by Debian's `ovmf` package. */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OVMF_CODE_SECURE_BOOT = '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd';

/** Returns the pflash arguments for OVMF with a writable copy of the variable store in `dir`. */
export function ovmfArgs(dir: string, options: { secureBoot?: boolean } = {}): string[] {
  const vars = join(dir, options.secureBoot === true ? 'OVMF_VARS_4M.ms.fd' : 'OVMF_VARS_4M.fd');
  copyFileSync(join('/usr/share/OVMF', options.secureBoot === true ? 'OVMF_VARS_4M.ms.fd' : 'OVMF_VARS_4M.fd'), vars);
  const code = options.secureBoot === true ? OVMF_CODE_SECURE_BOOT : OVMF_CODE;
  return [
    '-machine', options.secureBoot === true ? 'q35,smm=on,graphics=off' : 'q35,graphics=off',
    ...(options.secureBoot === true ? ['-global', 'driver=cfi.pflash01,property=secure,value=on'] : []),
    '-drive', `if=pflash,format=raw,readonly=on,file=${code}`,
    '-drive', `if=pflash,format=raw,file=${vars}`,
  ];
}
