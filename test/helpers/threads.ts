/**
 * @module This process's threads as Linux shows them (`/proc/self/task/<tid>/comm` and `stat`):
 * for tests of the addons' threads, which name themselves (`rackside-tftp`, `rackside-send`) and
 * put themselves under SCHED_BATCH at normal priority (native/thread_priority.h).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { statFieldsAfterName } from '../lab/pxe-sim/boot-server.js';

/** SCHED_BATCH, as proc(5)'s `policy` field shows it (sched.h). */
export const SCHED_BATCH = 3;

/** One thread of this process: its ID, name, nice value and scheduling policy. */
export interface ThreadInfo {
  tid: number;
  name: string;
  nice: number;
  /** proc(5) field 41: 0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE, … */
  policy: number;
}

/** The nice value in a `/proc/.../stat` line: proc(5) field 19. */
function niceOf(stat: string): number {
  return Number(statFieldsAfterName(stat)[16]);
}

/** The scheduling policy in a `/proc/.../stat` line: proc(5) field 41. */
function policyOf(stat: string): number {
  return Number(statFieldsAfterName(stat)[38]);
}

/** Every thread of process `pid` (those that exit while it reads are left out). */
export function threadsOf(pid: number | 'self'): ThreadInfo[] {
  const out: ThreadInfo[] = [];
  const tasks = `/proc/${String(pid)}/task`;
  for (const entry of readdirSync(tasks)) {
    try {
      const name = readFileSync(`${tasks}/${entry}/comm`, 'utf8').trim();
      const stat = readFileSync(`${tasks}/${entry}/stat`, 'utf8');
      out.push({ tid: Number(entry), name, nice: niceOf(stat), policy: policyOf(stat) });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Every thread of this process. */
export function ownThreads(): ThreadInfo[] {
  return threadsOf('self');
}

/** The main thread's nice value (the process's own, which new threads start with). */
export function mainThreadNice(): number {
  return niceOf(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'));
}
