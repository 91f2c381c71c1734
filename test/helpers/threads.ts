/**
 * @module This process's threads as Linux shows them (`/proc/self/task/<tid>/comm` and `stat`):
 * for tests of the addons' threads, which name themselves (`rackside-tftp`, `rackside-send`) and
 * lower their own priority (native/thread_priority.h).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { statFieldsAfterName } from '../lab/pxe-sim/boot-server.js';

/** One thread of this process: its ID, name and nice value. */
export interface ThreadInfo {
  tid: number;
  name: string;
  nice: number;
}

/** The nice value in a `/proc/.../stat` line: proc(5) field 19. */
function niceOf(stat: string): number {
  return Number(statFieldsAfterName(stat)[16]);
}

/** Every thread of this process (those that exit while it reads are left out). */
export function ownThreads(): ThreadInfo[] {
  const out: ThreadInfo[] = [];
  for (const entry of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${entry}/comm`, 'utf8').trim();
      out.push({ tid: Number(entry), name, nice: niceOf(readFileSync(`/proc/self/task/${entry}/stat`, 'utf8')) });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** The main thread's nice value (the process's own, which new threads start with). */
export function mainThreadNice(): number {
  return niceOf(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'));
}
