/**
 * @module What a storm's server under test looks like to the bench — rackside (rackside-server.ts)
 * or dnsmasq + nginx (reference-server.ts) — and the CPU accounting both share: user + system
 * seconds of a process and its children from `/proc/<pid>/stat` (fields 14 and 15, in clock
 * ticks of 1/100 s) and `/proc/<pid>/task/<pid>/children`.
 */
import { readFileSync } from 'node:fs';

/** A running boot server of a storm. */
export interface BootServer {
  /** Short name for tables: `rackside`, `dnsmasq+nginx(1)`, `dnsmasq+nginx(auto)`. */
  readonly name: string;
  /** One line on what runs and how it is configured. */
  readonly description: string;
  /** CPU seconds (user + system) its processes used so far (for rackside, the agent only). */
  cpuSeconds(): number;
  /** Stops every process it started (by PID) and waits for them. */
  stop(): Promise<void>;
}

/** Clock ticks per second of `/proc/<pid>/stat` (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter((s) => /^\d+$/.test(s)).map(Number);
  } catch {
    return [];
  }
}

/**
 * The fields of a `/proc/.../stat` line from field 3 (`state`) on: index `n - 3` is proc(5)'s
 * field n. The command name (field 2) may contain spaces, so counting starts after its closing
 * parenthesis.
 */
export function statFieldsAfterName(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function ticksOf(pid: number): number {
  try {
    const fields = statFieldsAfterName(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  } catch {
    return 0; // exited
  }
}

/** CPU seconds of `pid` and, when `withChildren`, its children (one level: nginx's workers). */
export function processCpuSeconds(pid: number, withChildren = false): number {
  const pids = withChildren ? [pid, ...childrenOf(pid)] : [pid];
  return pids.reduce((sum, p) => sum + ticksOf(p), 0) / TICKS_PER_SECOND;
}
