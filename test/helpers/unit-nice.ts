/**
 * @module The nice value the shipped systemd unit starts the agent at (`Nice=` in
 * systemd/rackside.service), for tests and benchmarks that run the agent as the unit does: its
 * event loop above normal priority, its bulk threads back at normal (native/thread_priority.h),
 * its background work below (images/image-convert.ts).
 */
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The shipped unit file. */
export const UNIT_PATH = new URL('../../../systemd/rackside.service', import.meta.url).pathname;

/** The unit's `Nice=` (0 when it sets none). */
export function unitNice(unitText = readFileSync(UNIT_PATH, 'utf8')): number {
  const value = /^Nice=(-?\d+)\s*$/m.exec(unitText)?.[1];
  return value === undefined ? 0 : Number(value);
}

/**
 * `command args…` started at the unit's nice value, as systemd starts the service: through
 * nice(1), which execs it (same process ID). Lowering a nice value needs root (CAP_SYS_NICE); without
 * it nice(1) warns and runs the command at the caller's value.
 */
export function atUnitNice(command: string, args: readonly string[]): [string, string[]] {
  return ['nice', ['-n', String(unitNice() - getPriority(0)), command, ...args]];
}

/**
 * Puts this process's main thread at the unit's nice value (threads it starts afterwards begin
 * there too, as under systemd) when permitted; returns the main thread's nice value afterwards.
 * Under RACKSIDE_REQUIRE_INTEGRATION=1 not being permitted is an error: the case would go untested.
 */
export function runMainThreadAtUnitNice(): number {
  try {
    setPriority(0, unitNice());
  } catch (err) {
    if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(`cannot run at the unit's nice value ${String(unitNice())} (needs root)`, { cause: err });
  }
  return getPriority(0);
}
