/** The problems of a config that must not decode (agent/config.ts `ConfigError`). */
import assert from 'node:assert/strict';
import { ConfigError, decodeConfig, type ConfigProblem } from '../../agent/config.js';

/** The problems `decodeConfig(input, defaults)` reports; fails the test when it decodes. */
export function configProblems(input: unknown, defaults: { agentId: string } = { agentId: 'rack-a' }): ConfigProblem[] {
  try {
    decodeConfig(input, defaults);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}
