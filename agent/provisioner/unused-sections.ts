/**
 * @module The config sections a provisioner does not use (docs/architecture.md, "Provisioner
 * backend"): with `provisioner: fixture` or `demo`, the sections of the local provisioner
 * (boot services, images, BMC sessions, boot pacing) start nothing. The agent logs a warning
 * and records a `ConfigSectionUnused` event per section at start (agent/main.ts), and
 * `rackside doctor` warns with the same sentence (agent/doctor/checks-config.ts).
 * @pure
 */
import type { Config, ProvisionerKind } from '../config.js';

/** Sections only the local provisioner reads: boot services, images, BMC sessions, boot pacing. */
const LOCAL_ONLY_SECTIONS = ['provisioning', 'dhcp', 'dhcp6', 'discovery', 'tftp', 'http', 'images', 'bmc', 'governor'] as const;

/** Sections of the config file that `provisioner` does not use. */
const UNUSED_SECTIONS: Readonly<Record<ProvisionerKind, readonly string[]>> = {
  local: [],
  fixture: LOCAL_ONLY_SECTIONS,
  demo: LOCAL_ONLY_SECTIONS,
};

/** A config section the chosen provisioner ignores, and why. */
export interface UnusedSection {
  section: string;
  message: string;
}

/**
 * The sections present in the config file (`config.sections`) that the configured provisioner
 * does not use, each with the sentence the agent logs. Pure.
 */
export function unusedConfigSections(config: Pick<Config, 'provisioner' | 'sections'>): UnusedSection[] {
  const unused = new Set(UNUSED_SECTIONS[config.provisioner]);
  return (config.sections ?? []).filter((section) => unused.has(section)).map((section) => ({
    section,
    message: `config section "${section}" is ignored: the ${config.provisioner} provisioner runs no boot services, BMC sessions or image cache (only provisioner: local does)`,
  }));
}
