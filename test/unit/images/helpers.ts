/**
 * @module Shared helpers of the images tests: finding host tools with the
 * RACKSIDE_REQUIRE_INTEGRATION rule (missing tool → skip with a reason, or fail when required),
 * running commands and scratch directories.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
