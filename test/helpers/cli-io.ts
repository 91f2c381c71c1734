/**
 * @module A {@link CliIo} for CLI tests that talk to a real API server: stdout and stderr are
 * captured, the clock is fixed, no files are read and no agent runs; `overrides` replace any part
 * (e.g. `writeFile` to capture exported files).
 */
import type { CliIo } from '../../agent/cli/io.js';

/** The io and what the command printed so far. */
export interface CapturedCliIo {
  io: CliIo;
  out: () => string;
  err: () => string;
}

/** An io against `server` at the fixed time `nowMs`. */
export function captureCliIo(server: string, nowMs: number, overrides: Partial<CliIo> = {}): CapturedCliIo {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => { out += t; },
    stderr: (t) => { err += t; },
    env: { RACKSIDE_SERVER: server },
    readStdin: () => Promise.resolve(''),
    readFile: () => Promise.reject(new Error('no files')),
    fetch: globalThis.fetch,
    now: () => nowMs,
    sleep: () => Promise.resolve(),
    clientVersion: 'test',
    runAgent: () => Promise.resolve(0),
    ...overrides,
  };
  return { io, out: () => out, err: () => err };
}
