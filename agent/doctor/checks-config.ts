/**
 * @module `rackside doctor`'s word on config sections the chosen provisioner does not use: one
 * warning per section, with the sentence the agent logs at start and records as a
 * `ConfigSectionUnused` event (agent/provisioner/unused-sections.ts) — a warning, not a failure,
 * as the agent starts with them (docs/architecture.md, "Provisioner backend").
 * @pure
 */
import type { Config } from '../config.js';
import { unusedConfigSections } from '../provisioner/unused-sections.js';
import type { CheckResult } from './types.js';

/** One `warn` line per config section `config.provisioner` ignores (none with `provisioner: local`). */
export function checkUnusedSections(config: Config): CheckResult[] {
  return unusedConfigSections(config).map(({ section, message }) => ({
    check: `config section ${section}`,
    status: 'warn',
    detail: message,
    fix: `remove the "${section}" section, or set "provisioner: local" to run boot services`,
  }));
}
