/**
 * @module The agent's two clocks. Timestamps shown to people (event times, `lastUpdated`, status
 * pages) follow the wall clock, jumps included. Everything that measures a duration — ramdisk
 * operation timeouts and their tokens' expiry, the fast-track window, the soft power-off timeout,
 * power-sweep freshness, boot pacing, throughput — uses the steady clock: epoch milliseconds read
 * once from the wall clock when the process starts, then advanced by the monotonic clock. A wall
 * clock step while the agent runs (NTP correcting a bad RTC, an operator's `date -s`, a VM
 * resumed from a snapshot) therefore neither fires a timeout early (forward) nor holds it back
 * (backward). Steady values are epoch-like so they can be stored and compared after a restart;
 * a step taken while the agent was down applies to them once, when it starts again.
 *
 * bootsvc/steady-clock.ts anchors the process's steady clock; {@link createSteadyClock} makes
 * others (tests). {@link watchClockJumps} notices steps (the wall clock moving against the steady one) so the
 * agent can say so: a `ClockJumped` Warning event.
 */
import { steadyEpochMs } from '../bootsvc/index.js';

/** A clock of epoch milliseconds that advances with the monotonic clock (see the module comment). */
export interface SteadyClock {
  /** Steady epoch milliseconds. */
  nowMs(): number;
  /** Wall clock minus steady clock, in milliseconds: 0 at start, moved by every wall-clock step since. */
  wallOffsetMs(): number;
}

/** Creates a steady clock anchored on `wallMs()` now; the sources are injectable for tests. */
export function createSteadyClock(wallMs: () => number = Date.now, monotonicMs: () => number = () => performance.now()): SteadyClock {
  const startWallMs = wallMs();
  const startMonotonicMs = monotonicMs();
  const nowMs = (): number => startWallMs + (monotonicMs() - startMonotonicMs);
  return { nowMs, wallOffsetMs: () => wallMs() - nowMs() };
}

/**
 * The process's steady clock: bootsvc's (one anchor per process, so the DHCP server's lease
 * times and the agent's durations agree exactly).
 */
export const steadyClock: SteadyClock = { nowMs: steadyEpochMs, wallOffsetMs: () => Date.now() - steadyEpochMs() };

/** Steady epoch milliseconds of {@link steadyClock} (a plain function, for `nowMs` options). */
export const steadyNowMs = (): number => steadyClock.nowMs();

/** A wall-clock step seen by {@link watchClockJumps}. */
export interface ClockJump {
  /** How far the wall clock moved against the steady clock, in milliseconds (negative: backwards). */
  readonly jumpMs: number;
  /** The wall clock after the step. */
  readonly wallAfter: Date;
}

/** Options of {@link watchClockJumps}. */
export interface ClockJumpWatchOptions {
  readonly onJump: (jump: ClockJump) => void;
  readonly clock?: SteadyClock;
  /** How often the clocks are compared (default 2 s). */
  readonly intervalMs?: number;
  /** Smallest step reported (default 1 s: NTP slews far less, and steps only beyond 128 ms–1 s). */
  readonly thresholdMs?: number;
  readonly wallMs?: () => number;
}

/**
 * Compares the wall clock with the steady clock every `intervalMs` and calls `onJump` when their
 * difference moved by `thresholdMs` or more since the last look; returns the stop function.
 * The timer does not keep the process alive.
 */
export function watchClockJumps(options: ClockJumpWatchOptions): () => void {
  const clock = options.clock ?? steadyClock;
  const wallMs = options.wallMs ?? Date.now;
  const thresholdMs = options.thresholdMs ?? 1000;
  let lastOffsetMs = clock.wallOffsetMs();
  const timer = setInterval(() => {
    const offsetMs = clock.wallOffsetMs();
    const jumpMs = offsetMs - lastOffsetMs;
    if (Math.abs(jumpMs) < thresholdMs) return;
    lastOffsetMs = offsetMs;
    options.onJump({ jumpMs, wallAfter: new Date(wallMs()) });
  }, options.intervalMs ?? 2000);
  timer.unref();
  return () => { clearInterval(timer); };
}

/** `1 d 2 h`, `59 min 59 s`, `250 ms`: the two largest units, to the nearest second from 1 s on. */
function spell(ms: number): string {
  const abs = Math.abs(ms) < 1000 ? Math.abs(ms) : Math.round(Math.abs(ms) / 1000) * 1000;
  const parts: string[] = [];
  const units: [number, string][] = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']];
  let rest = abs;
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${name}`);
    rest -= n * size;
  }
  return parts.length === 0 ? `${abs} ms` : parts.slice(0, 2).join(' ');
}

/** The operator's sentence for a jump (the `ClockJumped` event's message). */
export function describeClockJump(jump: ClockJump): string {
  return `the wall clock jumped ${jump.jumpMs >= 0 ? 'forward' : 'back'} by ${spell(jump.jumpMs)} (now ${jump.wallAfter.toISOString()}): `
    + 'timeouts, ramdisk token and DHCP lease lifetimes run on the monotonic clock and did not move; event times follow the wall clock';
}
