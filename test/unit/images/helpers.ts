/**
 * @module Shared helpers of the images tests: finding host tools with the
 * RACKSIDE_REQUIRE_INTEGRATION rule (missing tool → skip with a reason, or fail when required),
 * running commands and scratch directories.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** True when integration prerequisites must be present (CI): a missing tool fails the test. */
export const integrationRequired = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';

/** Returns the absolute path of `tool` on PATH, or undefined. */
export function findTool(tool: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  return r.status === 0 && path !== '' ? path : undefined;
}

/**
 * Returns true when every tool exists; otherwise skips the test with a reason naming the Debian
 * package (or throws when RACKSIDE_REQUIRE_INTEGRATION=1).
 */
export function requireTools(t: TestContext, tools: Record<string, string>): boolean {
  const missing = Object.entries(tools).filter(([tool]) => findTool(tool) === undefined);
  if (missing.length === 0) return true;
  const reason = `missing ${missing.map(([tool, pkg]) => `${tool} (apt-get install ${pkg})`).join(', ')}`;
  if (integrationRequired) throw new Error(reason);
  t.skip(reason);
  return false;
}

/** Runs a command synchronously and returns stdout as a string; throws with stderr on failure. */
export function run(cmd: string, args: string[], options: { cwd?: string; input?: Buffer } = {}): string {
  return execFileSync(cmd, args, { cwd: options.cwd, input: options.input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Creates a scratch directory removed by the returned cleanup function. */
export function scratchDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `rackside-${prefix}-`));
  return { dir, cleanup: () => { rmSync(dir, { recursive: true, force: true }); } };
}

/** `bytes` of deterministic pseudo-random data from `seed` (a 32-bit LCG, Numerical Recipes' constants). */
export function pseudoRandom(bytes: number, seed: number): Buffer {
  const data = Buffer.alloc(bytes);
  let x = seed >>> 0;
  for (let i = 0; i + 4 <= bytes; i += 4) {
    x = (x * 1664525 + 1013904223) >>> 0;
    data.writeUInt32LE(x, i);
  }
  return data;
}

/**
 * A small bootable-looking raw disk image at `path`: pseudo-random content under a partition
 * table (`sfdisk`) with one partition at sector 2048; returns the file's bytes.
 */
export function makeDiskImage(path: string, bytes: number, options: { label?: 'dos' | 'gpt'; seed?: number; type?: string } = {}): Buffer {
  writeFileSync(path, pseudoRandom(bytes, options.seed ?? 1));
  const type = options.type === undefined ? '' : `, type=${options.type}`;
  run('sfdisk', ['-q', path], { input: Buffer.from(`label: ${options.label ?? 'dos'}\nstart=2048, size=4096${type}\n`) });
  return readFileSync(path);
}

/** `length` bytes of `path` from `offset`. */
export function readRange(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, offset);
    return buf;
  } finally {
    closeSync(fd);
  }
}
