/**
 * @module One shared pace for the body bytes boot HTTP sends (the agent's `governor.httpMbps`):
 * every file response asks {@link BytePacer.pace} before it hands a chunk to its socket, and the
 * chunks of all responses go out one after another at the configured rate, in the order they
 * asked (a virtual "link free at" time moved on by each chunk's bytes / rate: a token bucket
 * holding one chunk). So the boot HTTP server never sends faster than the budget — whatever the
 * boot governor estimated — by more than one chunk (≤ 512 KiB, send-file.ts) in any interval,
 * and no response starves: a slow client only delays its own next chunk.
 */
import { performance } from 'node:perf_hooks';

/** Paces bytes to a rate (see the module comment). */
export class BytePacer {
  #freeAtMs = -Infinity;
  #waits = 0;
  #waitedMs = 0;

  /** `bytesPerSecond` > 0; `nowMs` is a monotonic clock (tests pass their own). */
  constructor(readonly bytesPerSecond: number, private readonly nowMs: () => number = () => performance.now()) {
    if (!(Number.isFinite(bytesPerSecond) && bytesPerSecond > 0)) throw new RangeError(`bytes per second must be a number > 0, got ${String(bytesPerSecond)}`);
  }

  /** How long a caller asking now for `bytes` waits before sending them, and books its slot. */
  book(bytes: number): number {
    const now = this.nowMs();
    const start = Math.max(now, this.#freeAtMs);
    this.#freeAtMs = start + (Math.max(0, bytes) * 1000) / this.bytesPerSecond;
    return start - now;
  }

  /** Resolves when `bytes` may be sent (at once when the pace allows). */
  async pace(bytes: number): Promise<void> {
    const waitMs = this.book(bytes);
    if (waitMs < 1) return;
    this.#waits += 1;
    this.#waitedMs += waitMs;
    await new Promise<void>((resolve) => setTimeout(resolve, waitMs));
  }

  /** Chunks that waited, and the total wait (ms). */
  stats(): { waits: number; waitedMs: number } {
    return { waits: this.#waits, waitedMs: this.#waitedMs };
  }
}
