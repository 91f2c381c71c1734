/**
 * @module Runs the reference client `ipmitool -I lanplus` (Debian `ipmitool`) against a lab BMC,
 * for cross-checking the native driver, and the integration-test rule for missing tools.
 */
import { execFile, spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';

/** Where ipmitool connects. */
export interface IpmitoolTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
}

/** Result of one ipmitool run. */
export interface IpmitoolResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ipmitool -I lanplus -C <suite> … <args>`; never throws for a non-zero exit. */
export function runIpmitool(target: IpmitoolTarget, args: readonly string[], cipherSuite = 3): Promise<IpmitoolResult> {
  const argv = ['-I', 'lanplus', '-C', String(cipherSuite), '-N', '1', '-R', '2', '-H', target.host, '-p', String(target.port),
    '-U', target.username, '-P', target.password, ...args];
  return new Promise((resolve) => {
    execFile('ipmitool', argv, { encoding: 'utf8', timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Like {@link runIpmitool} but throws (with stderr) on failure and returns stdout. */
export async function ipmitool(target: IpmitoolTarget, args: readonly string[], cipherSuite = 3): Promise<string> {
  const r = await runIpmitool(target, args, cipherSuite);
  if (r.code !== 0) throw new Error(`ipmitool ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** True when integration prerequisites must be present: a missing tool then fails the test. */
export const integrationRequired = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';

/** The IPMI lab tools that are not on PATH, with their Debian packages. */
export function missingIpmiTools(): string[] {
  return [['ipmi_sim', 'openipmi'], ['ipmitool', 'ipmitool']]
    .filter(([tool]) => spawnSync('sh', ['-c', `command -v ${tool ?? ''}`]).status !== 0)
    .map(([tool, pkg]) => `${tool ?? ''} (apt-get install ${pkg ?? ''})`);
}

/** Returns true when the IPMI tools exist; else skips `t` with the reason, or throws when required. */
export function requireIpmiTools(t: TestContext): boolean {
  const missing = missingIpmiTools();
  if (missing.length === 0) return true;
  const reason = `missing ${missing.join(', ')}`;
  if (integrationRequired) throw new Error(`${reason} (RACKSIDE_REQUIRE_INTEGRATION=1)`);
  t.skip(reason);
  return false;
}
