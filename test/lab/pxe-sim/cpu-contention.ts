/**
 * @module How much of the machine a storm left to the server under test, read from `/proc`: the
 * machine's CPU time by kind (`/proc/stat`'s first line, proc(5): user, nice, system, idle,
 * iowait, irq, softirq, steal in clock ticks) and how often a thread was switched out
 * (`/proc/<pid>/task/<tid>/status`: `voluntary_ctxt_switches`, it waited for something;
 * `nonvoluntary_ctxt_switches`, it was preempted while it still had work).
 *
 * The event loop's delay is wall-clock time: on this lab's 2 shared vCPUs the agent's main thread
 * waits behind the simulated clients, its own sender threads and softirq work, and behind the
 * hypervisor itself (steal: the vCPU was runnable and the host ran something else). The bench
 * prints these next to the delay so a reading says how much of it the agent could have helped.
 */
import { readFileSync } from 'node:fs';

/** The machine's CPU time so far, in clock ticks of all CPUs together. */
export interface MachineCpu {
  /** user + nice + system + irq + softirq. */
  readonly busy: number;
  /** Of `busy`: softirq, the kernel's packet processing (on this lab's veths, most of it). */
  readonly softirq: number;
  /** idle + iowait. */
  readonly idle: number;
  /** Time the hypervisor ran something else while a vCPU was runnable. */
  readonly steal: number;
}

/** What the machine did between two {@link machineCpu} readings, as shares of all CPU time. */
export interface MachineCpuShares {
  busy: number;
  softirq: number;
  idle: number;
  steal: number;
}

/** Reads `/proc/stat`'s aggregate `cpu` line; zeros when it cannot be read (not Linux). */
export function machineCpu(): MachineCpu {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
    return { busy: user + nice + system + irq + softirq, softirq, idle: idle + iowait, steal };
  } catch {
    return { busy: 0, softirq: 0, idle: 0, steal: 0 };
  }
}

/** The shares of busy (and of it softirq), idle and stolen time from `before` to `after` (zeros when no time passed). */
export function machineCpuShares(before: MachineCpu, after: MachineCpu): MachineCpuShares {
  const busy = after.busy - before.busy;
  // proc(5)/proc.rst: the iowait field of /proc/stat "will decrease in certain conditions", and
  // with it idle + iowait: a reading that went backwards counts as no idle time, not negative.
  const idle = Math.max(0, after.idle - before.idle);
  const steal = after.steal - before.steal;
  const total = busy + idle + steal;
  if (total <= 0) return { busy: 0, softirq: 0, idle: 0, steal: 0 };
  return { busy: busy / total, softirq: (after.softirq - before.softirq) / total, idle: idle / total, steal: steal / total };
}

/** Context switches of one thread so far. */
export interface ThreadSwitches {
  readonly voluntary: number;
  readonly involuntary: number;
}

/** The context switches of thread `tid` of process `pid` (its main thread by default); undefined once it exited. */
export function threadSwitches(pid: number, tid = pid): ThreadSwitches | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') };
  } catch {
    return undefined;
  }
}
