/**
 * @module libfaketime for fault tests: the environment that makes a child process's wall clock
 * follow an offset written to a file at run time (`FAKETIME_TIMESTAMP_FILE`, re-read on every
 * call with `FAKETIME_NO_CACHE=1`), while its monotonic clock runs on (`DONT_FAKE_MONOTONIC=1`:
 * Node's timers and `performance.now` stay real). The machine's clock is never touched.
 */
import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { skipOrFail } from '../helpers/integration.js';

/** Where Debian's `faketime` package (libfaketime) puts the multi-threaded preload library. */
const CANDIDATES = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/faketime/libfaketimeMT.so.1'];

/** A wall-clock offset a test moves, and the environment of the processes that follow it. */
export interface FakeClock {
  /** Environment to add to a child's (LD_PRELOAD and libfaketime's settings). */
  readonly env: Readonly<Record<string, string>>;
  /** The offset now, in milliseconds. */
  readonly offsetMs: number;
  /** Sets the child's wall clock to the real one plus `offsetMs` (applies at once: the file is replaced atomically). */
  set(offsetMs: number): Promise<void>;
}

function spec(offsetMs: number): string {
  // libfaketime's relative form: "+N" / "-N" seconds (fractions allowed).
  return `${offsetMs < 0 ? '-' : '+'}${Math.abs(offsetMs) / 1000}`;
}

/**
 * Returns a fake clock with its timestamp file in `dir`, or undefined (test skipped) when
 * libfaketime is not installed — a failure under RACKSIDE_REQUIRE_INTEGRATION=1.
 */
export async function fakeClock(t: TestContext, dir: string): Promise<FakeClock | undefined> {
  const lib = CANDIDATES.find((p) => existsSync(p));
  if (lib === undefined) {
    const reason = 'libfaketime is not installed (Debian package faketime; scripts/install-test-deps.sh installs it)';
    skipOrFail(t, reason);
    return undefined;
  }
  const file = join(dir, 'faketime');
  let offsetMs = 0;
  await writeFile(file, `${spec(0)}\n`);
  return {
    env: { LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1', DONT_FAKE_MONOTONIC: '1' },
    get offsetMs() {
      return offsetMs;
    },
    async set(next) {
      offsetMs = next;
      await writeFile(`${file}.new`, `${spec(next)}\n`);
      await rename(`${file}.new`, file);
    },
  };
}
