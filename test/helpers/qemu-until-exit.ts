/** A QEMU guest run until it powers itself off (a ramdisk selftest), for the images boot tests. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What {@link runQemuUntilExit} saw: whether the guest exited before the timeout, its serial log (plus QEMU's stderr), the run's seconds. */
export interface QemuRun {
  exited: boolean;
  serial: string;
  seconds: number;
}

/**
 * Runs `binary` (`qemu-system-x86_64`, `qemu-system-aarch64`) headless with `-no-reboot` and the
 * serial console in `serialLog`, until it exits or `timeoutMs` passes; kills it by PID at the end.
 */
export async function runQemuUntilExit(binary: string, args: readonly string[], serialLog: string, timeoutMs: number): Promise<QemuRun> {
  const started = Date.now();
  const child = spawn(binary, ['-nodefaults', '-display', 'none', '-no-reboot', '-serial', `file:${serialLog}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let timer: NodeJS.Timeout | undefined;
  try {
    const exited = await new Promise<boolean>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => { resolve(true); });
      timer = setTimeout(() => { resolve(false); }, timeoutMs);
    });
    const serial = `${readFileSync(serialLog, 'utf8')}${stderr === '' ? '' : `\n[qemu stderr] ${stderr}`}`;
    return { exited, serial, seconds: (Date.now() - started) / 1000 };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }
}
