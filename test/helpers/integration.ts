/**
 * @module Gatekeeping for tests with real peers: a missing tool or missing root skips the
 * test with the reason — unless RACKSIDE_REQUIRE_INTEGRATION=1 (CI), where it fails it.
 */
import { execFileSync } from 'node:child_process';
import type { TestContext } from 'node:test';

/** True when real peers are mandatory (CI). */
export const integrationRequired = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';

/** Whether `tool` is on PATH. */
export function hasTool(tool: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v "$1"`, 'sh', tool], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks the tools (and root when asked). Returns true when the test may go on; otherwise
 * skips it with the reason, or throws when integration is required.
 */
export function requireTools(t: TestContext, tools: readonly string[], options: { root?: boolean } = {}): boolean {
  const missing = tools.filter((tool) => !hasTool(tool));
  const problems = [...(missing.length > 0 ? [`missing ${missing.join(', ')} (scripts/install-test-deps.sh installs them)`] : [])];
  if (options.root === true && process.getuid?.() !== 0) problems.push('needs root');
  if (problems.length === 0) return true;
  skipOrFail(t, problems.join('; '));
  return false;
}

/** Skips the test with `reason`, or throws when integration is required (CI). */
export function skipOrFail(t: TestContext, reason: string): void {
  if (integrationRequired) throw new Error(`RACKSIDE_REQUIRE_INTEGRATION=1: ${reason}`);
  t.skip(reason);
}

/**
 * The environment of an agent child process a test or bench starts: the agent's background
 * ramdisk build off (RACKSIDE_RAMDISK_BUILD=off; the tests bring their own ramdisk or a
 * simulated one, docs/test-peers.md, "The ramdisk in tests") unless the caller's environment
 * says otherwise.
 */
export function agentChildEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, RACKSIDE_RAMDISK_BUILD: process.env.RACKSIDE_RAMDISK_BUILD ?? 'off', ...extra };
}
